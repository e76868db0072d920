"""The plain baseline of benchmarks/engine_vs_plain.py adjudicates as the engine does.

The benchmark prints a ratio only when the two outputs are equal on its own turn; these
tests hold the baseline to the engine on the catalogue, on a generated busy turn, on random
scenarios and on format errors, so that the ratio compares the same work.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings

from benchmarks import plain_turn
from benchmarks.mapgen import generate_map, random_orders, spread_armies, turn_state
from sl5r.rules import map_from_dict
from sl5r.rules.casefile import (
    case_from_dict,
    case_from_json,
    case_run,
    case_to_dict,
    result_to_dict,
)
from sl5r.rules.errors import RulesInputError
from tests.rules.strategies import Scenario, scenarios

CASES = sorted((Path(__file__).resolve().parents[1] / "cases").glob("*.json"))


def engine_text(text: str, *, compact: bool = False) -> str:
    """What ``manage.py adjudicate`` prints, written with json.dumps."""
    result = result_to_dict(case_run(case_from_json(text)))
    return json.dumps(result, indent=None if compact else 2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_the_baseline_prints_what_the_engine_prints_for_every_catalogue_case(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert plain_turn.adjudicate_text(text) == engine_text(text)


def test_the_baseline_prints_what_the_engine_prints_for_a_busy_generated_turn() -> None:
    # given: 1,000 armies on 500 provinces, as the benchmark's turn but ten times smaller
    raw_map = generate_map(500, seed=3)
    game_map = map_from_dict(raw_map)
    armies = spread_armies(game_map, 1_000, seed=3)
    data = case_to_dict(
        state=turn_state(game_map, armies),
        orders=random_orders(game_map, armies, seed=3),
        draws={},
        map_ref=raw_map,
    )
    data["seed"] = 3
    text = json.dumps(data)
    # when, then
    out = json.loads(plain_turn.adjudicate_text(text))
    assert {o["outcome"] for o in out["orders"]} >= {"moved", "blocked", "held", "rejected"}
    assert out["draws"] and out["meetings"]
    for compact in (False, True):
        assert plain_turn.adjudicate_text(text, compact=compact) == engine_text(
            text, compact=compact
        )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_the_baseline_agrees_with_the_engine_on_random_scenarios(s: Scenario) -> None:
    text = json.dumps(s.as_case(), ensure_ascii=False)
    assert plain_turn.adjudicate(json.loads(text)) == result_to_dict(s.run())


LINE: dict[str, Any] = {
    "format": 1,
    "map": {
        "provinces": [
            {"id": "a", "home_clan": "crab", "castle": True},
            {"id": "b", "home_clan": None, "castle": False, "x": 1.5},
            {"id": "c", "home_clan": "lion", "castle": True},
        ],
        "borders": [["a", "b"], ["b", "c"]],
    },
    "armies": [
        {"id": "crab-1", "clan": "crab", "province": "a"},
        {"id": "lion-1", "clan": "lion", "province": "c"},
        {"id": "lion-2", "clan": "lion", "province": None, "destroyed_in_turn": 1},
    ],
    "orders": [{"army": "crab-1", "move": ["b"]}],
}


def changed(path: tuple[str | int, ...], value: object) -> dict[str, Any]:
    data = copy.deepcopy(LINE)
    here: Any = data
    for step in path[:-1]:
        here = here[step]
    here[path[-1]] = value
    return data


BAD = [
    changed(("format",), 2),
    changed(("colour",), 1),
    changed(("map",), "middle-earth"),
    changed(("map",), []),
    changed(("map", "provinces", 1, "x"), float("nan")),
    changed(("map", "provinces", 1, "name"), "b\ud83d"),
    changed(("map", "provinces", 1, "n\x00me"), "b"),
    changed(("map", "provinces", 1, "bad\ud800"), "b"),
    changed(("map", "id"), 2**64),
    changed(
        ("map", "name"), [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]
    ),
    changed(("map", "provinces", 1, "castle"), 3),
    changed(("map", "provinces", 1, "id"), "a"),
    changed(("map", "provinces", 1, "id"), "a|b"),
    changed(("map", "provinces", 1, "home_clan"), "orc"),
    changed(("map", "provinces", 1, "x"), "left"),
    changed(("map", "borders", 1), ["b", "b"]),
    changed(("map", "borders", 1), ["b", "zz"]),
    changed(("map", "borders", 1), ["b", "a"]),
    changed(("map", "borders", 1), "b-c"),
    changed(("map", "borders"), [["a", "b"]]),
    changed(("map", "width"), "wide"),
    changed(("settings",), []),
    changed(("settings",), {"clan_abilities": "yes"}),
    changed(("settings",), {"excluded_clans": ["orc"]}),
    changed(("turn",), 0),
    changed(("turn",), True),
    changed(("armies", 0, "clan"), "crabb"),
    changed(("armies", 1, "id"), "crab-1"),
    changed(("armies", 0, "province"), "zz"),
    changed(("armies", 0, "province"), None),
    changed(("armies", 0, "in_battle"), "no"),
    changed(("armies", 2, "destroyed_by"), "mistake"),
    changed(("armies", 2, "destroyed_in_turn"), 0),
    changed(("armies", 2, "province"), "a"),
    changed(("armies", 0, "destroyed_by"), "loss"),
    changed(("orders",), [{"army": "ghost"}]),
    changed(("orders",), [{"army": "crab-1"}, {"army": "crab-1"}]),
    changed(("orders", 0, "reform"), "a"),
    changed(("orders", 0, "move"), []),
    changed(("orders", 0, "move"), ["b", 3]),
    changed(("orders", 0, "on_swap"), "flee"),
    changed(("orders", 0, "claim"), "no"),
    changed(("orders", 0, "late"), 1),
    changed(("control",), {"zz": "crab"}),
    changed(("control",), {"b": "orc"}),
    changed(("draws",), {"b|a": "a"}),
    changed(("draws",), {"a|a": "a"}),
    changed(("draws",), {"a|b": "c"}),
    changed(("seed",), "seven"),
    changed(("expect",), []),
    changed(("draw_seed",), "00ff"),
    changed(("commitment",), 7),
]


@pytest.mark.parametrize("data", BAD, ids=lambda d: json.dumps(d)[-60:])
def test_the_baseline_refuses_a_bad_file_with_the_engine_s_message(data: dict[str, Any]) -> None:
    with pytest.raises(RulesInputError) as engine:
        case_from_dict(data)
    with pytest.raises(plain_turn.PlainInputError) as plain:
        plain_turn.adjudicate(data)
    assert str(plain.value) == str(engine.value)


def test_the_baseline_names_the_line_and_column_of_invalid_json() -> None:
    with pytest.raises(RulesInputError) as engine:
        case_from_json('{"format": 1,')
    with pytest.raises(plain_turn.PlainInputError) as plain:
        plain_turn.adjudicate_text('{"format": 1,')
    assert str(plain.value) == str(engine.value)
