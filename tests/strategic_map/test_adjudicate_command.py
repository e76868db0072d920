"""``manage.py adjudicate``: a judge's offline check of a turn (case-format.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

pytestmark = pytest.mark.one_database(
    "manage.py adjudicate reads a case file and touches no database"
)

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((ROOT / "tests" / "cases").glob("*.json"))

SWAP = {
    "format": 1,
    "map": {
        "provinces": [
            {"id": "a", "home_clan": "crab", "castle": True},
            {"id": "b", "home_clan": "lion", "castle": True},
        ],
        "borders": [["a", "b"]],
    },
    "armies": [
        {"id": "crab-1", "clan": "crab", "province": "a"},
        {"id": "lion-1", "clan": "lion", "province": "b"},
    ],
    "orders": [{"army": "crab-1", "move": ["b"]}, {"army": "lion-1", "move": ["a"]}],
    "draws": {"a|b": "a"},
}


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "adjudicate", *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_prints_the_result_of_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "swap.json"
    path.write_text(json.dumps(SWAP))
    call_command("adjudicate", str(path))
    out = json.loads(capsys.readouterr().out)
    assert out["orders"] == [
        {"army": "crab-1", "outcome": "moved", "province": "b"},
        {"army": "lion-1", "outcome": "blocked", "province": "b"},
    ]
    assert out["draws"] == [{"provinces": ["a", "b"], "moving_from": "a", "method": "given"}]
    assert out["meetings"] == [{"province": "b", "armies": ["crab-1", "lion-1"], "new": True}]


def test_reads_standard_input_with_a_dash() -> None:
    done = run("-", "--compact", stdin=json.dumps(SWAP))
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["control"] == {"a": "crab", "b": "lion"}


def test_malformed_input_exits_2_with_one_line_naming_the_field() -> None:
    bad = dict(SWAP, armies=[{"id": "crab-1", "clan": "crabb", "province": "a"}], orders=[])
    done = run("-", stdin=json.dumps(bad))
    assert done.returncode == 2
    assert done.stderr.strip() == 'armies[0].clan: unknown clan "crabb"'
    assert done.stdout == ""


def test_not_json_and_missing_files_exit_2(tmp_path: Path) -> None:
    done = run("-", stdin="{")
    assert done.returncode == 2 and "not valid JSON" in done.stderr
    assert "Traceback" not in done.stderr
    missing = tmp_path / "nope.json"
    done = run(str(missing))
    assert done.returncode == 2
    assert done.stderr.strip() == f"{missing}: cannot read: No such file or directory"


def test_check_passes_on_the_whole_catalogue() -> None:
    done = run("--check", *[str(p) for p in CASES])
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip().endswith(f"{len(CASES)} passed, 0 failed")


def test_check_exits_1_on_the_first_difference(tmp_path: Path) -> None:
    wrong = dict(SWAP, expect={"armies": [{"id": "crab-1", "province": "a"}]})
    path = tmp_path / "wrong.json"
    path.write_text(json.dumps(wrong))
    done = run("--check", str(path), str(CASES[0]))
    assert done.returncode == 1
    assert f"FAIL {path}" in done.stdout
    assert 'armies[crab-1].province: expected "a", got "b"' in done.stdout
    assert str(CASES[0]) not in done.stdout  # stopped at the first difference


def test_check_refuses_a_file_without_expect(tmp_path: Path) -> None:
    path = tmp_path / "plain.json"
    path.write_text(json.dumps(SWAP))
    done = run("--check", str(path))
    assert done.returncode == 2
    assert "expect: missing" in done.stderr
