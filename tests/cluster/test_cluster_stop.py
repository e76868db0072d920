"""Stopping ``python -m sl5r.cluster`` with SIGTERM ends every process it started.

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


def test_sigterm_stops_every_child_in_order_and_exits_0(
    cluster_start: Callable[[], Cluster],
) -> None:
    """SIGTERM: the proxy, the ASGI processes, beat and the worker stop in that order, none
    of their processes is left, cluster.json and the pid file are removed, exit status 0.
    While it runs, a second supervisor on the same folder is refused."""
    # given
    cluster = cluster_start()
    pids = cluster.info()["pids"]
    assert sorted(pids) == ["asgi-1", "asgi-2", "beat", "proxy", "worker"]
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
    assert not (cluster.directory / "cluster.json").exists()
    assert not (cluster.directory / "cluster.pid").exists()
    output = cluster.service.output()
    lines = output.splitlines()
    stopped = [line.split()[2] for line in lines if line.startswith("cluster: stopped ")]
    assert stopped == ["proxy", "asgi-1", "asgi-2", "beat", "worker"], output
