"""Continuing a tournament on another laptop from a venue backup (``manage.py restore``).

``backup_restore`` checks the whole backup first (``referees.venue.backups.backup_read``) and the
setup it restores into (SQLite, the database not open in a running server), and changes
nothing on disk unless every check passes. Then it puts the database (the main file; any
``-wal`` and ``-shm`` of the one it replaces are moved aside with it, so that no old WAL is
replayed into the new file) and the secret key in place, each by a rename, keeping what was
there as ``…pre-restore-<time>``. Last, it brings the schema up to this code's migrations and
pauses every running clock with the time it had left at the moment of the backup, through
``clock_pause`` so the log says so (by "the restore"): the judge resumes when everyone is
ready. Each running tournament's log then says how old the backup was and lists the open
turn's orders it holds (issue 31), so that the judge asks only the Generals concerned; and
the venue address the backup's links carried becomes the last one this laptop knows, so
that ``make venue`` at another address warns that printed sheets carry the old one.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connections
from django.db.migrations.executor import MigrationExecutor

from referees.kernel.core import Actor, log_write, unit_of_work
from referees.models import Tournament
from referees.services import clock_pause
from referees.texts.log import log_context
from referees.texts.log_words import order_words
from referees.venue.backups import (
    SQLITE_ENGINE,
    BackupRefused,
    backup_list,
    backup_read,
    backups_suspended,
    database_in_use,
)
from sl5r.venue import LAST_SITE_FILE, SECRET_KEY_FILE
from strategic_map.models import Army, Turn
from strategic_map.selectors import campaign_open_turn, turn_current_orders

RESTORE = Actor(label="the restore")
"""Who paused the clocks, as the log shows it."""


@dataclass(frozen=True)
class OrderRestored:
    army: str
    text: str
    given_at: datetime


@dataclass(frozen=True)
class TournamentRestored:
    name: str
    phase: str
    turn: int | None
    paused: bool
    remaining: float | None
    """Seconds left on the paused clock; None without a clock."""
    orders: tuple[OrderRestored, ...] = ()
    """The open turn's orders the backup holds."""


@dataclass(frozen=True)
class RestoreReport:
    source: Path
    created_at: datetime
    reason: str
    database: Path
    secret_key: Path
    set_aside: tuple[Path, ...]
    """What was in place before, kept under a ``pre-restore`` name."""
    tournaments: tuple[TournamentRestored, ...]


def backup_latest(*, directory: Path) -> Path:
    """The newest backup in ``directory``; refused when there is none."""
    found = backup_list(directory=directory)
    if not found:
        raise BackupRefused(f"{directory}: no backup in this folder")
    return found[-1]


