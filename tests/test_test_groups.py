"""The suite's own promise to itself: tests in one ``xdist_group`` run on one worker.

``make test`` spreads the tests over workers with ``--dist loadgroup``; the tests that
share a Redis database, a served site or the browser are kept together by the groups that
``tests/conftest.py`` gives them. If a pytest or pytest-xdist upgrade stopped honouring the
groups, nothing would say so: those tests would just race each other now and then (as the
cluster's rate-limit tests did under pytest 9.2, pytest-xdist#1386). This runs a small
suite the way ``make test`` runs ours and checks where its tests ran.
"""

from __future__ import annotations

import ast
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


def _assigned(path: Path, name: str) -> object:
    """The value ``name`` is given at the top of a file (read, not imported: importing a
    conftest or a test module a second time would confuse pytest's own)."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in node.targets
        ):
            return ast.literal_eval(node.value)
    return None


@pytest.mark.one_database("reads the suite's own table of Redis databases")
def test_no_two_redis_groups_share_a_redis_database() -> None:
    """Modules with Redis databases of their own run at once on different workers: their
    ``redis_url`` databases, the Celery brokers', the cluster's and the shared group's (15)
    must all differ, and each module in the table must exist."""
    root = Path(__file__).resolve().parents[1]
    table = _assigned(root / "tests" / "conftest.py", "REDIS_DATABASES")
    cluster = _assigned(root / "tests" / "cluster" / "conftest.py", "CLUSTER_REDIS_DB")
    default = _assigned(root / "tests" / "referees" / "celery_processes.py", "DEFAULT_REDIS_DB")
    assert isinstance(table, dict) and table and isinstance(cluster, int)
    owners: dict[object, set[str]] = {15: {"shared"}, cluster: {"cluster"}}
    for module, number in table.items():
        assert (root / module).is_file(), module
        owners.setdefault(number, set()).add(module)
        broker = _assigned(root / module, "CELERY_REDIS_DB")
        if broker is not None:
            owners.setdefault(broker, set()).add(module)
    shared = {number: users for number, users in owners.items() if len(users) > 1}
    assert not shared, shared
    # A Celery module without a broker database of its own would share the default one.
    for path in (root / "tests").rglob("test_*.py"):
        text = path.read_text()
        if "celery_env" in text and "CELERY_REDIS_DB = " not in text:
            pytest.fail(f"{path.relative_to(root)} uses celery_env without CELERY_REDIS_DB")
    assert default not in {15, cluster}
