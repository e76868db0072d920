"""``manage.py restore FILE``: continue a tournament from a venue backup, on this laptop.

FILE is a backup written while a venue was served (``VENUE_BACKUP_DIR``, by default
``var/venue/backups``), or a folder of them (its newest is taken). The whole file is checked
first; a corrupt or foreign backup (or a PostgreSQL setup, or a database still open in a
running server) is refused with one line on standard error and exit status 2, and nothing on
disk is changed. Otherwise the database (``DATABASE_URL``) and the secret key
(``VENUE_DIR/secret_key``) are replaced, what was there is kept as ``…pre-restore-<time>``,
and every running clock is paused with the time it had left at the backup: the same join
links and judge sign-in work, and the judge resumes from the console. Then ``make venue``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from referees.venue.backups import BackupRefused
from referees.venue.restore import TournamentRestored, backup_restore


class Command(BaseCommand):
    help = (
        "Replace this laptop's database and secret key with a venue backup (FILE, or the "
        "newest in a folder), then pause every running clock for the judge to resume."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", metavar="FILE", help="a backup .zip, or a folder of them")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            report = backup_restore(source=Path(options["file"]).expanduser())
        except BackupRefused as refused:
            raise CommandError(str(refused), returncode=2) from refused
        written = report.created_at.strftime("%Y-%m-%d %H:%M:%S %Z")
        self.stdout.write(
            f"Restored {report.source.name} (written {written}, after {report.reason}) "
            f"into {report.database}"
        )
        age = (timezone.now() - report.created_at).total_seconds()
        self.stdout.write(f"The backup is {age:.0f} s old: what happened after it is not in it.")
        for tournament in report.tournaments:
            self.stdout.write(_line(tournament))
            if tournament.turn is not None and tournament.phase == "running":
                # Issue 31: the judge asks only the Generals whose order is missing or old.
                self.stdout.write(
                    f"  Turn {tournament.turn}'s orders in the backup"
                    f" ({len(tournament.orders)}; the console's log lists them too):"
                )
                for order in tournament.orders:
                    given = order.given_at.strftime("%H:%M:%S")
                    self.stdout.write(f"    {order.army}: {order.text} (given {given} UTC)")
        if report.set_aside:
            self.stdout.write(
                "What was here before is kept: " + ", ".join(p.name for p in report.set_aside)
            )
        self.stdout.write("Now run `make venue`; resume the clock from the judge console.")


def _line(tournament: TournamentRestored) -> str:
    turn = f"turn {tournament.turn}" if tournament.turn is not None else "no open turn"
    if tournament.paused and tournament.remaining is not None:
        minutes, seconds = divmod(round(tournament.remaining), 60)
        clock = f"paused ({minutes}:{seconds:02d} left)"
    else:
        clock = "no clock running"
    return f'"{tournament.name}": {tournament.phase}, {turn}, {clock}'
