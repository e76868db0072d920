"""The adjudication case catalogue (tests/cases/*.json), one scenario per file.

Each file states its situation and cites its rule; its ``expect`` was worked out from
rules.md by hand, so a failure here means the engine and the rules disagree.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sl5r.rules.casefile import case_from_json, case_run, expect_differences, result_to_dict

CASES_DIR = Path(__file__).resolve().parents[1] / "cases"
CASES = sorted(CASES_DIR.glob("*.json"))
RULE = re.compile(r"\bR\d+(\.\d+)?\b")


def test_catalogue_has_at_least_sixty_cases() -> None:
    assert len(CASES) >= 60


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_case(path: Path) -> None:
    case = case_from_json(path.read_text(encoding="utf-8"))
    assert RULE.search(case.description), "the description must cite its rule (R…)"
    assert case.expect, "a catalogue case needs an expect object"
    result = case_run(case)
    out = result_to_dict(result)
    assert all(d["method"] != "random" or case.seed is not None for d in out["draws"]), (
        "a random draw needs a seed, or the case is not repeatable"
    )
    assert expect_differences(case.expect, out) == []
