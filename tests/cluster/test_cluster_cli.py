"""``python -m sl5r.cluster``: its configuration and the refusals that need no cluster, and
the Celery worker it configures, run alone."""

from __future__ import annotations

import argparse
import os
import shlex
import stat
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone
from supervisor.options import ServerOptions

from referees import tasks
from referees.models import LogEntry, Tournament
from sl5r import celery as celery_app
from sl5r.cluster import (
    BALANCER_FILES_RESERVE,
    BALANCER_MAXCONN,
    BALANCER_SOURCE,
    SUPERVISORD_CONF,
    balancer_maxconn,
    cluster_environment,
    ports_parse,
    process_environment,
    redacted,
    secret_key_keep,
    worker_concurrency_default,
)
from strategic_map.models import Turn
from tests.cluster.conftest import CONFIG_VARIABLES
from tests.judge_clock import HELD_TURN_SECONDS
from tests.referees import celery_processes
from tests.referees.celery_processes import BASE_DIR, Service
from tests.referees.management.test_clock_serve import wait_until

# The worker's broker: the cluster tests' Redis database. They and this module's worker test
# are in one xdist group ("redis"), so they never run at the same time.
CELERY_REDIS_DB = 12
WAIT_SECONDS = 40.0

celery_env = celery_processes.celery_env


def run_cluster(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in CONFIG_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "sl5r.cluster", *args],
        cwd=BASE_DIR,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_environment_forces_the_celery_clock_and_defaults_to_production() -> None:
    """DEBUG off, plain HTTP on 127.0.0.1, the local services; SL5R_CLOCK is always celery."""
    env = cluster_environment({"SL5R_CLOCK": "inprocess", "PATH": "/bin"}, secret_key="k" * 50)

    assert env["SL5R_CLOCK"] == "celery"
    assert env["DEBUG"] == "0"
    assert env["SECURE_SSL_REDIRECT"] == "0"
    assert env["SECRET_KEY"] == "k" * 50
    assert env["DATABASE_URL"] == "postgres://postgres@127.0.0.1:5432/sl5r"
    assert env["REDIS_URL"] == "redis://127.0.0.1:6379/0"
    assert env["PATH"] == "/bin"


def test_what_the_caller_sets_wins_over_the_defaults() -> None:
    given = {
        "DATABASE_URL": "postgres://sl5r@db/sl5r",
        "REDIS_URL": "redis://redis:6379/3",
        "SECRET_KEY": "given",
        "SECURE_SSL_REDIRECT": "1",
        "ALLOWED_HOSTS": "referee.example.com",
    }

    env = cluster_environment(given, secret_key="generated")

    assert {name: env[name] for name in given} == given


def test_the_secret_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = secret_key_keep(tmp_path)
    second = secret_key_keep(tmp_path)

    assert first == second
    assert len(first) >= 50
    assert stat.S_IMODE((tmp_path / "secret_key").stat().st_mode) == 0o600


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("8001,x", "'x' is not a port number"),
        ("70000,8002", "not a port"),
        ("8001,8001", "twice"),
        ("8001", "two ports"),
        ("8001,8002,8003", "two ports"),
    ],
)
def test_bad_asgi_ports_are_refused(text: str, problem: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError, match=problem):
        ports_parse(text)


def test_asgi_ports_may_be_0_to_pick_free_ones() -> None:
    assert ports_parse("0,0") == [0, 0]
    assert ports_parse("8001, 8002") == [8001, 8002]


def test_passwords_are_left_out_of_messages() -> None:
    assert redacted("postgres://sl5r:s3cret@db:5432/sl5r") == "postgres://sl5r:***@db:5432/sl5r"
    assert redacted("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"


def test_a_sqlite_database_is_refused_with_one_line(tmp_path: Path) -> None:
    """The cluster runs on PostgreSQL: anything else stops it at once, exit status 2."""
    result = run_cluster(
        "--dir", str(tmp_path), "--port", "0", env={"DATABASE_URL": "sqlite:///db.sqlite3"}
    )

    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        "cluster: DATABASE_URL: the cluster runs on PostgreSQL (postgres://…), got "
        "sqlite:///db.sqlite3"
    ]
    assert not (tmp_path / "supervisord.pid").exists()


