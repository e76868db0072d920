"""Venue backups: a consistent copy of the SQLite database and the secret key, one file each.

A laptop can die; the tournament must not. While a venue is served (``SL5R_BACKUP_DIR`` set,
SQLite the database), every change that moves the game on (a resolved turn, a judge's
correction, paper order, undo, the start …; ``referees.venue.backup_signals`` says which) is
followed, once committed, by a backup in that folder; every other acknowledged change (a
General's order, a battle table's count, an instruction) is in a backup within two seconds
(``backup_soon``: one backup at most every ``BACKUP_SOON_SECONDS`` while changes come, written
by a thread of its own so that no request waits for it). A backup is one zip holding

- ``manifest.json``: the app (``sl5r-referee``), the format version, when and why it was
  written, the migrations the copy has applied, each tournament's phase, turn and version,
  and the SHA-256 of the database copy;
- ``db.sqlite3``: the database, copied through SQLite's online backup API (a snapshot of
  what was committed, never a file copy of a live database, whose WAL may be half-written);
- ``secret_key``: the key that signs the join links and the judges' sessions.

A backup is written to a temporary file, synced and renamed, so a crash mid-write never
leaves half a file with a backup's name. Names sort by time (``sl5r-backup-<UTC time>-
<reason>.zip``); the newest ``SL5R_BACKUP_KEEP`` are kept, and besides them the newest
``SOON_KEEP`` of the frequent ones (reason ``changes``), which would otherwise push the
turns' backups out within a minute. A failed backup is logged in one
line and never fails the change that asked for it.

``backup_read`` checks a file the other way (every part, before anything is touched) for
``referees.venue.restore``, which puts it in place on another laptop.

The kernel does not call this module: ``referees.venue.backup_signals`` listens to the
kernel's signals and asks for the backups. So it sits above the services, beside the restore,
and imports nothing that changes a tournament.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import re
import shutil
import sqlite3
import tempfile
import threading
import time
import zipfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.migrations.loader import MigrationLoader

from referees.models import LogEntry, Tournament
from sl5r.public_url import site_url_current
from strategic_map.models import Campaign, Turn

log = logging.getLogger(__name__)

APP = "sl5r-referee"
"""What a manifest must name: a backup written by this program."""
FORMAT = 1
"""The layout of a backup file; a newer one is refused."""
PREFIX = "sl5r-backup-"
SUFFIX = ".zip"
MANIFEST = "manifest.json"
DATABASE_ENTRY = "db.sqlite3"
SECRET_KEY_ENTRY = "secret_key"
TEMPORARY_PREFIX = ".sl5r-backup-"
TEMPORARY_SUFFIX = ".tmp"
STALE_TEMPORARY_SECONDS = 3600
"""A temporary file this old was left by a crash (a backup takes well under a second)."""
SQLITE_ENGINE = "sl5r.serving.sqlite"

_WRITE_LOCK = threading.Lock()
"""One backup at a time in a process (the clock thread and the HTTP threads)."""
_last_fingerprint: dict[tuple[str, str], tuple[Any, ...]] = {}
"""What the last backup of each (database, folder) held, to skip one that would hold the same."""
_suspended = threading.local()

BACKUP_SOON_SECONDS = 1.8
"""The shortest gap between two frequent backups: with the write itself (tens of ms) a change
is in a backup within 2 s of its commit."""
SOON_REASON = "changes"
SOON_KEEP = 10


class BackupRefused(ValueError):
    """A file that is not a good backup of this program, or a setup it cannot restore into.

    The message is one line, for the person restoring.
    """


@dataclass(frozen=True)
class TournamentSummary:
    """A tournament as a backup holds it."""

    id: int
    name: str
    phase: str
    turn: int | None
    version: int
    paused: bool


@dataclass(frozen=True)
class BackupManifest:
    app: str
    format: int
    created_at: datetime
    reason: str
    migrations: frozenset[tuple[str, str]]
    tournaments: tuple[TournamentSummary, ...]
    database_sha256: str
    site: str = ""
    """The venue address the links carried when it was written (empty: not known)."""


@dataclass(frozen=True)
class BackupContents:
    """A backup checked and unpacked: ``database`` is a temporary copy to put in place."""

    source: Path
    manifest: BackupManifest
    database: Path
    secret_key: str


# --- Writing ------------------------------------------------------------------------------


def backup_directory() -> Path | None:
    """Where backups go, or None when this setup writes none (not a venue, not SQLite)."""
    directory = getattr(settings, "SL5R_BACKUP_DIR", None)
    if directory is None or settings.DATABASES["default"]["ENGINE"] != SQLITE_ENGINE:
        return None
    return Path(directory)


def backup_on_commit(*, reason: str) -> None:
    """Write a backup once the current transaction commits (at once outside one).

    For the changes a venue must not lose (``referees.venue.backup_signals``). The backup runs after
    the commit, so it holds the change and is never part of the request's transaction;
    if it fails, one line is logged and the change stands.
    """
    if backup_directory() is None or getattr(_suspended, "active", False):
        return
    transaction.on_commit(lambda: _backup_after_commit(reason))


def _backup_after_commit(reason: str) -> None:
    try:
        backup_write(reason=reason, if_changed=True)
    except Exception as error:  # the change is committed; the next backup will hold it
        log.error("backup after %s failed: %s", reason, _one_line(error))


def backup_soon_on_commit() -> None:
    """Have the change being committed in a backup within 2 s (at once outside a transaction).

    For the changes that come often (orders, counts at the tables): the backups are
    coalesced by ``_SOON``'s thread, never written in the request that made the change."""
    if backup_directory() is None or getattr(_suspended, "active", False):
        return
    transaction.on_commit(_SOON.mark)


