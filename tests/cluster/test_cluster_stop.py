"""Stopping ``python -m sl5r.cluster`` (supervisord by then) with SIGTERM ends every
process it started.

A cluster of its own (the one of test_cluster.py is stopped with ``cluster stop`` at the
end of that module), on the test database and Redis database 12.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from collections.abc import Callable

import pytest

from sl5r.cluster import process_alive
from tests.cluster.conftest import STOP_SECONDS, Cluster
from tests.referees.celery_processes import BASE_DIR

pytestmark = [pytest.mark.postgres, pytest.mark.redis, pytest.mark.slow]


def group_alive(pgid: int) -> bool:
    """Whether any process is left in the process group ``pgid`` (a worker's pool, say)."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    # Zombies waiting for init to reap them still count for killpg: look at each.
    return any(
        process_alive(int(pid))
        for pid in os.listdir("/proc")
        if pid.isdigit() and _pgid(int(pid)) == pgid
    )


def _pgid(pid: int) -> int | None:
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def test_sigterm_stops_every_process_in_order_and_exits_0(
    cluster_start: Callable[[], Cluster],
) -> None:
    """SIGTERM: the balancer, the ASGI processes, beat and the worker stop in that order,
    none of their processes (nor a worker's pool) is left, supervisord's pid file and socket
    are removed, exit status 0. While it runs, a second cluster on the same folder is
    refused."""
    # given
    cluster = cluster_start()
    pids = cluster.info()["pids"]
    assert sorted(pids) == ["asgi-1", "asgi-2", "balancer", "beat", "worker"]
    assert all(process_alive(pid) for pid in pids.values())
    second = subprocess.run(
        [sys.executable, "-m", "sl5r.cluster", "--no-demo", "--dir", str(cluster.directory)],
        cwd=BASE_DIR,
        env=cluster.env,
        capture_output=True,
        text=True,
        timeout=60,
    )

    # when
    cluster.process.send_signal(signal.SIGTERM)
    code = cluster.process.wait(timeout=STOP_SECONDS)

    # then
    assert second.returncode == 2, second.stdout + second.stderr
    assert "already running" in second.stdout
    assert code == 0, cluster.tails()
    assert [name for name, pid in pids.items() if group_alive(pid)] == []
    assert not (cluster.directory / "supervisord.pid").exists()
    assert not (cluster.directory / "supervisor.sock").exists()
    output = cluster.supervisord_log()
    # supervisord's lines: "... INFO stopped: asgi-1 (exit status 0)"
    stopped = [
        line.split("stopped: ", 1)[1].split()[0]
        for line in output.splitlines()
        if "stopped: " in line
    ]
    # The two ASGI processes share a priority: they stop together, in either order.
    assert stopped[:1] == ["balancer"], output
    assert sorted(stopped[1:3]) == ["asgi-1", "asgi-2"], output
    assert stopped[3:] == ["beat", "worker"], output
