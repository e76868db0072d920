"""Venue backups (referees/venue/backups.py) and ``manage.py restore`` (referees/venue/restore.py).

Backups are taken of committed data by a connection of their own, so these tests commit
(``transactional_db``). Restores run ``manage.py restore`` in a subprocess on a scratch
database and venue folder, never on the test database.
"""

from __future__ import annotations

import hashlib
import io
import json
import logging
import os
import sqlite3
import subprocess
import sys
import zipfile
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, transaction
from django.utils import timezone

from referees.kernel.core import announce, tournament_lock, unit_of_work
from referees.models import Player, Tournament
from referees.services import Actor, OrderInput, army_correct, clock_tick, order_enter, order_give
from referees.venue import backups
from referees.venue.backups import (
    BackupRefused,
    backup_list,
    backup_on_commit,
    backup_read,
    backup_write,
)
from sl5r.rules.mapgraph import rokugan_map

BASE_DIR = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(
    connection.vendor != "sqlite", reason="venue backups are of the embedded SQLite database"
)


@pytest.fixture
def backup_dir(settings: Any, tmp_path: Path) -> Path:
    """Backups on, into a folder of this test."""
    folder = tmp_path / "backups"
    settings.SL5R_BACKUP_DIR = folder
    settings.SL5R_BACKUP_KEEP = 20
    return folder


@pytest.fixture
def running(
    transactional_db: None, make_running_tournament: Callable[..., Tournament]
) -> Tournament:
    return make_running_tournament(turn_seconds=600, name="Backup cup")


def manifest_of(path: Path) -> dict[str, Any]:
    with zipfile.ZipFile(path) as bundle:
        data: dict[str, Any] = json.loads(bundle.read("manifest.json"))
    return data


def database_of(path: Path, into: Path) -> Path:
    """The database copy inside a backup, unpacked to ``into``."""
    into.write_bytes(zipfile.ZipFile(path).read("db.sqlite3"))
    return into


def judge_actor() -> Actor:
    return Actor.of_user(get_user_model().objects.get(username="fixture-judge"))


def free_neighbour(tournament: Tournament, army: str) -> str:
    graph = rokugan_map()
    board = Tournament.objects.get(pk=tournament.pk).campaign.board["armies"]
    here = board[army]["province"]
    occupied = {spot["province"] for spot in board.values()}
    blocked = graph.blocked_provinces()
    return sorted(p for p in graph.neighbours[here] if p not in occupied | blocked)[0]


# --- Writing --------------------------------------------------------------------------------


def test_a_resolved_turn_is_backed_up_after_commit(running: Tournament, backup_dir: Path) -> None:
    # given: turn 1's deadline has passed
    before = set(backup_list(directory=backup_dir))
    later = timezone.now() + timedelta(seconds=601)

    # when: the clock resolves it
    assert clock_tick(tournament_id=running.pk, now=later)

    # then: one new backup, holding the resolved turn and the secret key
    new = sorted(set(backup_list(directory=backup_dir)) - before)
    assert len(new) == 1, new
    assert new[0].name.endswith("-turn_resolved.zip")
    manifest = manifest_of(new[0])
    assert manifest["app"] == "sl5r-referee"
    assert manifest["reason"] == "turn_resolved"
    assert ["referees", "0001_tournament"] in manifest["migrations"]
    [summary] = [t for t in manifest["tournaments"] if t["id"] == running.pk]
    assert summary["phase"] == "running"
    assert summary["turn"] == 2
    copy = sqlite3.connect(database_of(new[0], backup_dir.parent / "copy.sqlite3"))
    turns = copy.execute(
        "SELECT number, status FROM strategic_map_turn WHERE campaign_id = ? ORDER BY number",
        [running.campaign_id],
    ).fetchall()
    copy.close()
    assert turns == [(1, "resolved"), (2, "open")]
    from django.conf import settings

    assert zipfile.ZipFile(new[0]).read("secret_key").decode().strip() == settings.SECRET_KEY


