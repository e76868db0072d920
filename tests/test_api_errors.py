"""Errors are domain codes; the HTTP status is the transport's table (sl5r/api_errors.py)."""

from __future__ import annotations

import ast
from pathlib import Path

from referees.kernel.core import TournamentError
from sl5r.api_errors import ERROR_STATUS, error_status

BASE_DIR = Path(__file__).resolve().parents[1]
APPS = ("referees", "battles", "strategic_map", "sl5r")
REFUSING = frozenset({"refusal", "TournamentError", "lineup_refusal"})


def raised_codes() -> dict[str, list[str]]:
    """Every literal code a refusal is built with in the code base, and where."""
    found: dict[str, list[str]] = {}
    for app in APPS:
        for path in sorted((BASE_DIR / app).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if not isinstance(node, ast.Call):
                    continue
                func = node.func
                name = getattr(func, "id", None) or getattr(func, "attr", None)
                if name not in REFUSING:
                    continue
                candidates = [*node.args[1:2], *(k.value for k in node.keywords if k.arg == "code")]
                for value in candidates:
                    for literal in ast.walk(value):
                        if isinstance(literal, ast.Constant) and isinstance(literal.value, str):
                            where = f"{path.relative_to(BASE_DIR)}:{node.lineno}"
                            found.setdefault(literal.value, []).append(where)
    return found


def test_every_code_a_service_refuses_with_has_an_http_status() -> None:
    codes = raised_codes()
    # The scan must see the code base's refusals, or the test would pass on nothing.
    assert {"phase", "late", "not_found", "validation", "lineup_incomplete"} <= set(codes)
    missing = {code: places for code, places in codes.items() if code not in ERROR_STATUS}
    assert not missing, f"codes with no HTTP status in sl5r/api_errors.py: {missing}"


def test_every_status_in_the_table_is_a_client_error() -> None:
    assert all(400 <= status < 500 for status in ERROR_STATUS.values())


def test_the_refusal_itself_carries_no_http_status() -> None:
    error = TournamentError("turn 3 is over", code="late")

    assert not hasattr(error, "status")
    assert error_status(error) == 409
