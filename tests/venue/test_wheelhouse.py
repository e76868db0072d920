"""A second laptop is installed from a USB folder with no network (issue 31).

A venue often has no internet, and ``make install`` needed a package index (7 min here).
``make wheelhouse DIR=…`` puts the project and every pinned package, as wheels for this
platform, in ``DIR/sl5r-referee``; there ``make install`` takes them from its wheelhouse
alone. The test makes the folder, then installs it with pip's configuration ignored and its
index pointed at a port nothing listens on, and runs Django's checks with what it installed.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.venue.laptop import BASE_DIR

pytestmark = pytest.mark.slow

UNREACHABLE_INDEX = "http://127.0.0.1:9/simple"  # the discard port: no index answers there


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args,
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )


def test_a_laptop_with_no_package_index_installs_from_the_usb_folder(tmp_path: Path) -> None:
    usb = tmp_path / "usb"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "VIRTUAL_ENV"))}
    made = run(["make", "--no-print-directory", "wheelhouse", f"DIR={usb}"], BASE_DIR, env)
    assert made.returncode == 0, made.stdout + made.stderr
    project = usb / "sl5r-referee"
    assert (project / "manage.py").is_file()
    assert not (project / ".venv").exists() and not (project / "db.sqlite3").exists()

    offline = {
        **env,
        "PIP_CONFIG_FILE": os.devnull,  # not this machine's package mirrors
        "PIP_INDEX_URL": UNREACHABLE_INDEX,
        "PIP_DEFAULT_TIMEOUT": "5",
    }
    installed = run(["make", "--no-print-directory", "install"], project, offline)
    assert installed.returncode == 0, installed.stdout + installed.stderr

    checked = run([str(project / ".venv/bin/python"), "manage.py", "check"], project, offline)
    assert checked.returncode == 0, checked.stdout + checked.stderr