class BackupCoalescer:
    """A daemon thread that writes a backup when changes are waiting, at most one every
    ``BACKUP_SOON_SECONDS``: the first change after a quiet spell at once, the rest of a
    burst together."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic) -> None:
        # The clock is a parameter so that a test can hold time still at the 2-s bound and
        # see the backup written by then, with no wall-clock timing a busy machine can break
        # (tests/referees/venue/test_backups.py).
        self._clock = clock
        self._changed = threading.Condition()
        self._dirty = False
        self._writing = False
        self._last = float("-inf")
        self._thread: threading.Thread | None = None

    def flush(self, timeout: float) -> bool:
        """Wait until every change marked so far is in a backup; False if ``timeout`` ran
        out first (a shutdown that wants the last orders on the stick, a test)."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._dirty and not self._writing, timeout)

    def mark(self) -> None:
        with self._changed:
            self._dirty = True
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(
                    target=self._run, name="sl5r-backup-soon", daemon=True
                )
                self._thread.start()
            self._changed.notify()

    def _run(self) -> None:
        while True:
            with self._changed:
                while not self._dirty:
                    self._changed.wait()
                # Woken early by more changes: they go in the same backup.
                while (left := self._last + BACKUP_SOON_SECONDS - self._clock()) > 0:
                    self._changed.wait(timeout=left)
                self._dirty = False
                self._writing = True
                self._last = self._clock()
            try:
                backup_write(reason=SOON_REASON, if_changed=True)
            except Exception as error:  # logged; the next change tries again
                log.error("backup of the latest changes failed: %s", _one_line(error))
            finally:
                with self._changed:
                    self._writing = False
                    self._changed.notify_all()


_SOON = BackupCoalescer()


def backups_flush(*, timeout: float) -> bool:
    """Wait until every acknowledged change is in a backup (``backup_soon_on_commit``)."""
    return _SOON.flush(timeout)


@contextlib.contextmanager
def backups_suspended() -> Iterator[None]:
    """No backups from this thread inside the block (a restore pausing the clocks)."""
    before = getattr(_suspended, "active", False)
    _suspended.active = True
    try:
        yield
    finally:
        _suspended.active = before


