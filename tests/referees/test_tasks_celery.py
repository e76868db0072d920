"""A real Celery worker and beat resolve turns on time, each exactly once.

The worker and beat run as subprocesses against the Django test database on PostgreSQL (so
the test commits its data: ``transaction=True``) and a Redis database of their own. Runs in
the PostgreSQL pass of ``make test``; on SQLite (an in-process test database the
subprocesses cannot open) it is skipped.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis
from django.utils import timezone

from referees import tasks
from referees.models import LogEntry, Tournament
from sl5r.celery import app
from strategic_map.models import Turn

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.slow]

BASE_DIR = Path(__file__).resolve().parents[2]
CELERY_REDIS_DB = 14
BOOT_SECONDS = 45.0
TURN_SECONDS = 2
# Beat sweeps every 2 s; the tick sent for a deadline runs at the deadline itself.
SWEEP_LATENESS = timedelta(seconds=2.5)
ETA_LATENESS = timedelta(seconds=1.0)
WAIT_SECONDS = 40.0


class Service:
    """A subprocess started by this test, its output in a file, ended by its own id."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        self._out = log.open("wb")
        self.process = subprocess.Popen(
            argv,
            cwd=BASE_DIR,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, text: str, timeout: float = BOOT_SECONDS) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if text in self.output():
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.1)
        pytest.fail(f"{self.name} did not print {text!r}:\n{self.tail()}", pytrace=False)

    def tail(self, lines: int = 40) -> str:
        return "\n".join(self.output().splitlines()[-lines:])

    def stop(self) -> None:
        if self.process.poll() is None:
            # Its own session: the signal reaches the children it started, and only them.
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=15)
        self._out.close()


@pytest.fixture
def celery_env(
    redis_url: str, postgres_default_database: None, subprocess_database_url: str
) -> Iterator[dict[str, str]]:
    """The environment of the worker and beat: the test database, a Redis of their own."""
    parts = urlsplit(redis_url)
    broker = urlunsplit((parts.scheme, parts.netloc, f"/{CELERY_REDIS_DB}", "", ""))
    client = redis.Redis.from_url(broker)
    client.flushdb()  # no tasks left over from an earlier run
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "sl5r.settings",
        "DATABASE_URL": subprocess_database_url,
        "REDIS_URL": broker,
        "SL5R_CLOCK": "celery",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }
    yield env
    client.flushdb()
    client.close()


@pytest.fixture
def start(celery_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[str], Service]]:
    """Start ``worker`` or ``beat``; everything started is stopped at the end."""
    started: list[Service] = []

    def run(kind: str) -> Service:
        celery = [sys.executable, "-m", "celery", "-A", "sl5r.celery"]
        if kind == "worker":
            argv = [
                *celery,
                "worker",
                "--pool=threads",
                "--concurrency=2",
                "--loglevel=INFO",
                "--without-gossip",
                "--without-mingle",
                "--without-heartbeat",
                f"--hostname=sl5r-test-{os.getpid()}@%h",
            ]
        else:
            argv = [
                *celery,
                "beat",
                "--loglevel=INFO",
                f"--schedule={tmp_path / 'beat-schedule'}",
            ]
        service = Service(kind, argv, celery_env, tmp_path / f"{kind}.log")
        started.append(service)
        return service

    yield run
    for service in reversed(started):
        service.stop()


def resolved(tournament: Tournament) -> list[Turn]:
    return list(
        Turn.objects.filter(campaign=tournament.campaign_id, status=Turn.Status.RESOLVED).order_by(
            "number"
        )
    )


def wait_for_resolved(tournament: Tournament, count: int, *services: Service) -> list[Turn]:
    end = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < end:
        turns = resolved(tournament)
        if len(turns) >= count:
            return turns
        time.sleep(0.1)
    logs = "\n\n".join(f"--- {s.name} ---\n{s.tail()}" for s in services)
    pytest.fail(f"{count} turns were not resolved in {WAIT_SECONDS} s\n{logs}", pytrace=False)


def assert_resolved_once_on_time(turns: list[Turn], lateness: timedelta) -> None:
    for turn in turns:
        assert turn.deadline is not None and turn.resolved_at is not None
        late = turn.resolved_at - turn.deadline
        assert timedelta(0) <= late <= lateness, f"turn {turn.number} resolved {late} late"
        assert turn.resolved_by == "clock"


def assert_no_turn_twice(tournament: Tournament) -> None:
    numbers = list(
        Turn.objects.filter(campaign=tournament.campaign_id)
        .order_by("number")
        .values_list("number", flat=True)
    )
    assert numbers == list(range(1, len(numbers) + 1))
    logged = Counter(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved").values_list(
            "turn", flat=True
        )
    )
    assert set(logged.values()) <= {1}
    assert sorted(logged) == [t.number for t in resolved(tournament)]


def test_a_celery_worker_and_beat_resolve_turns_on_time_exactly_once(
    start: Callable[[str], Service],
    celery_env: dict[str, str],
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """The tick sent for a deadline resolves that turn at the deadline; with beat running,
    three 2-second turns in a row are each resolved within 2.5 s of their deadline, once."""
    # given: a worker (without beat, only the tick sent for the deadline can resolve)
    worker = start("worker")
    worker.wait_for(" ready.")
    first = make_running_tournament(turn_seconds=TURN_SECONDS, turns_total=100)
    assert first.deadline is not None
    with app.connection_for_write(celery_env["REDIS_URL"]) as broker:
        tasks.tournament_tick.apply_async(args=[first.pk], eta=first.deadline, connection=broker)

    # when
    turns = wait_for_resolved(first, 1, worker)

    # then
    assert_resolved_once_on_time(turns[:1], ETA_LATENESS)

    # given: beat sweeping every 2 seconds, and a tournament that starts now
    beat = start("beat")
    beat.wait_for("Sending due task")
    second = make_running_tournament(turn_seconds=TURN_SECONDS, turns_total=100)
    started = timezone.now()

    # when
    turns = wait_for_resolved(second, 3, worker, beat)

    # then
    assert_resolved_once_on_time(turns[:3], SWEEP_LATENESS)
    assert turns[2].resolved_at is not None
    assert turns[2].resolved_at - started < timedelta(seconds=3 * TURN_SECONDS) + SWEEP_LATENESS * 3
    for tournament in (first, second):
        assert_no_turn_twice(tournament)
    assert "Traceback" not in worker.output(), worker.tail()