def test_a_database_elsewhere_that_does_not_answer_is_not_started(tmp_path: Path) -> None:
    """Only the local default addresses are started; any other is reported, exit 2."""
    url = "postgres://sl5r:s3cret@127.0.0.1:1/sl5r"

    result = run_cluster("--dir", str(tmp_path), "--port", "0", env={"DATABASE_URL": url})

    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        "cluster: PostgreSQL at postgres://sl5r:***@127.0.0.1:1/sl5r is not answering"
    ]


@pytest.mark.postgres
def test_a_redis_elsewhere_that_does_not_answer_is_not_started(
    tmp_path: Path, postgres_url: str
) -> None:
    result = run_cluster(
        "--dir",
        str(tmp_path),
        "--port",
        "0",
        env={"DATABASE_URL": postgres_url, "REDIS_URL": "redis://127.0.0.1:1/0"},
    )

    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        "cluster: Redis at redis://127.0.0.1:1/0 is not answering"
    ]


def test_stop_without_a_running_cluster_says_so(tmp_path: Path) -> None:
    result = run_cluster("stop", "--dir", str(tmp_path), env={})

    assert result.returncode == 1
    assert result.stderr.strip() == f"cluster: no cluster is running in {tmp_path}"


def test_the_processes_are_told_their_ports_and_to_trust_only_the_balancer(tmp_path: Path) -> None:
    """deploy/supervisord.conf and haproxy.cfg read these; HAProxy connects from 127.0.0.2,
    the one address whose X-Forwarded-For Django believes."""
    env = process_environment(
        {"PATH": "/bin"}, directory=tmp_path, port=8000, asgi_ports=[8001, 8002], concurrency=3
    )

    assert env["SL5R_BALANCER_BIND"] == "127.0.0.1:8000"
    assert (env["SL5R_ASGI_1"], env["SL5R_ASGI_2"]) == ("127.0.0.1:8001", "127.0.0.1:8002")
    assert (env["SL5R_ASGI_1_PORT"], env["SL5R_ASGI_2_PORT"]) == ("8001", "8002")
    assert env["SL5R_BALANCER_SOURCE"] == env["SL5R_TRUSTED_PROXIES"] == BALANCER_SOURCE
    assert env["SL5R_WORKER_CONCURRENCY"] == "3"
    assert env["SL5R_CLUSTER_DIR"] == str(tmp_path)


def test_trusted_proxies_the_caller_set_are_kept(tmp_path: Path) -> None:
    env = process_environment(
        {"SL5R_TRUSTED_PROXIES": "10.0.0.5"},
        directory=tmp_path,
        port=8000,
        asgi_ports=[8001, 8002],
        concurrency=2,
    )

    assert env["SL5R_TRUSTED_PROXIES"] == "10.0.0.5"


def test_without_haproxy_the_cluster_says_how_to_install_it(tmp_path: Path) -> None:
    """Checked before anything is set up; exit status 2 and one line."""
    result = run_cluster("--dir", str(tmp_path), "--port", "0", env={"PATH": str(tmp_path)})

    assert result.returncode == 2, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        "cluster: haproxy is not installed: apt-get install haproxy (make cluster does, as root)"
    ]


@pytest.mark.parametrize(("cores", "processes"), [(1, 2), (2, 2), (8, 8)])
def test_the_worker_runs_one_process_per_core_and_at_least_two(
    monkeypatch: pytest.MonkeyPatch, cores: int, processes: int
) -> None:
    """make cluster's default (--concurrency) and a worker's started without it
    (deploy/systemd) agree: every core resolves a tournament, and two even on one core."""
    monkeypatch.setattr(os, "sched_getaffinity", lambda _pid: set(range(cores)), raising=False)

    assert worker_concurrency_default() == processes
    assert celery_app.worker_concurrency_default() == processes


def test_the_celery_app_gives_a_worker_the_default_and_one_task_per_process() -> None:
    app = celery_app.app

    assert app.conf.worker_concurrency == celery_app.worker_concurrency_default()
    assert app.conf.worker_prefetch_multiplier == 1  # a process reserves one task only
    assert app.conf.task_acks_late is True


@pytest.mark.parametrize(
    ("files", "maxconn"),
    [(1_048_576, BALANCER_MAXCONN), (65_536, BALANCER_MAXCONN), (20_000, 9_872), (4_096, 1_920)],
)
def test_the_balancer_admits_as_many_connections_as_the_file_limit_allows(
    files: int, maxconn: int
) -> None:
    """Two files a connection, and some of HAProxy's own, never more than haproxy.cfg's."""
    assert balancer_maxconn(files) == maxconn
    assert 2 * maxconn + BALANCER_FILES_RESERVE <= files


