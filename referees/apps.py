from __future__ import annotations

from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _


class RefereesConfig(AppConfig):
    name = "referees"
    verbose_name = _("Referees")
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Configure the Celery app in every Django process, so that tasks sent from the web
        # server use the configured broker. It is not imported by `sl5r/__init__.py`, which
        # must stay free of side effects (see there).
        # The live updates listen to the kernel's tournament_changed (referees/kernel/core.py),
        # which cannot import them: they sit at the top of the stack.
        import referees.live.events  # noqa: F401
        from referees.kernel.core import frame_signals_connect
        from referees.venue.backup_signals import backups_connect

        # At a venue, the backups follow the same signal (and the kernel's record_changed),
        # after the live updates: a change's event goes out before its backup is written.
        backups_connect()

        # Saved players, armies, turns and campaigns start a new order frame, whoever saved
        # them (referees/kernel/core.py, frame_row_saved).
        frame_signals_connect()
        import sl5r.celery  # noqa: F401