def backup_write(
    *, reason: str, if_changed: bool = False, now: datetime | None = None
) -> Path | None:
    """Write a backup now; its path, or None when this setup keeps none.

    ``if_changed``: write nothing (None) when the database holds what this process's last
    backup of it held — several changes announced in one transaction (a turn and the
    battle tables it opened) then make one backup.
    """
    directory = backup_directory()
    if directory is None:
        return None
    database = Path(settings.DATABASES["default"]["NAME"])
    started = time.perf_counter()
    with _WRITE_LOCK:
        directory.mkdir(parents=True, exist_ok=True)
        _remove_stale_temporaries(directory)
        now = now or datetime.now(timezone.utc)
        copy = _temporary(directory, ".sqlite3")
        archive = _temporary(directory, SUFFIX)
        try:
            fingerprint = _copy_database(database, copy)
            if if_changed and _last_fingerprint.get(_key(database, directory)) == fingerprint:
                return None
            manifest = _manifest_of(copy, reason=reason, now=now)
            key = str(settings.SECRET_KEY)
            with zipfile.ZipFile(archive, "w", compression=zipfile.ZIP_DEFLATED) as bundle:
                bundle.writestr(MANIFEST, json.dumps(manifest, indent=2, sort_keys=True))
                bundle.writestr(SECRET_KEY_ENTRY, key + "\n")
                bundle.write(copy, DATABASE_ENTRY)
            _fsync(archive)
            final = directory / backup_name(now=now, reason=reason)
            os.replace(archive, final)
            _fsync_directory(directory)
            _last_fingerprint[_key(database, directory)] = fingerprint
            _prune(directory, keep=int(getattr(settings, "SL5R_BACKUP_KEEP", 20)))
        finally:
            for leftover in (copy, archive):
                leftover.unlink(missing_ok=True)
    log.info(
        "backup written: %s (%s, %.0f ms)",
        final,
        reason,
        (time.perf_counter() - started) * 1000,
    )
    return final


def _key(database: Path, directory: Path) -> tuple[str, str]:
    return (str(database), str(directory))


def backup_name(*, now: datetime, reason: str) -> str:
    """``sl5r-backup-20261201-203015-123456-turn_resolved.zip``: sorts by time (UTC)."""
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%d-%H%M%S-%f")
    slug = re.sub(r"[^a-z0-9_]+", "-", reason.lower()).strip("-")[:40] or "backup"
    return f"{PREFIX}{stamp}-{slug}{SUFFIX}"


def backup_list(*, directory: Path) -> list[Path]:
    """The backups in ``directory``, oldest first (by name, which is by time)."""
    if not directory.is_dir():
        return []
    return sorted(
        path
        for path in directory.iterdir()
        if path.name.startswith(PREFIX) and path.name.endswith(SUFFIX) and path.is_file()
    )


def _temporary(directory: Path, suffix: str) -> Path:
    descriptor, name = tempfile.mkstemp(
        dir=directory, prefix=TEMPORARY_PREFIX, suffix=suffix + TEMPORARY_SUFFIX
    )
    os.close(descriptor)
    return Path(name)


def _remove_stale_temporaries(directory: Path) -> None:
    limit = time.time() - STALE_TEMPORARY_SECONDS
    for path in directory.glob(f"{TEMPORARY_PREFIX}*{TEMPORARY_SUFFIX}"):
        with contextlib.suppress(OSError):
            if path.stat().st_mtime < limit:
                path.unlink()


def _copy_database(database: Path, copy: Path) -> tuple[Any, ...]:
    """Copy the committed state of ``database`` into ``copy``; what it holds, in brief.

    SQLite's backup API, in one step: one read transaction, so the copy is one consistent
    snapshot while other connections go on writing (WAL). The copy is switched to a
    rollback journal so that it is a single self-contained file.
    """
    if not database.is_file():
        raise FileNotFoundError(f"the database {database} does not exist")
    source = sqlite3.connect(database, timeout=20)
    try:
        target = sqlite3.connect(copy)
        try:
            source.backup(target)
            target.execute("PRAGMA journal_mode=DELETE")
            return _fingerprint(target)
        finally:
            target.close()
    finally:
        source.close()


def _fingerprint(connection: sqlite3.Connection) -> tuple[Any, ...]:
    """Every change a backup is for writes a log line and raises its campaign's version."""
    row = connection.execute(
        f"SELECT (SELECT MAX(id) FROM {LogEntry._meta.db_table}),"
        f" (SELECT COUNT(*) FROM {LogEntry._meta.db_table}),"
        f" (SELECT TOTAL(version) FROM {Campaign._meta.db_table}),"
        f" (SELECT COUNT(*) FROM {Tournament._meta.db_table})"
    ).fetchone()
    return tuple(row)