def test_a_judge_correction_and_a_paper_order_are_backed_up(
    running: Tournament, backup_dir: Path
) -> None:
    before = set(backup_list(directory=backup_dir))
    to = free_neighbour(running, "crab-1")

    army_correct(
        tournament_id=running.pk,
        army_code="crab-1",
        province=to,
        reason="misplaced at the start",
        actor=judge_actor(),
        now=timezone.now(),
    )
    after_correction = sorted(set(backup_list(directory=backup_dir)) - before)
    order_enter(
        tournament_id=running.pk,
        army_code="crane-1",
        order=OrderInput(kind="move", path=(free_neighbour(running, "crane-1"),)),
        actor=judge_actor(),
        now=timezone.now(),
    )
    after_order = sorted(set(backup_list(directory=backup_dir)) - before)

    assert [p.name.rsplit("-", 1)[1] for p in after_correction] == ["correction.zip"]
    assert len(after_order) == 2 and after_order[-1].name.endswith("-paper_order.zip")
    copy = sqlite3.connect(database_of(after_correction[0], backup_dir.parent / "c.sqlite3"))
    (board,) = copy.execute(
        "SELECT board FROM strategic_map_campaign WHERE id = ?", [running.campaign_id]
    ).fetchone()
    copy.close()
    assert json.loads(board)["armies"]["crab-1"]["province"] == to


def awaited_backup(directory: Path, reason: str, before: set[Path]) -> Path:
    """The first new backup for ``reason``, once the coalescing thread says every change
    is in one (an event of that thread, awaited, not polled for)."""
    assert backups.backups_flush(timeout=30), "the backup thread never caught up"
    new = sorted(p for p in set(backup_list(directory=directory)) - before)
    found = [p for p in new if p.name.endswith(f"-{reason}.zip")]
    assert found, f"no {reason} backup in {directory}"
    return found[0]


def test_a_generals_order_is_in_a_backup_soon_after_it_is_acknowledged(
    running: Tournament, backup_dir: Path, tmp_path: Path
) -> None:
    """Issue 31: a laptop killed 22 s after orders lost them (backups followed only turns and
    judges' changes). An order is now in a backup within 2 s, written by a thread of its own."""
    before = set(backup_list(directory=backup_dir))
    player = Player.objects.select_related("army", "tournament").get(
        tournament=running, army__code="crab-1"
    )
    target = free_neighbour(running, "crab-1")

    order_give(player=player, order=OrderInput(kind="move", path=(target,)), now=timezone.now())

    backup = awaited_backup(backup_dir, backups.SOON_REASON, before)
    copy = sqlite3.connect(database_of(backup, tmp_path / "copy.sqlite3"))
    try:
        paths = copy.execute(
            "SELECT o.path FROM strategic_map_order AS o"
            " JOIN strategic_map_army AS a ON a.id = o.army_id WHERE a.code = 'crab-1'"
        ).fetchall()
    finally:
        copy.close()
    assert [json.loads(p) for (p,) in paths] == [[target]]


class HeldClock:
    """The coalescer's monotonic clock, moved by the test alone: time stands still where
    the test leaves it, however long the machine takes to run the backup thread."""

    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


WRITE_SECONDS = 0.1
"""What the promise leaves for writing the backup itself (a copy of the demo database takes
about 11 ms): a change's backup must have begun this long before its 2 s are up."""


