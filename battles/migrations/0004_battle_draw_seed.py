import secrets

from django.db import migrations, models

import sl5r.rules.draws


def seeds_for_existing_tables(apps, schema_editor):  # type: ignore[no-untyped-def]
    # AddField gives every existing row the same default; each table needs its own seed.
    Battle = apps.get_model("battles", "Battle")
    for battle in Battle.objects.only("pk"):
        Battle.objects.filter(pk=battle.pk).update(draw_seed=secrets.token_hex(32))


class Migration(migrations.Migration):
    dependencies = [
        ("battles", "0003_proposals"),
    ]

    operations = [
        migrations.AddField(
            model_name="battle",
            name="draw_seed",
            field=models.CharField(
                default=sl5r.rules.draws.seed_new,
                editable=False,
                max_length=64,
                verbose_name="draw seed",
            ),
        ),
        migrations.RunPython(seeds_for_existing_tables, migrations.RunPython.noop),
    ]
