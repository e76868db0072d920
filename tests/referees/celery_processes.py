"""A real Celery worker and beat as subprocesses, for the tests that need them.

The worker and beat run against the Django test database (the test commits its data:
``transaction=True``; on PostgreSQL in the PostgreSQL pass of ``make test``) and a Redis
database of their own: a test module sets ``CELERY_REDIS_DB`` (default 14) so that two
modules never share a broker. A module uses the fixtures by naming them::

    from tests.referees import celery_processes

    celery_env = celery_processes.celery_env
    celery_start = celery_processes.celery_start

(an assignment, not ``from … import``, so that ruff does not take the fixture argument for
a redefinition of the import).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from referees import tasks
from referees.services.clock import STALL_SECONDS
from sl5r.celery import app

BASE_DIR = Path(__file__).resolve().parents[2]
DEFAULT_REDIS_DB = 14
BOOT_SECONDS = 45.0
# An upper bound on how late a clock acts after a deadline (a turn resolved, a phase ended):
# the product's own line between a clock that served the deadline and a stalled one
# (``referees.services.clock.STALL_SECONDS``: past the settle window, none in the tests, the
# clocks act "within a sweep or two"; later, the judges are told the deadline was missed).
# The tick sent for a deadline runs at it and beat sweeps every 2 s: well under a second on
# an idle machine, a few seconds on a loaded one (the tests print what they measured). A
# load that starves a worker this long has stalled it; no slow machine reaches it by chance.
LATENESS_MOST = timedelta(seconds=STALL_SECONDS)


class Service:
    """A subprocess started by a test, its output in a file, ended by its own id."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], log: Path) -> None:
        self.name = name
        self.log = log
        # Appended to: supervisord (tests/cluster) reopens its standard output by name.
        self._out = log.open("ab")
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


def deadline_tick_send(broker_url: str, tournament_id: int, deadline: datetime) -> None:
    """The tick a server running the Celery clock sends when a judge sets a deadline
    (``referees.kernel.deadlines.schedule_deadline``), on the worker's broker ``broker_url``: this
    test process, whose requests go through Django's test client, runs the in-process clock
    and sends none. Due at ``deadline`` (the tests run without a settle window)."""
    with app.connection_for_write(broker_url) as broker:
        tasks.tournament_tick.apply_async(args=[tournament_id], eta=deadline, connection=broker)


def service_tails(*services: Service) -> str:
    """The last lines each service printed, for a failure message."""
    return "\n\n".join(f"--- {s.name} ---\n{s.tail()}" for s in services)


@pytest.fixture
def celery_env(
    request: pytest.FixtureRequest,
    redis_url: str,
    postgres_default_database: None,
    subprocess_database_url: str,
) -> Iterator[dict[str, str]]:
    """The environment of the worker and beat: the test database, a Redis of their own.

    The Redis database is the test module's ``CELERY_REDIS_DB``; it is emptied before and
    after, so no task is left over from an earlier run.
    """
    parts = urlsplit(redis_url)
    number = int(getattr(request.module, "CELERY_REDIS_DB", DEFAULT_REDIS_DB))
    broker = urlunsplit((parts.scheme, parts.netloc, f"/{number}", "", ""))
    client = redis.Redis.from_url(broker)
    client.flushdb()
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
def celery_start(celery_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Service]]:
    """Start ``worker`` or ``beat``; everything started is stopped at the end.

    ``args`` go at the end of the command line and ``env`` overrides variables of
    ``celery_env`` (e.g. a worker's own ``--queues`` or ``DATABASE_URL``).
    """
    started: list[Service] = []

    def run(
        kind: str, *, args: Sequence[str] = (), env: Mapping[str, str] | None = None
    ) -> Service:
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
                f"--hostname=sl5r-test-{os.getpid()}-{len(started)}@%h",
            ]
        elif kind == "beat":
            argv = [
                *celery,
                "beat",
                "--loglevel=INFO",
                f"--schedule={tmp_path / f'beat-schedule-{len(started)}'}",
            ]
        else:
            raise ValueError(f"kind: worker or beat, not {kind!r}")
        service = Service(
            kind,
            [*argv, *args],
            {**celery_env, **(env or {})},
            tmp_path / f"{kind}-{len(started)}.log",
        )
        started.append(service)
        return service

    try:
        yield run
    finally:
        for service in reversed(started):
            service.stop()
