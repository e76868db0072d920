"""``manage.py createjudge``: a judge's account, its password printed once when made up."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

BASE_DIR = Path(__file__).resolve().parents[3]
GOOD_PASSWORD = "lantern-harbour-77"

pytestmark = pytest.mark.django_db


def _run(*args: str, stdin: str = "") -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    old_stdin = sys.stdin
    sys.stdin = io.StringIO(stdin)
    try:
        call_command("createjudge", *args, stdout=out, stderr=err)
    finally:
        sys.stdin = old_stdin
    return out.getvalue(), err.getvalue()


def _refused(*args: str, stdin: str = "") -> str:
    with pytest.raises(CommandError) as refused:
        _run(*args, stdin=stdin)
    assert refused.value.returncode == 2
    message = str(refused.value)
    assert "\n" not in message
    return message


def _signs_in(username: str, password: str) -> bool:
    return Client().login(username=username, password=password)


def test_without_a_password_one_is_made_up_and_printed_once() -> None:
    out, err = _run("anna")
    password = out.strip()
    assert len(password) >= 12
    assert 'Judge account "anna" created' in err
    assert "/accounts/sign-in/" in err
    user = get_user_model().objects.get(username="anna")
    assert user.is_active and not user.is_staff
    assert _signs_in("anna", password)


def test_a_password_given_is_used_and_not_printed() -> None:
    out, err = _run("anna", "--password", GOOD_PASSWORD)
    assert out == ""
    assert GOOD_PASSWORD not in err
    assert _signs_in("anna", GOOD_PASSWORD)


def test_a_password_on_standard_input() -> None:
    out, _err = _run("anna", "--password-stdin", stdin=GOOD_PASSWORD + "\n")
    assert out == ""
    assert _signs_in("anna", GOOD_PASSWORD)


def test_empty_standard_input_is_refused() -> None:
    assert "standard input" in _refused("anna", "--password-stdin", stdin="")
    assert not get_user_model().objects.filter(username="anna").exists()


def test_an_existing_account_is_refused_with_exit_2() -> None:
    _run("anna", "--password", GOOD_PASSWORD)
    message = _refused("Anna", "--password", "another-good-pass-9")
    assert 'already an account "anna"' in message
    assert "--reset-password" in message
    assert _signs_in("anna", GOOD_PASSWORD)


def test_reset_password_gives_an_existing_account_a_new_one() -> None:
    _run("anna", "--password", GOOD_PASSWORD)
    out, err = _run("anna", "--reset-password")
    assert 'The password of "anna" is set' in err
    assert _signs_in("anna", out.strip())
    assert not _signs_in("anna", GOOD_PASSWORD)


def test_reset_password_of_an_unknown_account_is_refused() -> None:
    assert 'no account "ghost"' in _refused("ghost", "--reset-password")


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (("anna", "--password", "123"), "password:"),
        (("annabelle", "--password", "annabelle1"), "password:"),
        (("has space",), "username:"),
        (("x" * 151,), "username:"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: Any, problem: str) -> None:
    assert _refused(*args).startswith(problem)
    assert not get_user_model().objects.exists()


@pytest.mark.slow  # a manage.py process of its own
def test_from_the_command_line_an_existing_account_exits_2_with_one_line(tmp_path: Path) -> None:
    env = {**os.environ, "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}"}
    env.pop("REDIS_URL", None)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"],
        cwd=BASE_DIR,
        env=env,
        check=True,
        capture_output=True,
    )
    command = [sys.executable, "manage.py", "createjudge", "anna"]
    first = subprocess.run(command, cwd=BASE_DIR, env=env, capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert len(first.stdout.strip().splitlines()) == 1

    again = subprocess.run(command, cwd=BASE_DIR, env=env, capture_output=True, text=True)
    assert again.returncode == 2
    lines = again.stderr.strip().splitlines()
    assert len(lines) == 1, again.stderr
    assert "already an account" in lines[0]
    assert again.stdout == ""
