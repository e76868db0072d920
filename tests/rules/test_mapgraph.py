"""The map: loading, validation and the bundled Rokugan map (R2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from sl5r.rules.clans import CLANS
from sl5r.rules.errors import MapError
from sl5r.rules.mapgraph import map_from_dict, rokugan_map

SHARED_MAP = Path(__file__).resolve().parents[3] / "shared" / "design" / "rokugan-map.json"


def small_map(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "provinces": [
            {"id": "a", "home_clan": "crab", "castle": True},
            {"id": "b", "home_clan": "lion", "castle": "Shiro B"},
            {"id": "c", "home_clan": None, "castle": None, "impassable": True},
        ],
        "borders": [["a", "b"], ["b", "c"]],
    }
    data.update(changes)
    return data


def test_r2_bundled_map_has_39_provinces_and_85_borders() -> None:
    game_map = rokugan_map()
    assert len(game_map.provinces) == 39
    assert len(game_map.borders) == 85


def test_r2_bundled_map_gives_two_castles_to_every_clan_and_three_to_crane() -> None:
    game_map = rokugan_map()
    for clan in CLANS:
        expected = 3 if clan == "crane" else 2
        assert game_map.starting_castles(clan) == expected, clan
        assert len(game_map.home_provinces[clan]) == (5 if clan == "crane" else 4)


def test_r2_bundled_map_is_exactly_the_design_map() -> None:
    if not SHARED_MAP.exists():
        pytest.skip("../shared/design/rokugan-map.json is not beside this checkout")
    shared = json.loads(SHARED_MAP.read_text(encoding="utf-8"))
    game_map = rokugan_map()
    assert {(p["id"], p["home_clan"], p["castle"]) for p in shared["provinces"]} == {
        (p.id, p.home_clan, p.castle) for p in game_map.provinces.values()
    }
    assert {frozenset(b) for b in shared["borders"]} == {frozenset(b) for b in game_map.borders}


def test_adjacency_is_symmetric() -> None:
    game_map = map_from_dict(small_map())
    assert game_map.adjacent("a", "b") and game_map.adjacent("b", "a")
    assert not game_map.adjacent("a", "c")


def test_castle_true_takes_the_province_name_and_false_means_none() -> None:
    game_map = map_from_dict(small_map())
    assert game_map.provinces["a"].castle == "a"
    assert game_map.provinces["b"].castle == "Shiro B"
    assert game_map.provinces["c"].castle is None
    assert game_map.castles == {"a", "b"}


def test_r1_excluded_clan_lands_are_blocked_with_impassable_terrain() -> None:
    game_map = map_from_dict(small_map())
    assert game_map.blocked_provinces() == {"c"}
    assert game_map.blocked_provinces({"lion"}) == {"b", "c"}
    assert game_map.initial_control({"lion"}) == {"a": "crab", "b": None, "c": None}


def test_map_round_trips_through_to_dict() -> None:
    game_map = rokugan_map()
    again = map_from_dict(game_map.to_dict())
    assert again.provinces == game_map.provinces
    assert again.borders == game_map.borders


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"provinces": []}, "map.provinces: must be a non-empty list"),
        (small_map(borders=[["a", "x"]]), 'map.borders[0]: unknown province "x"'),
        (small_map(borders=[["a", "a"]]), 'map.borders[0]: joins "a" to itself'),
        (
            small_map(borders=[["a", "b"], ["b", "a"], ["b", "c"]]),
            'map.borders[1]: the border "b"–"a" is given twice',
        ),
        (small_map(borders=[["a", "b"]]), '"c" cannot be reached from "a"'),
        (small_map(borders="a-b"), "map.borders: must be a list"),
        (small_map(borders=[["a"]]), "map.borders[0]: must be a pair of province ids"),
        (small_map(colour="red"), "map.colour: unknown field"),
        (
            {"provinces": [{"id": "a", "home_clan": "crabb", "castle": False}]},
            'map.provinces[0].home_clan: unknown clan "crabb"',
        ),
        (
            {"provinces": [{"id": "a", "castle": False}, {"id": "a", "castle": False}]},
            'map.provinces[1].id: "a" is given twice',
        ),
        ({"provinces": [{"id": "", "castle": False}]}, "map.provinces[0].id: must be a non-empty"),
        ({"provinces": [{"id": "a|b"}]}, 'map.provinces[0].id: "a|b" may not contain "|"'),
        ({"provinces": [{"id": "a", "castle": 3}]}, "map.provinces[0].castle: must be true"),
        ({"provinces": [{"id": "a", "x": "left"}]}, "map.provinces[0].x: must be a number"),
        ({"provinces": [{"id": "a", "impassable": "yes"}]}, "map.provinces[0].impassable"),
        ({"provinces": [{"id": "a", "size": 3}]}, "map.provinces[0].size: unknown field"),
        ({"provinces": ["a"]}, "map.provinces[0]: must be an object"),
        ({"provinces": [{"id": "a"}], "clans": ["crab", "orc"]}, "map.clans: must list clans"),
    ],
)
def test_bad_map_is_refused_with_the_place_and_the_problem(
    data: dict[str, Any], message: str
) -> None:
    with pytest.raises(MapError) as caught:
        map_from_dict(data)
    assert message in str(caught.value)
    assert "\n" not in str(caught.value)


def test_disconnected_map_error_lists_the_unreachable_provinces() -> None:
    data = {
        "provinces": [{"id": x} for x in "abcd"],
        "borders": [["a", "b"], ["c", "d"]],
    }
    with pytest.raises(MapError, match='"c", "d" cannot be reached from "a"'):
        map_from_dict(data)


@pytest.mark.parametrize(
    ("province", "message"),
    [
        ({"id": "b", "x": float("nan")}, "map.provinces[1].x: must be a finite number, not NaN"),
        ({"id": "b", "y": 2**63}, "map.provinces[1].y: the integer 9223372036854775808 is out"),
        ({"id": "b", "name": "B\x00"}, "map.provinces[1].name: contains a NUL character"),
        ({"id": "b\ud83d"}, "map.provinces[1].id: contains a lone surrogate (U+D83D)"),
        ({"id": "b", "castle": "Shiro \udc00"}, "map.provinces[1].castle: contains a lone"),
        ({"id": "b", "n\x00te": 1}, "map.provinces[1].n\\x00te: contains a NUL character"),
    ],
)
def test_a_value_that_cannot_be_stored_is_named_before_any_other_problem(
    province: dict[str, Any], message: str
) -> None:
    """The storable-JSON check comes first (jsonvalue.py), even in a map with a later error
    (here an unknown field and a border to nowhere) and even in a province that is valid."""
    data = {
        "provinces": [{"id": "a"}, province, {"id": "c", "size": 3}],
        "borders": [["a", "b"], ["b", "zz"]],
    }
    with pytest.raises(MapError) as caught:
        map_from_dict(data)
    assert str(caught.value).startswith(message)


def test_unusual_but_valid_rows_build_the_same_map_as_plain_ones() -> None:
    """Rows the quick pass leaves to the exact checks (a str subclass, ints for x and y, a
    non-ASCII name) give the map the plain rows give."""

    class Text(str):
        pass

    plain = small_map()
    odd = small_map()
    odd["provinces"][0] = {**odd["provinces"][0], "name": Text("Земли Краба"), "x": 3, "y": 4}
    plain["provinces"][0] = {**plain["provinces"][0], "name": "Земли Краба", "x": 3.0, "y": 4.0}
    assert map_from_dict(odd) == map_from_dict(plain)
