"""Case files (format 1): reading, format errors, writing, and comparing with ``expect``."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from sl5r.rules.casefile import (
    case_from_dict,
    case_from_json,
    case_run,
    case_to_dict,
    expect_differences,
    result_to_dict,
    result_to_json,
)
from sl5r.rules.errors import CaseFormatError

LINE = {
    "provinces": [
        {"id": "a", "home_clan": "crab", "castle": True},
        {"id": "b", "home_clan": None, "castle": False},
        {"id": "c", "home_clan": "lion", "castle": True},
    ],
    "borders": [["a", "b"], ["b", "c"]],
}


def case(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "format": 1,
        "map": LINE,
        "armies": [
            {"id": "crab-1", "clan": "crab", "province": "a"},
            {"id": "lion-1", "clan": "lion", "province": "c"},
        ],
        "orders": [{"army": "crab-1", "move": ["b"]}],
    }
    data.update(changes)
    return data


def army(**fields: Any) -> dict[str, Any]:
    return {"id": "x", "clan": "crab", "province": "a", **fields}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"format": 2}, "format: must be 1, not 2"),
        ({"colour": 1}, "colour: unknown field"),
        ({"map": "middle-earth"}, 'map: unknown map "middle-earth"'),
        ({"map": {"provinces": []}}, "map.provinces: must be a non-empty list"),
        ({"turn": 0}, "turn: must be at least 1, not 0"),
        ({"turn": "3"}, 'turn: must be a whole number, not "3"'),
        ({"settings": {"clan_abilities": "yes"}}, "settings.clan_abilities: must be true or false"),
        (
            {"settings": {"excluded_clans": ["orc"]}},
            'settings.excluded_clans[0]: unknown clan "orc"',
        ),
        ({"settings": {"speed": 2}}, "settings.speed: unknown field"),
        ({"armies": [army(clan="crabb")]}, 'armies[0].clan: unknown clan "crabb"'),
        ({"armies": [army(), army()]}, 'armies[1].id: "x" is given twice'),
        ({"armies": [army(id=3)]}, "armies[0].id: must be a non-empty string"),
        ({"armies": [army(province="zz")]}, 'armies[0].province: unknown province "zz"'),
        ({"armies": [army(province=None)]}, "armies[0].province: required for an army"),
        ({"armies": [army(destroyed_in_turn=1)]}, "armies[0].province: must be null"),
        (
            {"armies": [army(province=None, destroyed_in_turn=1, destroyed_by="mistake")]},
            'armies[0].destroyed_by: must be "loss" or "winner"',
        ),
        (
            {"armies": [army(province=None, destroyed_in_turn=0)]},
            "armies[0].destroyed_in_turn: must be at least 1",
        ),
        (
            {"armies": [army(province=None, destroyed_in_turn=1, in_battle=True)]},
            "armies[0].in_battle: a destroyed army is in no battle",
        ),
        ({"armies": [army(destroyed_by="loss")]}, "armies[0].destroyed_by: only for a destroyed"),
        ({"armies": [army(speed=1)]}, "armies[0].speed: unknown field"),
        (
            {"settings": {"excluded_clans": ["crab"]}, "armies": [army()]},
            'armies[0].clan: clan "crab" is excluded',
        ),
        (
            {"armies": [army(clan="lion", province="a")], "settings": {"excluded_clans": ["crab"]}},
            'armies[0].province: "a" is impassable',
        ),
        ({"orders": [{"army": "ghost"}]}, 'orders[0].army: unknown army "ghost"'),
        (
            {"orders": [{"army": "crab-1"}, {"army": "crab-1", "move": ["b"]}]},
            'orders[1].army: a second order for "crab-1"',
        ),
        (
            {"orders": [{"army": "crab-1", "move": ["b"], "reform": "a"}]},
            "orders[0]: give move or reform, not both",
        ),
        ({"orders": [{"army": "crab-1", "move": []}]}, "orders[0].move: must be a list of one"),
        ({"orders": [{"army": "crab-1", "move": "b"}]}, "orders[0].move: must be a list of one"),
        ({"orders": [{"army": "crab-1", "claim": "no"}]}, "orders[0].claim: must be true or false"),
        ({"orders": [{"army": "crab-1", "on_swap": "flee"}]}, 'orders[0].on_swap: must be "stay"'),
        ({"orders": [{"army": "crab-1", "reform": 3}]}, "orders[0].reform: must be a province id"),
        ({"orders": [{"army": "crab-1", "mvoe": ["b"]}]}, "orders[0].mvoe: unknown field"),
        ({"control": {"zz": "crab"}}, "control.zz: unknown province"),
        ({"control": {"b": "orc"}}, 'control.b: unknown clan "orc"'),
        ({"draws": {"b|a": "a"}}, 'draws.b|a: write the two provinces sorted: "a|b"'),
        ({"draws": {"a|b|c": "a"}}, "draws.a|b|c: the key must be two province ids"),
        ({"draws": {"a|b": "c"}}, 'draws.a|b: "c" is not one of a, b'),
        ({"seed": "seven"}, 'seed: must be a whole number, not "seven"'),
        ({"expect": []}, "expect: must be an object"),
    ],
)
def test_format_errors_name_the_field_and_the_problem(
    changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(CaseFormatError) as caught:
        case_from_dict(case(**changes))
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_invalid_json_names_line_and_column() -> None:
    with pytest.raises(CaseFormatError, match="line 1 column 2: not valid JSON"):
        case_from_json("{oops}")


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(CaseFormatError, match="must be an object"):
        case_from_json("[1, 2]")


def test_defaults_control_home_provinces_and_turn_one() -> None:
    loaded = case_from_dict(case())
    assert loaded.state.turn == 1
    assert dict(loaded.state.control) == {"a": "crab", "b": None, "c": "lion"}
    assert loaded.state.settings.clan_abilities


def test_result_document_has_every_field_of_the_format() -> None:
    out = result_to_dict(case_run(case_from_dict(case())))
    assert set(out) == {
        "format",
        "turn",
        "armies",
        "orders",
        "draws",
        "meetings",
        "reinforcements",
        "control",
        "scores",
        "small_farms",
    }
    assert out["orders"] == [{"army": "crab-1", "outcome": "moved", "province": "b"}]
    assert out["control"] == {"a": "crab", "b": "crab", "c": "lion"}
    json.dumps(out)  # serialisable as it stands


def test_case_written_back_reads_to_the_same_state() -> None:
    data = case(
        settings={"clan_abilities": False, "excluded_clans": ["unicorn"]},
        turn=4,
        control={"b": "lion"},
        armies=[
            {"id": "crab-1", "clan": "crab", "province": "a", "in_battle": True},
            {"id": "lion-1", "clan": "lion", "province": "a", "in_battle": True},
            {"id": "lion-2", "clan": "lion", "province": None, "destroyed_in_turn": 2},
        ],
        orders=[{"army": "lion-2", "reform": "c", "claim": False}],
        draws={"a|b": "b"},
    )
    loaded = case_from_dict(data)
    written = case_to_dict(
        state=loaded.state, orders=loaded.orders, draws=loaded.draws, map_ref=LINE
    )
    again = case_from_dict(written)
    assert again.state == loaded.state
    assert again.orders == loaded.orders
    assert again.draws == loaded.draws


def test_seed_makes_the_random_draw_repeatable() -> None:
    data = case(
        orders=[{"army": "crab-1", "move": ["b"]}],
        armies=[
            {"id": "crab-1", "clan": "crab", "province": "a"},
            {"id": "lion-1", "clan": "lion", "province": "b"},
        ],
    )
    data["orders"].append({"army": "lion-1", "move": ["a"]})
    for seed in range(5):
        first = result_to_dict(case_run(case_from_dict({**data, "seed": seed})))
        second = result_to_dict(case_run(case_from_dict({**data, "seed": seed})))
        assert first == second
        expected = random.Random(seed).choice(["a", "b"])
        assert first["draws"][0]["moving_from"] == expected
        assert first["draws"][0]["source"] == f"seed {seed}"


OUTPUT = {
    "turn": 2,
    "armies": [{"id": "x", "province": "a"}, {"id": "y", "province": "b"}],
    "orders": [{"army": "x", "outcome": "rejected", "reason": "late: the order arrived late"}],
    "meetings": [{"province": "b", "armies": ["y", "z"], "new": True}],
    "control": {"a": "crab", "b": None},
}


@pytest.mark.parametrize(
    "expect",
    [
        {"turn": 2},
        {"armies": [{"id": "y", "province": "b"}]},
        {"orders": [{"army": "x", "reason": "late"}]},
        {"orders": [{"army": "x", "reason": "late: the order arrived late"}]},
        {"meetings": [{"province": "b", "armies": ["z", "y"]}]},
        {"control": {"b": None}},
    ],
)
def test_expect_is_a_subset_of_the_output(expect: dict[str, Any]) -> None:
    assert expect_differences(expect, OUTPUT) == []


@pytest.mark.parametrize(
    ("expect", "problem"),
    [
        ({"turn": 3}, "turn: expected 3, got 2"),
        ({"armies": [{"id": "y", "province": "a"}]}, 'armies[y].province: expected "a"'),
        ({"armies": [{"id": "w"}]}, 'armies: no entry with id "w"'),
        ({"orders": [{"army": "x", "reason": "lat"}]}, "orders[x].reason"),
        ({"meetings": []}, "meetings: expected []"),
        ({"meetings": [{"province": "b", "armies": ["y"]}]}, "meetings: expected"),
        ({"control": {"b": "crab"}}, 'control.b: expected "crab", got null'),
        ({"scores": {}}, "scores: expected {}, but the output has no such field"),
        ({"turn": 2.0}, "turn: expected 2.0, got 2"),
    ],
)
def test_expect_differences_name_the_place(expect: dict[str, Any], problem: str) -> None:
    problems = expect_differences(expect, OUTPUT)
    assert any(problem in p for p in problems), problems


# --- the output's JSON text ---------------------------------------------------------------

CATALOGUE = sorted((Path(__file__).resolve().parents[1] / "cases").glob("*.json"))
ODD_NAMES = {
    "format": 1,
    "map": {
        "provinces": [
            {"id": 'quote"é/\\', "home_clan": "crab", "castle": True},
            {"id": "b\u2028\t", "home_clan": "lion", "castle": True},
        ],
        "borders": [['quote"é/\\', "b\u2028\t"]],
    },
    "armies": [
        {"id": "crab-\u00e9\u0001", "clan": "crab", "province": 'quote"é/\\'},
        {"id": "lion-1", "clan": "lion", "province": "b\u2028\t"},
    ],
    "orders": [
        {"army": "crab-\u00e9\u0001", "move": ["b\u2028\t"]},
        {"army": "lion-1", "move": ["nowhere \ud83d\ude00"]},
    ],
    "seed": 3,
}


@pytest.mark.parametrize("path", CATALOGUE, ids=lambda p: p.stem)
@pytest.mark.parametrize("indent", [None, 2, 4])
def test_result_to_json_writes_the_text_json_dumps_writes(path: Path, indent: int | None) -> None:
    """The command prints ``result_to_json``: the same bytes as json.dumps of the output
    document (docs/adjudication.md, "Output"), with or without --compact."""
    result = case_run(case_from_json(path.read_text(encoding="utf-8")))
    expected = json.dumps(result_to_dict(result), indent=indent, ensure_ascii=False)
    assert result_to_json(result, indent=indent) == expected


@pytest.mark.parametrize("indent", [None, 2])
def test_result_to_json_escapes_ids_and_names_as_json_dumps_does(indent: int | None) -> None:
    result = case_run(case_from_dict(ODD_NAMES))
    expected = json.dumps(result_to_dict(result), indent=indent, ensure_ascii=False)
    assert result_to_json(result, indent=indent) == expected
    assert json.loads(result_to_json(result, indent=indent)) == result_to_dict(result)