def test_the_balancer_is_told_its_maxconn_unless_the_caller_chose_one(tmp_path: Path) -> None:
    sized = process_environment(
        {}, directory=tmp_path, port=8000, asgi_ports=[8001, 8002], concurrency=2, maxconn=9872
    )
    chosen = process_environment(
        {"SL5R_BALANCER_MAXCONN": "5000"},
        directory=tmp_path,
        port=8000,
        asgi_ports=[8001, 8002],
        concurrency=2,
        maxconn=9872,
    )

    assert sized["SL5R_BALANCER_MAXCONN"] == "9872"
    assert chosen["SL5R_BALANCER_MAXCONN"] == "5000"


def worker_command(directory: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The worker's command line as supervisord runs it, with make cluster's defaults."""
    env = process_environment(
        {},
        directory=directory,
        port=os.getpid(),  # the node's name: unique on this machine
        asgi_ports=[8001, 8002],
        concurrency=worker_concurrency_default(),
    )
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    (directory / "logs").mkdir()
    options = ServerOptions()
    options.realize(args=["-c", str(SUPERVISORD_CONF)])
    (worker,) = (
        process
        for group in options.process_group_configs
        for process in group.process_configs
        if process.name == "worker"
    )
    return shlex.split(worker.command)


def resolved_turns(tournament: Tournament) -> int:
    return Turn.objects.filter(campaign=tournament.campaign_id, status=Turn.Status.RESOLVED).count()


def waiting_for_a_lock() -> int:
    """Sessions of this database waiting for a row lock (a tick on the held tournament)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND wait_event_type = 'Lock'"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else 0


@pytest.mark.postgres
@pytest.mark.redis
@pytest.mark.slow
def test_the_cluster_worker_resolves_one_tournament_while_another_is_stuck(
    celery_env: dict[str, str],
    make_running_tournament: Callable[..., Tournament],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two tournaments due at the same moment, the first one's tick sent first and held on
    its lock (here by the test, as a long resolution would hold it): the second is resolved
    meanwhile, by another process of the worker make cluster starts. A worker of one
    process, a lock shared by all tournaments, or one process reserving both ticks would
    leave it waiting behind the first. Then the first is resolved too, each once."""
    worker = Service(
        "worker", worker_command(tmp_path, monkeypatch), celery_env, tmp_path / "w.log"
    )
    try:
        worker.wait_for(" ready.")
        # Turn 1 due a minute ago; turn 2, an hour long, cannot come due before the end.
        past = timezone.now() - timedelta(seconds=HELD_TURN_SECONDS + 60)
        stuck, other = (
            make_running_tournament(now=past, turn_seconds=HELD_TURN_SECONDS) for _ in range(2)
        )
        locked, release = threading.Event(), threading.Event()

        def hold() -> None:
            try:
                with transaction.atomic():
                    Tournament.objects.select_for_update().get(pk=stuck.pk)
                    locked.set()
                    release.wait(WAIT_SECONDS)
            finally:
                connections.close_all()  # this thread's own

        holder = threading.Thread(target=hold)
        holder.start()
        try:
            assert locked.wait(WAIT_SECONDS)
            with celery_app.app.connection_for_write(celery_env["REDIS_URL"]) as broker:
                # The worker's broker, whatever this process's settings name.
                options: dict[str, Any] = {"connection": broker}
                for tournament in (stuck, other):
                    tasks.tournament_tick.apply_async((tournament.pk,), **options)
            other_resolved = wait_until(lambda: resolved_turns(other) == 1)
            stuck_waiting = wait_until(lambda: waiting_for_a_lock() >= 1)
            stuck_meanwhile = resolved_turns(stuck)
        finally:
            release.set()
            holder.join(WAIT_SECONDS)
        stuck_resolved = wait_until(lambda: resolved_turns(stuck) == 1)
        # Both ticks finished (stopping the worker kills what is still running).
        both_done = wait_until(lambda: worker.output().count("succeeded in") >= 2)
        output = worker.output()
    finally:
        worker.stop()

    assert other_resolved and stuck_waiting, worker.tail()
    assert stuck_meanwhile == 0
    assert stuck_resolved, worker.tail()
    for tournament in (stuck, other):
        logged = LogEntry.objects.filter(tournament=tournament, action="turn_resolved")
        assert logged.count() == 1
    assert both_done and "Traceback" not in output, worker.tail()
