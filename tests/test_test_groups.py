"""The suite's own promise to itself: tests in one ``xdist_group`` run on one worker.

``make test`` spreads the tests over workers with ``--dist loadgroup``; the tests that
share a Redis database, a served site or the browser are kept together by the groups that
``tests/conftest.py`` gives them. If a pytest or pytest-xdist upgrade stopped honouring the
groups, nothing would say so: those tests would just race each other now and then (as the
cluster's rate-limit tests did under pytest 9.2, pytest-xdist#1386). This runs a small
suite the way ``make test`` runs ours and checks where its tests ran.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

GROUPED = """
import os
from pathlib import Path

import pytest


@pytest.mark.xdist_group("shared")
@pytest.mark.parametrize("n", range(6))
def test_grouped(n):
    (Path(__file__).parent / "ran" / f"{Path(__file__).stem}-{n}").write_text(
        os.environ["PYTEST_XDIST_WORKER"]
    )


@pytest.mark.parametrize("n", range(6))
def test_free(n):
    pass
"""


@pytest.mark.one_database("a scratch suite of its own that touches no database")
def test_a_group_spread_over_two_modules_runs_on_one_worker(tmp_path: Path) -> None:
    # given: two modules whose grouped tests would be spread round-robin without the group
    (tmp_path / "ran").mkdir()
    for name in ("test_first.py", "test_second.py"):
        (tmp_path / name).write_text(GROUPED)

    # when: run as `make test` runs the suite
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-n",
            "2",
            "--dist",
            "loadgroup",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:django",
            str(tmp_path),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    # then
    assert done.returncode == 0, done.stdout + done.stderr
    workers = {path.name: path.read_text() for path in (tmp_path / "ran").iterdir()}
    assert len(workers) == 12, workers
    assert len(set(workers.values())) == 1, workers