def test_under_continuous_changes_each_change_is_in_a_backup_within_2_s(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The venue's promise (deployment.md, "backups every 2 s"): an acknowledged change is in
    a backup within 2 s of its commit, while changes keep coming. The worst case is a change
    just after a backup: the coalescer runs on a clock of the test's, a change comes 1 ms
    after each backup and more every tenth of a second, and time is held at 1.9 s after that
    change until a backup is written. A gap between backups longer than that
    (``BACKUP_SOON_SECONDS``) leaves the thread waiting for a moment that never comes, and
    the flush gives up. Nothing here depends on how fast the machine is."""
    # given: the coalescing thread on a held clock; its writes noted at that clock's time
    clock = HeldClock(1000.0)
    written: list[float] = []
    monkeypatch.setattr(backups, "backup_write", lambda **_: written.append(clock()))
    soon = backups.BackupCoalescer(clock=clock)
    bound = 2.0 - WRITE_SECONDS

    # when: a first change after a quiet spell
    soon.mark()

    # then: it is backed up at once
    assert soon.flush(timeout=30), "the first change was never backed up"
    assert written == [1000.0]

    for _ in range(3):
        # when: a change 1 ms after the last backup, then more every 0.1 s up to the bound
        change = written[-1] + 0.001
        steps = 19
        for step in range(steps + 1):
            clock.now = change + bound * step / steps  # the last is change + bound exactly
            soon.mark()

        # then: the change is in a backup begun by then
        assert soon.flush(timeout=30), (
            f"no backup in the {bound} s after a change: one at most every"
            f" {backups.BACKUP_SOON_SECONDS} s (BACKUP_SOON_SECONDS) breaks the 2 s promise"
        )
        assert change < written[-1] <= change + bound, written


def test_frequent_backups_never_push_the_turns_backups_out(
    settings: Any, running: Tournament, backup_dir: Path
) -> None:
    settings.SL5R_BACKUP_KEEP = 3
    start = datetime(2026, 12, 1, 20, 0, tzinfo=dt_timezone.utc)
    turns = [
        backup_write(reason="turn_resolved", now=start + timedelta(seconds=n)) for n in range(4)
    ]
    frequent = [
        backup_write(reason=backups.SOON_REASON, now=start + timedelta(seconds=10 + n))
        for n in range(backups.SOON_KEEP + 5)
    ]

    kept = backup_list(directory=backup_dir)

    assert kept == turns[1:] + frequent[5:]


def test_changes_announced_in_one_transaction_make_one_backup(
    running: Tournament, backup_dir: Path
) -> None:
    before = set(backup_list(directory=backup_dir))
    backup_write(reason="first")  # what the database holds now is backed up already

    with transaction.atomic():
        Tournament.objects.filter(pk=running.pk).update(name="Renamed cup")
        running.campaign.__class__.objects.filter(pk=running.campaign_id).update(version=99)
        backup_on_commit(reason="turn_resolved")
        backup_on_commit(reason="battle")

    new = sorted(set(backup_list(directory=backup_dir)) - before)
    assert [p.name.rsplit("-", 1)[1] for p in new] == ["first.zip", "turn_resolved.zip"]


@pytest.mark.parametrize("venue", [True, False], ids=["venue", "no-venue"])
def test_a_tournament_change_asks_for_a_backup_through_the_kernels_signal(
    venue: bool,
    settings: Any,
    running: Tournament,
    backup_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The kernel calls no backup (issue 41): ``referees.venue.backup_signals`` listens to its
    ``tournament_changed``, connected in ``RefereesConfig.ready``, and writes one once the
    change commits, at a venue only."""
    if not venue:
        settings.SL5R_BACKUP_DIR = None
    written: list[str] = []
    monkeypatch.setattr(backups, "backup_write", lambda **kwargs: written.append(kwargs["reason"]))

    with unit_of_work():
        announce(tournament_lock(running.pk), "clock")
        assert written == [], "a backup before the commit"

    assert written == (["clock"] if venue else [])


def test_nothing_is_written_outside_a_venue(settings: Any, running: Tournament) -> None:
    settings.SL5R_BACKUP_DIR = None

    assert backup_write(reason="turn_resolved") is None


def test_only_the_newest_backups_are_kept(
    settings: Any, running: Tournament, backup_dir: Path
) -> None:
    settings.SL5R_BACKUP_KEEP = 20
    start = datetime(2026, 12, 1, 20, 0, tzinfo=dt_timezone.utc)

    written = [
        backup_write(reason=f"change {n}", now=start + timedelta(seconds=n)) for n in range(25)
    ]

    kept = backup_list(directory=backup_dir)
    assert kept == written[5:]
    assert [p.name for p in kept] == sorted(p.name for p in kept)


def test_an_interrupted_write_leaves_no_partial_backup(
    running: Tournament, backup_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # given: a good backup, then one that dies while the database goes into the zip
    good = backup_write(reason="good")
    real_write = zipfile.ZipFile.write

    def dies(self: zipfile.ZipFile, *args: Any, **kwargs: Any) -> None:
        self.fp.write(b"half a database")  # type: ignore[union-attr]
        raise OSError("disk unplugged")

    monkeypatch.setattr(zipfile.ZipFile, "write", dies)

    # when
    with pytest.raises(OSError, match="disk unplugged"):
        backup_write(reason="interrupted")

    # then: only the good backup has a backup's name, and no temporary file is left
    monkeypatch.setattr(zipfile.ZipFile, "write", real_write)
    assert good is not None
    assert backup_list(directory=backup_dir) == [good]
    assert sorted(p.name for p in backup_dir.iterdir()) == [good.name]


def test_a_temporary_file_left_by_a_crash_is_never_taken_for_a_backup(
    running: Tournament, backup_dir: Path
) -> None:
    good = backup_write(reason="good")
    assert good is not None
    # kill -9 in the middle of a write leaves the temporary file, half written
    crashed = backup_dir / ".sl5r-backup-abc123.zip.tmp"
    crashed.write_bytes(good.read_bytes()[:1000])
    os.utime(crashed, (0, 0))

    assert backup_list(directory=backup_dir) == [good]
    backup_write(reason="next")  # and the next backup clears it away

    assert not crashed.exists()


def test_a_failed_backup_never_fails_the_change(
    running: Tournament,
    backup_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    def broken(**kwargs: Any) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(backups, "backup_write", broken)
    to = free_neighbour(running, "crab-1")

    with caplog.at_level(logging.ERROR, logger="referees.venue.backups"):
        army_correct(
            tournament_id=running.pk,
            army_code="crab-1",
            province=to,
            reason="moved by hand",
            actor=judge_actor(),
            now=timezone.now(),
        )

    board = Tournament.objects.get(pk=running.pk).campaign.board
    assert board["armies"]["crab-1"]["province"] == to
    [record] = [r for r in caplog.records if r.name == "referees.venue.backups"]
    assert record.getMessage() == (
        "backup after correction failed: OSError: No space left on device"
    )
    assert "\n" not in record.getMessage() and record.exc_info is None


# --- Reading and restoring ----------------------------------------------------------------


@pytest.fixture
def good_backup(running: Tournament, backup_dir: Path) -> Path:
    """A backup of the running tournament, 600 s left on turn 1's clock."""
    path = backup_write(reason="turn_resolved")
    assert path is not None
    return path


def rebuild(
    good: Path,
    out: Path,
    *,
    manifest: Callable[[dict[str, Any]], None] | None = None,
    database: Callable[[Path], None] | None = None,
    database_bytes: bytes | None = None,
    drop: str = "",
) -> Path:
    """``good`` written again with a change; the manifest's checksum and migrations follow
    a changed database, so that only the change itself is wrong."""
    with zipfile.ZipFile(good) as bundle:
        parts = {name: bundle.read(name) for name in bundle.namelist()}
    data = json.loads(parts["manifest.json"])
    if database is not None:
        copy = out.with_suffix(".sqlite3")
        copy.write_bytes(parts["db.sqlite3"])
        database(copy)
        parts["db.sqlite3"] = copy.read_bytes()
        db = sqlite3.connect(copy)
        data["migrations"] = db.execute("SELECT app, name FROM django_migrations").fetchall()
        db.close()
    if database_bytes is not None:
        parts["db.sqlite3"] = database_bytes
    data["database_sha256"] = hashlib.sha256(parts["db.sqlite3"]).hexdigest()
    if manifest is not None:
        manifest(data)
    parts["manifest.json"] = json.dumps(data).encode()
    parts.pop(drop, None)
    with zipfile.ZipFile(out, "w") as bundle:
        for name, content in parts.items():
            bundle.writestr(name, content)
    return out


def add_future_migration(path: Path) -> None:
    db = sqlite3.connect(path)
    db.execute(
        "INSERT INTO django_migrations (app, name, applied) VALUES"
        " ('referees', '9999_from_the_future', '2027-01-01 00:00:00')"
    )
    db.commit()
    db.close()


def foreign_database(path: Path) -> None:
    path.unlink()
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE django_migrations (id INTEGER PRIMARY KEY, app, name, applied)")
    db.execute("INSERT INTO django_migrations (app, name, applied) VALUES ('shop', '0001', '')")
    db.execute("CREATE TABLE shop_item (id INTEGER PRIMARY KEY)")
    db.commit()
    db.close()


def other_app(manifest: dict[str, Any]) -> None:
    manifest["app"] = "another-program"


def newer_format(manifest: dict[str, Any]) -> None:
    manifest["format"] = 2


def random_bytes(good: Path, out: Path) -> Path:
    out.write_bytes(os.urandom(4096))
    return out


def truncated(good: Path, out: Path) -> Path:
    out.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    return out


def bare_database(good: Path, out: Path) -> Path:
    out.write_bytes(zipfile.ZipFile(good).read("db.sqlite3"))
    return out


def wrong_checksum(manifest: dict[str, Any]) -> None:
    manifest["database_sha256"] = "0" * 64


BAD_BACKUPS: dict[str, tuple[Callable[[Path, Path], Path], str]] = {
    "random bytes": (random_bytes, "not a complete zip file"),
    "truncated zip": (truncated, "not a complete zip file"),
    "a SQLite file, not a backup": (bare_database, "not a complete zip file"),
    "no manifest": (lambda good, out: rebuild(good, out, drop="manifest.json"), "manifest.json"),
    "no secret key": (lambda good, out: rebuild(good, out, drop="secret_key"), "secret_key"),
    "another app's manifest": (
        lambda good, out: rebuild(good, out, manifest=other_app),
        "its manifest names 'another-program'",
    ),
    "a newer format": (
        lambda good, out: rebuild(good, out, manifest=newer_format),
        "backup format 2 is newer",
    ),
    "a newer migration": (
        lambda good, out: rebuild(good, out, database=add_future_migration),
        "newer version of SL5R Referee (migration referees.9999_from_the_future",
    ),
    "not SQLite inside": (
        lambda good, out: rebuild(good, out, database_bytes=os.urandom(8192)),
        "not a SQLite database",
    ),
    "another program's database": (
        lambda good, out: rebuild(good, out, database=foreign_database),
        "is not SL5R Referee's",
    ),
    "a checksum that does not match": (
        lambda good, out: rebuild(good, out, manifest=wrong_checksum),
        "does not match the manifest's checksum",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_BACKUPS))
def test_a_bad_backup_is_refused_with_its_reason(
    case: str, good_backup: Path, tmp_path: Path
) -> None:
    make, reason = BAD_BACKUPS[case]
    bad = make(good_backup, tmp_path / "bad.zip")
    work = tmp_path / "work"
    work.mkdir()

    with pytest.raises(BackupRefused) as refused:
        backup_read(source=bad, workdir=work)

    assert reason in str(refused.value)
    assert "\n" not in str(refused.value)


def test_a_good_backup_reads_back(good_backup: Path, tmp_path: Path) -> None:
    contents = backup_read(source=good_backup, workdir=tmp_path)

    assert contents.manifest.reason == "turn_resolved"
    assert contents.manifest.created_at.tzinfo is not None
    assert [t.name for t in contents.manifest.tournaments] == ["Backup cup"]


# --- manage.py restore, in a subprocess on a scratch laptop -----------------------------


@pytest.fixture
def laptop(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """Another laptop: its own database path and venue folder, with a key of its own."""
    root = tmp_path / "laptop"
    venue = root / "venue"
    venue.mkdir(parents=True)
    (venue / "secret_key").write_text("the-other-laptops-own-key\n")
    database = root / "db.sqlite3"
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "SECRET_KEY"}}
    env.update(
        DJANGO_SETTINGS_MODULE="sl5r.settings",
        DATABASE_URL=f"sqlite:///{database}",
        SL5R_VENUE="1",
        VENUE_DIR=str(venue),
        VENUE_BACKUP_DIR=str(root / "backups"),
    )
    yield {"root": root, "database": database, "venue": venue, "env": env}


def restore(laptop: dict[str, Any], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "restore", *args],
        cwd=BASE_DIR,
        env=laptop["env"],
        capture_output=True,
        text=True,
        timeout=120,
    )


def snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


def table_rows(path: str | Path, table: str) -> list[tuple[Any, ...]]:
    db = sqlite3.connect(path)
    try:
        return db.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
    finally:
        db.close()


def test_restore_puts_the_tournament_back_paused(
    good_backup: Path, running: Tournament, laptop: dict[str, Any]
) -> None:
    # given: the backup of a running tournament, and another laptop that has a database
    source_db = connection.settings_dict["NAME"]
    source = Tournament.objects.get(pk=running.pk)
    assert source.deadline is not None
    written_at = datetime.fromisoformat(manifest_of(good_backup)["created_at"])
    old = sqlite3.connect(laptop["database"])
    old.execute("CREATE TABLE leftover (x)")
    old.commit()
    old.close()

    # when
    result = restore(laptop, str(good_backup))

    # then: one line per tournament; the same rows; its key; the clock paused by the restore
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith('"Backup cup": running, turn 1, paused (') for line in lines), (
        result.stdout
    )
    restored = laptop["database"]
    for table in (
        "auth_user",
        "django_session",
        "referees_player",
        "referees_judgekey",
        "strategic_map_army",
        "strategic_map_turn",
        "strategic_map_order",
    ):
        assert table_rows(restored, table) == table_rows(source_db, table), table
    key = (laptop["venue"] / "secret_key").read_text()
    from django.conf import settings

    assert key == settings.SECRET_KEY + "\n"
    db = sqlite3.connect(restored)
    deadline, remaining = db.execute(
        "SELECT deadline, paused_remaining FROM referees_tournament WHERE id = ?", [running.pk]
    ).fetchone()
    entries = db.execute(
        "SELECT actor, action FROM referees_logentry WHERE tournament_id = ? ORDER BY id",
        [running.pk],
    ).fetchall()
    db.close()
    assert deadline is None
    assert remaining == pytest.approx((source.deadline - written_at).total_seconds(), abs=0.01)
    before = table_rows(source_db, "referees_logentry")
    assert len(entries) == len(before) + 2
    # Paused at the backup's moment, and the console told what the backup holds (issue 31).
    assert entries[-2:] == [("the restore", "clock_paused"), ("the restore", "backup_restored")]
    # what was there before is kept aside, with its key
    kept = sorted(p.name for p in laptop["root"].iterdir() if ".pre-restore-" in p.name)
    assert len(kept) == 1 and kept[0].startswith("db.sqlite3.pre-restore-")
    kept_keys = [p for p in laptop["venue"].iterdir() if ".pre-restore-" in p.name]
    assert [p.read_text() for p in kept_keys] == ["the-other-laptops-own-key\n"]