def _manifest_of(copy: Path, *, reason: str, now: datetime) -> dict[str, Any]:
    connection = sqlite3.connect(copy)
    try:
        migrations = connection.execute(
            "SELECT app, name FROM django_migrations ORDER BY app, name"
        ).fetchall()
        tournaments = connection.execute(
            f"SELECT t.id, t.name, t.phase, t.paused_remaining IS NOT NULL, c.version,"
            f" (SELECT MAX(number) FROM {Turn._meta.db_table} AS u"
            f"  WHERE u.campaign_id = c.id AND u.status != 'undone')"
            f" FROM {Tournament._meta.db_table} AS t"
            f" JOIN {Campaign._meta.db_table} AS c ON c.id = t.campaign_id ORDER BY t.id"
        ).fetchall()
    finally:
        connection.close()
    return {
        "app": APP,
        "format": FORMAT,
        "created_at": now.astimezone(timezone.utc).isoformat(),
        "reason": reason,
        "migrations": [[app, name] for app, name in migrations],
        "tournaments": [
            {
                "id": pk,
                "name": name,
                "phase": phase,
                "paused": bool(paused),
                "version": version,
                "turn": turn,
            }
            for pk, name, phase, paused, version, turn in tournaments
        ],
        "database_sha256": _sha256(copy),
        # The address printed on the join sheets: a restore at another one says so.
        "site": site_url_current(),
    }


def _prune(directory: Path, *, keep: int) -> None:
    backups = backup_list(directory=directory)
    frequent = [b for b in backups if b.name.endswith(f"-{SOON_REASON}{SUFFIX}")]
    others = [b for b in backups if b not in frequent]
    for group, kept in ((others, keep), (frequent, SOON_KEEP)):
        for old in group[: max(0, len(group) - kept)]:
            old.unlink(missing_ok=True)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _fsync(path: Path) -> None:
    with path.open("rb+") as handle:
        os.fsync(handle.fileno())


def _fsync_directory(directory: Path) -> None:
    descriptor = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split()) or type(error).__name__
    return f"{type(error).__name__}: {text}"


# --- Reading ------------------------------------------------------------------------------


def backup_read(*, source: Path, workdir: Path) -> BackupContents:
    """Check every part of a backup file and unpack its database into ``workdir``.

    Refused (``BackupRefused``, one line) unless the file is a zip this program wrote: an
    intact archive, a manifest naming ``sl5r-referee`` in a known format, a database whose
    checksum matches, that SQLite finds intact and whose applied migrations are all known to
    this code (a backup from a newer version is refused), and a secret key.
    """
    name = source.name
    if not source.is_file():
        raise BackupRefused(f"{source}: no such file")
    try:
        bundle = zipfile.ZipFile(source)
    except (zipfile.BadZipFile, OSError) as error:
        raise BackupRefused(
            f"{name}: not a backup written by SL5R Referee (not a complete zip file: {error})"
        ) from error
    with bundle:
        try:
            broken = bundle.testzip()
        except (zipfile.BadZipFile, OSError, EOFError, ValueError) as error:
            raise BackupRefused(f"{name}: the zip file is damaged ({error})") from error
        if broken is not None:
            raise BackupRefused(f"{name}: the zip file is damaged ({broken} fails its check)")
        entries = set(bundle.namelist())
        for needed in (MANIFEST, DATABASE_ENTRY, SECRET_KEY_ENTRY):
            if needed not in entries:
                raise BackupRefused(
                    f"{name}: not a backup written by SL5R Referee ({needed} is missing)"
                )
        manifest = _manifest_read(name, bundle.read(MANIFEST))
        secret_key = bundle.read(SECRET_KEY_ENTRY).decode("utf-8", "replace").strip()
        if not secret_key or "\n" in secret_key:
            raise BackupRefused(f"{name}: the secret key in the backup is empty or not one line")
        database = workdir / DATABASE_ENTRY
        with bundle.open(DATABASE_ENTRY) as packed, database.open("wb") as unpacked:
            shutil.copyfileobj(packed, unpacked, 1 << 20)
    if _sha256(database) != manifest.database_sha256:
        raise BackupRefused(f"{name}: the database does not match the manifest's checksum")
    applied = _database_check(name, database)
    if applied != manifest.migrations:
        raise BackupRefused(f"{name}: the database's migrations differ from the manifest's")
    known = code_migrations()
    newer = sorted(applied - known)
    if newer:
        app, migration = newer[0]
        raise BackupRefused(
            f"{name}: written by a newer version of SL5R Referee (migration {app}.{migration}"
            " is unknown here); update this copy of the program first"
        )
    return BackupContents(
        source=source, manifest=manifest, database=database, secret_key=secret_key
    )