def backup_restore(*, source: Path, now: datetime | None = None) -> RestoreReport:
    """Replace this setup's database and secret key with a backup's; pause the clocks.

    ``source`` is a backup file, or a folder whose newest backup is taken. Raises
    ``BackupRefused`` (one line) with nothing changed on disk when the backup or the setup
    will not do.
    """
    database_settings = settings.DATABASES["default"]
    if database_settings["ENGINE"] != SQLITE_ENGINE:
        raise BackupRefused(
            "the database here is not the embedded SQLite one (DATABASE_URL): a venue backup"
            " restores only into a SQLite setup"
        )
    if source.is_dir():
        source = backup_latest(directory=source)
    database = Path(database_settings["NAME"]).resolve()
    key_file = Path(settings.SL5R_VENUE_DIR) / SECRET_KEY_FILE
    now = now or datetime.now(timezone.utc)
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S")

    with tempfile.TemporaryDirectory(prefix="sl5r-restore-") as workdir:
        contents = backup_read(source=source, workdir=Path(workdir))
        connections.close_all()
        if database_in_use(database):
            raise BackupRefused(
                f"the database {database} is in use: stop the server (and any clock or"
                " worker) on this laptop first"
            )
        database.parent.mkdir(parents=True, exist_ok=True)
        key_file.parent.mkdir(parents=True, exist_ok=True)
        incoming = database.with_name(f".{database.name}.restore-{os.getpid()}.tmp")
        key_incoming = key_file.with_name(f".{key_file.name}.restore-{os.getpid()}.tmp")
        try:
            shutil.copyfile(contents.database, incoming)
            _fsync(incoming)
            descriptor = os.open(key_incoming, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
                handle.write(contents.secret_key + "\n")
                handle.flush()
                os.fsync(handle.fileno())
            set_aside = _set_aside(database, key_file, stamp)
            os.replace(incoming, database)
            os.replace(key_incoming, key_file)
        finally:
            incoming.unlink(missing_ok=True)
            key_incoming.unlink(missing_ok=True)
        for folder in {database.parent, key_file.parent}:
            _fsync_directory(folder)

    _migrate_if_behind()
    tournaments = _pause_clocks(at=contents.manifest.created_at, now=now)
    if contents.manifest.site:
        site_file = Path(settings.SL5R_VENUE_DIR) / LAST_SITE_FILE
        site_file.write_text(contents.manifest.site + "\n", encoding="utf-8")
    return RestoreReport(
        source=source,
        created_at=contents.manifest.created_at,
        reason=contents.manifest.reason,
        database=database,
        secret_key=key_file,
        set_aside=set_aside,
        tournaments=tournaments,
    )


def _set_aside(database: Path, key_file: Path, stamp: str) -> tuple[Path, ...]:
    """Move the database being replaced (with its -wal, -shm) and the old key aside.

    The WAL files must go with their database: left beside the restored file, SQLite would
    replay the old database's last changes into it.
    """
    moved: list[Path] = []
    kept = database.with_name(f"{database.name}.pre-restore-{stamp}")
    for suffix in ("", "-wal", "-shm", "-journal"):
        current = Path(f"{database}{suffix}")
        if current.exists():
            target = Path(f"{kept}{suffix}")
            os.replace(current, target)
            moved.append(target)
    if moved and key_file.exists():
        # The key that signed that database's links and sessions; without a database (a
        # fresh clone) the key there signs nothing and is simply replaced.
        target = key_file.with_name(f"{key_file.name}.pre-restore-{stamp}")
        os.replace(key_file, target)
        moved.append(target)
    return tuple(moved)


def _migrate_if_behind() -> None:
    """A backup from an older version gets this code's migrations, as ``make venue`` would."""
    executor = MigrationExecutor(connections["default"])
    if executor.migration_plan(executor.loader.graph.leaf_nodes()):
        call_command("migrate", interactive=False, verbosity=0)


def _pause_clocks(*, at: datetime, now: datetime) -> tuple[TournamentRestored, ...]:
    """Pause every running clock at the backup's moment: the time it had left then; log
    how old the backup is and the open turn's orders it holds."""
    restored = []
    with backups_suspended():
        for tournament in Tournament.objects.select_related("campaign").order_by("id"):
            if (
                not tournament.paused
                and tournament.deadline is not None
                and tournament.phase not in (Tournament.Phase.SETUP, Tournament.Phase.FINISHED)
            ):
                tournament = clock_pause(tournament_id=tournament.pk, actor=RESTORE, now=at)
            turn = campaign_open_turn(tournament.campaign)
            orders: list[dict[str, Any]] = []
            if turn is not None:
                current = turn_current_orders(turn).values()
                armies = {a.pk: a.code for a in Army.objects.filter(campaign=tournament.campaign)}
                orders = [
                    {
                        "army": armies.get(order.army_id, "?"),
                        "kind": order.kind,
                        "path": list(order.path),
                        "reform": order.reform,
                        "given_at": order.created_at.isoformat(),
                    }
                    for order in sorted(current, key=lambda o: armies.get(o.army_id, ""))
                ]
            if tournament.phase != Tournament.Phase.SETUP:
                _restore_logged(tournament, turn=turn, orders=orders, at=at, now=now)
            restored.append(
                TournamentRestored(
                    name=tournament.name,
                    phase=str(tournament.phase),
                    turn=turn.number if turn is not None else None,
                    paused=tournament.paused,
                    remaining=tournament.paused_remaining,
                    orders=tuple(
                        OrderRestored(
                            army=o["army"],
                            text=order_words(o, log_context(tournament)),
                            given_at=datetime.fromisoformat(o["given_at"]),
                        )
                        for o in orders
                    ),
                )
            )
    return tuple(restored)


@unit_of_work()
def _restore_logged(
    tournament: Tournament,
    *,
    turn: Turn | None,
    orders: list[dict[str, Any]],
    at: datetime,
    now: datetime,
) -> None:
    log_write(
        tournament,
        actor=RESTORE,
        action="backup_restored",
        now=now,
        turn=turn.number if turn is not None else None,
        written_at=at.isoformat(),
        age=max(0.0, (now - at).total_seconds()),
        orders=orders,
    )


def _fsync(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


def _fsync_directory(directory: Path) -> None:
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)