@pytest.mark.parametrize(
    "case",
    ["random bytes", "truncated zip", "no manifest", "another app's manifest", "a newer migration"],
)
def test_restore_refuses_a_bad_backup_in_one_line_and_changes_nothing(
    case: str, good_backup: Path, laptop: dict[str, Any], tmp_path: Path
) -> None:
    make, reason = BAD_BACKUPS[case]
    bad = make(good_backup, tmp_path / "bad.zip")
    db = sqlite3.connect(laptop["database"])
    db.execute("CREATE TABLE precious (x)")
    db.commit()
    db.close()
    before = snapshot(laptop["root"])

    result = restore(laptop, str(bad))

    assert result.returncode == 2, result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert reason in result.stderr
    assert snapshot(laptop["root"]) == before


def test_restore_refuses_a_postgresql_setup(good_backup: Path, laptop: dict[str, Any]) -> None:
    laptop["env"]["DATABASE_URL"] = "postgres://nobody@127.0.0.1:1/none"
    before = snapshot(laptop["root"])

    result = restore(laptop, str(good_backup))

    assert result.returncode == 2, result.stderr
    assert result.stderr.splitlines() == [
        "CommandError: the database here is not the embedded SQLite one (DATABASE_URL): a venue"
        " backup restores only into a SQLite setup"
    ]
    assert snapshot(laptop["root"]) == before


