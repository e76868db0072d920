"""``python -m sl5r.cluster``: its configuration and the refusals that need no cluster."""

from __future__ import annotations

import argparse
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from sl5r.cluster import (
    BALANCER_SOURCE,
    cluster_environment,
    ports_parse,
    process_environment,
    redacted,
    secret_key_keep,
)
from tests.cluster.conftest import CONFIG_VARIABLES
from tests.referees.celery_processes import BASE_DIR


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
