"""Running ``python -m sl5r.cluster`` as a subprocess, as a user runs ``make cluster``: it
sets up, then becomes supervisord (deploy/supervisord.conf) running HAProxy, two ASGI
processes, a Celery worker and beat.

The cluster runs on the pytest-django test database (PostgreSQL: these tests run in the
PostgreSQL pass of ``make test``; the data a test makes is committed, ``transaction=True``)
and on Redis database ``CLUSTER_REDIS_DB``, emptied before and after. It picks its own free
ports (``--port 0 --asgi-ports 0,0``) and keeps its state in a temporary folder.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest
import redis

from sl5r.cluster import process_alive, supervisor
from tests.conftest import shared_test_database_url
from tests.referees.celery_processes import BASE_DIR, Service

CLUSTER_REDIS_DB = 12
# From the start to "cluster ready": migrate, collectstatic, loadmap, then five processes
# booting Django on a machine shared with other work.
READY_SECONDS = 180.0
STOP_SECONDS = 120.0
# Configuration the developer's shell may hold; the cluster gets only what a test gives it.
CONFIG_VARIABLES = (
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SL5R_CLOCK",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SL5R_TRUSTED_PROXIES",
    "SL5R_BALANCER_SOURCE",
    "SL5R_RATE_LIMITS",
)


def wait_until(condition: Callable[[], bool], timeout: float, step: float = 0.2) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(step)
    return condition()


def port_of(url: str) -> int:
    port = urlsplit(url).port
    assert port is not None, url
    return port


class Cluster:
    """A running ``python -m sl5r.cluster`` and what its ``cluster.json`` says."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        argv = [
            sys.executable,
            "-m",
            "sl5r.cluster",
            "--no-demo",
            "--port",
            "0",
            "--asgi-ports",
            "0,0",
            "--dir",
            str(directory),
        ]
        self.service = Service("cluster", argv, env, directory.parent / f"{directory.name}.log")
        self.env = env

    @property
    def process(self) -> subprocess.Popen[bytes]:
        return self.service.process

    def wait_ready(self) -> None:
        def done() -> bool:
            return "cluster ready:" in self.service.output() or self.process.poll() is not None

        wait_until(done, READY_SECONDS)
        if "cluster ready:" not in self.service.output():
            pytest.fail(f"the cluster did not get ready:\n{self.tails()}", pytrace=False)

    def info(self) -> dict[str, Any]:
        state: dict[str, Any] = json.loads((self.directory / "cluster.json").read_text())
        return state

    def supervisord_log(self) -> str:
        """supervisord's own lines: "spawned: 'asgi-1' with pid …", "stopped: …"."""
        try:
            return (self.directory / "logs" / "supervisord.log").read_text(errors="replace")
        except OSError:
            return ""

    def pid(self, program: str) -> int:
        """``program``'s pid now, as supervisord reports it (0 while it is not running)."""
        return int(supervisor(self.directory).getProcessInfo(program)["pid"])

    def tails(self) -> str:
        """supervisord's output and the end of every process's log, for a failure."""
        parts = [f"--- python -m sl5r.cluster ---\n{self.service.tail()}"]
        for log in sorted((self.directory / "logs").glob("*.log")):
            lines = log.read_text(errors="replace").splitlines()[-25:]
            parts.append(f"--- {log.name} ---\n" + "\n".join(lines))
        return "\n\n".join(parts)

    def stop_command(self) -> subprocess.CompletedProcess[str]:
        """``python -m sl5r.cluster stop --dir …``, as ``make cluster-stop`` runs it."""
        return subprocess.run(
            [sys.executable, "-m", "sl5r.cluster", "stop", "--dir", str(self.directory)],
            cwd=BASE_DIR,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=STOP_SECONDS + 10,
        )

    def cleanup(self) -> None:
        """Whatever happened, leave nothing running (supervisord stops its processes)."""
        if self.process.poll() is None:
            self.process.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=STOP_SECONDS)
        self.service.stop()
        for pid in self._child_pids():
            if process_alive(pid):
                os.killpg(pid, signal.SIGKILL)

    def _child_pids(self) -> list[int]:
        try:
            return [int(p) for p in self.info()["pids"].values() if p]
        except (OSError, ValueError, KeyError):
            return []


@pytest.fixture(scope="module")
def cluster_services(
    django_db_setup: None, django_db_blocker: Any, redis_url: str
) -> Iterator[tuple[str, str]]:
    """``(DATABASE_URL, REDIS_URL)`` for a cluster: the test database and Redis database 12.

    Skips in the SQLite pass: the cluster runs on PostgreSQL only. The cluster commits to
    the test database outside any test's transaction (``loadmap`` at its start, the
    tournaments the tests make), so the database is emptied after the module, as
    pytest-django does after a ``transaction=True`` test: a test run next on the same
    worker would otherwise find a map it never made.
    """
    from django.core.management import call_command
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip(
            "the cluster runs on PostgreSQL; `make test` runs this in its PostgreSQL pass "
            "(DATABASE_URL=postgres://…)"
        )
    parts = urlsplit(redis_url)
    broker = urlunsplit((parts.scheme, parts.netloc, f"/{CLUSTER_REDIS_DB}", "", ""))
    client = redis.Redis.from_url(broker)
    client.flushdb()
    try:
        yield shared_test_database_url(), broker
    finally:
        with django_db_blocker.unblock():
            call_command("flush", interactive=False, verbosity=0)
        client.flushdb()
        client.close()


@pytest.fixture(scope="module")
def cluster_start(
    cluster_services: tuple[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Callable[..., Cluster]]:
    """Start a cluster (waiting until it is ready); every one started is cleaned up."""
    from django.conf import settings

    database_url, redis_url = cluster_services
    env = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    env.update(DATABASE_URL=database_url, REDIS_URL=redis_url, PYTHONUNBUFFERED="1")
    # The join links and sessions the tests make are signed with this process's key.
    env["SECRET_KEY"] = settings.SECRET_KEY
    started: list[Cluster] = []

    def start(**extra: str) -> Cluster:
        cluster = Cluster(tmp_path_factory.mktemp("cluster"), {**env, **extra})
        started.append(cluster)
        cluster.wait_ready()
        return cluster

    try:
        yield start
    finally:
        for cluster in started:
            cluster.cleanup()