def test_restore_refuses_a_database_a_server_has_open(
    good_backup: Path, laptop: dict[str, Any]
) -> None:
    # given: a "server" process holding the laptop's database open, idle, in WAL mode (in
    # another process: POSIX locks are per process, and this one reads the files below)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sqlite3, sys\n"
            "db = sqlite3.connect(sys.argv[1])\n"
            "db.execute('PRAGMA journal_mode=WAL')\n"
            "db.execute('CREATE TABLE t (x)')\n"
            "db.commit()\n"
            "db.execute('SELECT * FROM t').fetchall()\n"
            "print('open', flush=True)\n"
            "sys.stdin.read()\n",
            str(laptop["database"]),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "open\n"
        before = snapshot(laptop["root"])

        result = restore(laptop, str(good_backup))

        assert result.returncode == 2, result.stderr
        assert len(result.stderr.splitlines()) == 1, result.stderr
        assert "is in use: stop the server" in result.stderr
        assert snapshot(laptop["root"]) == before
    finally:
        holder.communicate("", timeout=30)


def test_restore_from_a_folder_takes_the_newest_backup(
    running: Tournament, backup_dir: Path, laptop: dict[str, Any]
) -> None:
    backup_write(reason="older")
    newest = backup_write(reason="newest")
    assert newest is not None

    result = restore(laptop, str(backup_dir))

    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith(f"Restored {newest.name} ")


