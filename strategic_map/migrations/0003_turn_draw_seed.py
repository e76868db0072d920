"""R11: every turn gets a secret draw seed when it opens; open turns get one now."""

import secrets

from django.db import migrations, models
from django.db.backends.base.schema import BaseDatabaseSchemaEditor
from django.db.migrations.state import StateApps


def seed_open_turns(apps: StateApps, schema_editor: BaseDatabaseSchemaEditor) -> None:
    # A turn resolved before this had its draws from the system's source: it keeps no seed,
    # as one given now would claim draws it never made.
    turn_model = apps.get_model("strategic_map", "Turn")
    for turn in turn_model.objects.filter(status="open", draw_seed=""):
        turn.draw_seed = secrets.token_hex(32)
        turn.save(update_fields=["draw_seed"])


class Migration(migrations.Migration):
    dependencies = [
        ("strategic_map", "0002_campaign"),
    ]

    operations = [
        migrations.AddField(
            model_name="turn",
            name="draw_seed",
            field=models.CharField(blank=True, default="", max_length=64, verbose_name="draw seed"),
        ),
        migrations.RunPython(seed_open_turns, migrations.RunPython.noop),
    ]
