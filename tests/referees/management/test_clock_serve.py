"""``manage.py serve``: Daphne and the in-process clock in one process, stopped by SIGTERM.

The server runs as a subprocess on this test's database (committed data); it must answer
HTTP and resolve a turn whose deadline passed before it started. The turns are an hour long
(``HELD_TURN_SECONDS``): the one the clock opens stays open however slow the test is.
"""

from __future__ import annotations

import io
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.utils import timezone

from referees.models import LogEntry, Tournament
from tests.judge_clock import HELD_TURN_SECONDS

pytestmark = pytest.mark.slow

BASE_DIR = Path(__file__).resolve().parents[3]
WAIT_SECONDS = 30.0
TURN = timedelta(seconds=HELD_TURN_SECONDS)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_until(condition: Callable[[], bool], timeout: float = WAIT_SECONDS) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


@pytest.fixture
def server_env(subprocess_database_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"REDIS_URL", "SECRET_KEY"}}
    env.update(
        DJANGO_SETTINGS_MODULE="sl5r.settings",
        DATABASE_URL=subprocess_database_url,
        SL5R_CLOCK="inprocess",
        SL5R_CLOCK_INTERVAL="0.2",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def serve(
    server_env: dict[str, str], tmp_path: Path
) -> Iterator[Callable[[int], subprocess.Popen[bytes]]]:
    started: list[subprocess.Popen[bytes]] = []

    def run(port: int) -> subprocess.Popen[bytes]:
        log = (tmp_path / "serve.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--host", "127.0.0.1", "--port", str(port)],
            cwd=BASE_DIR,
            env=server_env,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        started.append(process)
        return process

    yield run
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=15)


def test_serve_answers_http_and_its_clock_resolves_an_overdue_turn(
    serve: Callable[[int], subprocess.Popen[bytes]],
    make_running_tournament: Callable[..., Tournament],
    tmp_path: Path,
) -> None:
    """The server answers /healthz, its clock resolves the turn that ended while it was
    down, and SIGTERM stops it cleanly."""
    # given: turn 1 ended five minutes ago, with no server running
    tournament = make_running_tournament(
        turn_seconds=HELD_TURN_SECONDS, now=timezone.now() - TURN - timedelta(minutes=5)
    )
    port = free_port()

    # when
    process = serve(port)
    log = tmp_path / "serve.log"

    # then
    assert wait_until(lambda: "Serving SL5R Referee" in log.read_text()), log.read_text()
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=10) as response:
        assert response.status == 200
    assert wait_until(
        lambda: LogEntry.objects.filter(tournament=tournament, action="turn_resolved").exists()
    ), log.read_text()
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=WAIT_SECONDS) == 0, log.read_text()
    assert "turn clock stopped" in log.read_text()
    turns = list(tournament.campaign.turns.order_by("number").values_list("number", "status"))
    assert turns == [(1, "resolved"), (2, "open")]


def test_runclock_resolves_an_overdue_turn_and_stops_on_sigterm(
    server_env: dict[str, str],
    make_running_tournament: Callable[..., Tournament],
    tmp_path: Path,
) -> None:
    """``runclock`` alone (no web server) sweeps until SIGTERM, then exits cleanly."""
    # given
    tournament = make_running_tournament(
        turn_seconds=HELD_TURN_SECONDS, now=timezone.now() - TURN - timedelta(minutes=2)
    )
    log = tmp_path / "runclock.log"

    # when
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "manage.py", "runclock", "--interval", "0.2"],
            cwd=BASE_DIR,
            env=server_env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
        try:
            resolved = wait_until(
                lambda: LogEntry.objects.filter(
                    tournament=tournament, action="turn_resolved"
                ).exists()
            )
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=WAIT_SECONDS)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=15)

    # then
    assert resolved, log.read_text()
    assert code == 0, log.read_text()
    assert "Turn clock stopped." in log.read_text()


def test_runclock_once_resolves_what_is_due(
    make_running_tournament: Callable[..., Tournament], transactional_db: None
) -> None:
    """``runclock --once`` sweeps once and reports the steps it took."""
    make_running_tournament(
        turn_seconds=HELD_TURN_SECONDS, now=timezone.now() - TURN - timedelta(minutes=1)
    )
    out = io.StringIO()

    call_command("runclock", "--once", stdout=out)

    assert "1 step(s) taken." in out.getvalue()