def test_the_command_reports_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    """A refusal is a CommandError with exit status 2 (Django prints it in one line)."""
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError) as refused:
        call_command("restore", "/nonexistent/backup.zip", stdout=io.StringIO())

    assert refused.value.returncode == 2
    assert str(refused.value) == "/nonexistent/backup.zip: no such file"


def test_a_restore_lists_the_open_turns_orders_and_keeps_the_old_address(
    running: Tournament, backup_dir: Path, laptop: dict[str, Any], settings: Any
) -> None:
    """Issue 31: after a restore the judge could not tell which orders the backup held (two
    Generals' changes were silently reverted), nor that the sheets carried another address.
    The restore's log line (the console's) and its output list the open turn's orders and
    say how old the backup is; the backup's address becomes the one a new start compares."""
    settings.SL5R_SITE_URL = "http://192.0.2.40:8000"
    player = Player.objects.select_related("army", "tournament").get(
        tournament=running, army__code="crab-1"
    )
    target = free_neighbour(running, "crab-1")
    order_give(player=player, order=OrderInput(kind="move", path=(target,)), now=timezone.now())
    backup = backup_write(reason="turn_resolved")
    assert backup is not None
    assert manifest_of(backup)["site"] == "http://192.0.2.40:8000"

    result = restore(laptop, str(backup))

    assert result.returncode == 0, result.stderr
    assert "s old: what happened after it is not in it." in result.stdout
    name = rokugan_map().provinces[target].name
    assert f"    crab-1: move to {name} (given " in result.stdout, result.stdout
    db = sqlite3.connect(laptop["database"])
    try:
        (data,) = db.execute(
            "SELECT data FROM referees_logentry WHERE action = 'backup_restored'"
        ).fetchone()
    finally:
        db.close()
    record = json.loads(data)
    assert [(o["army"], o["kind"], o["path"]) for o in record["orders"]] == [
        ("crab-1", "move", [target])
    ]
    assert record["age"] >= 0
    assert (laptop["venue"] / "site_url").read_text() == "http://192.0.2.40:8000\n"
