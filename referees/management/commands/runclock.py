"""``manage.py runclock [--interval SECONDS] [--once]``: only the turn clock, in the foreground.

For operators who serve the site with ``serve --no-clock`` or with several web servers, and
want the clock as a process of its own. Any number of clocks may run at once: each step
happens exactly once whoever takes it. ``--once`` sweeps once and exits (for cron or a
health check).
"""

from __future__ import annotations

import signal
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from referees.clock_thread import CELERY, InProcessClock


class Command(BaseCommand):
    help = "Run the turn clock in the foreground: resolve due turns until stopped."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--interval",
            type=float,
            default=None,
            help="seconds between sweeps (default: SL5R_CLOCK_INTERVAL, 1.0)",
        )
        parser.add_argument("--once", action="store_true", help="sweep once and exit")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            clock = InProcessClock(interval=options["interval"])
        except ValueError as error:
            raise CommandError(f"--interval: {error}") from None
        if settings.SL5R_CLOCK == CELERY:
            self.stderr.write(
                "Note: SL5R_CLOCK=celery, so Celery beat resolves the turns too; "
                "both running is harmless (each step happens once)."
            )
        if options["once"]:
            steps = clock.sweep_once()
            if clock.failures:
                raise CommandError("the sweep failed (see the log)")
            self.stdout.write(f"{steps} step(s) taken.")
            return

        previous: dict[signal.Signals, Any] = {}

        def stop(signum: int, frame: FrameType | None) -> None:
            # Let a sweep in progress finish its transaction, then leave the loop; a second
            # signal gets the usual handling (CONTROL-C twice interrupts at once).
            clock.stop(timeout=0)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, stop)
        self.stdout.write(
            f"Turn clock running: sweeping every {clock.interval:g} s. Quit with CONTROL-C."
        )
        try:
            clock.run()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self.stdout.write("Turn clock stopped.")