def code_migrations() -> frozenset[tuple[str, str]]:
    """Every migration this code has, by (app, name); no database is opened."""
    loader = MigrationLoader(None, ignore_no_migrations=True)
    return frozenset(loader.disk_migrations)


def _manifest_read(name: str, raw: bytes) -> BackupManifest:
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, ValueError) as error:
        raise BackupRefused(f"{name}: the manifest is not valid JSON ({error})") from error
    if not isinstance(data, dict) or data.get("app") != APP:
        app = data.get("app") if isinstance(data, dict) else None
        raise BackupRefused(
            f"{name}: not a backup written by SL5R Referee (its manifest names {app!r})"
        )
    version = data.get("format")
    if not isinstance(version, int) or isinstance(version, bool):
        raise BackupRefused(f"{name}: the manifest has no format version")
    if version > FORMAT:
        raise BackupRefused(
            f"{name}: backup format {version} is newer than this program reads ({FORMAT});"
            " update this copy of the program first"
        )
    try:
        created_at = datetime.fromisoformat(str(data["created_at"]))
        if created_at.tzinfo is None:
            raise ValueError("no time zone")
        migrations = frozenset((str(app), str(mig)) for app, mig in data["migrations"])
        tournaments = tuple(
            TournamentSummary(
                id=int(t["id"]),
                name=str(t["name"]),
                phase=str(t["phase"]),
                turn=None if t.get("turn") is None else int(t["turn"]),
                version=int(t["version"]),
                paused=bool(t["paused"]),
            )
            for t in data["tournaments"]
        )
        checksum = str(data["database_sha256"])
    except (KeyError, TypeError, ValueError) as error:
        raise BackupRefused(f"{name}: the manifest is incomplete ({_one_line(error)})") from error
    return BackupManifest(
        app=APP,
        format=version,
        created_at=created_at,
        reason=str(data.get("reason", "")),
        migrations=migrations,
        tournaments=tournaments,
        database_sha256=checksum,
        site=str(data.get("site") or ""),
    )


def _database_check(name: str, database: Path) -> frozenset[tuple[str, str]]:
    """SQLite's integrity check of the unpacked copy; the migrations it has applied."""
    try:
        connection = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    except sqlite3.Error as error:
        raise BackupRefused(f"{name}: the database cannot be opened ({error})") from error
    try:
        result = connection.execute("PRAGMA integrity_check").fetchall()
        if result != [("ok",)]:
            raise BackupRefused(f"{name}: the database is damaged ({result[0][0]})")
        tables = {
            row[0]
            for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "django_migrations" not in tables or Tournament._meta.db_table not in tables:
            raise BackupRefused(f"{name}: the database is not SL5R Referee's")
        rows = connection.execute("SELECT app, name FROM django_migrations").fetchall()
    except sqlite3.DatabaseError as error:
        raise BackupRefused(f"{name}: the database is not a SQLite database ({error})") from error
    finally:
        connection.close()
    return frozenset((str(app), str(migration)) for app, migration in rows)


def database_in_use(database: Path) -> bool:
    """Whether another process has ``database`` open (a server, the clock, a worker).

    SQLite grants an exclusive lock only while no other connection holds the file open in
    WAL mode, even an idle one.
    """
    if not database.exists():
        return False
    connection = sqlite3.connect(database, timeout=0.5, isolation_level=None)
    try:
        connection.execute("PRAGMA locking_mode=EXCLUSIVE")
        connection.execute("BEGIN EXCLUSIVE")
        connection.execute("ROLLBACK")
    except sqlite3.OperationalError:
        return True  # "database is locked"
    except sqlite3.DatabaseError:
        return False  # not a database at all: nobody serves it, and it is set aside
    finally:
        connection.close()
    return False
