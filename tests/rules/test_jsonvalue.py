"""``sl5r.rules.jsonvalue``: what no database or page could hold is found, with its place."""

from __future__ import annotations

import math
import re
from typing import Any

import pytest

from sl5r.rules.errors import MapError
from sl5r.rules.jsonvalue import (
    INT_MAX,
    INT_MIN,
    MAX_DEPTH,
    JsonProblem,
    JsonValueError,
    json_value_check,
    json_value_problem,
)
from sl5r.rules.mapgraph import map_from_dict, rokugan_map
from sl5r.rules.roles import lineup_seating_check


def deep(levels: int) -> Any:
    value: Any = 0
    for _ in range(levels):
        value = {"a": value}
    return value


@pytest.mark.parametrize(
    ("value", "place", "problem"),
    [
        pytest.param({"x": [1, math.nan]}, "x[1]", JsonProblem.NOT_FINITE, id="nan"),
        pytest.param({"x": -math.inf}, "x", JsonProblem.NOT_FINITE, id="minus-infinity"),
        pytest.param({"n": ["ok", "\ud83d"]}, "n[1]", JsonProblem.SURROGATE, id="surrogate"),
        pytest.param({"k": {"\udc00": 1}}, "k.\\udc00", JsonProblem.SURROGATE, id="in-a-key"),
        pytest.param({"t": "a\x00"}, "t", JsonProblem.NUL, id="nul"),
        pytest.param({"i": INT_MAX + 1}, "i", JsonProblem.INTEGER, id="past-64-bits"),
        pytest.param({"i": INT_MIN - 1}, "i", JsonProblem.INTEGER, id="below-64-bits"),
        pytest.param({"o": object()}, "o", JsonProblem.TYPE, id="not-json"),
    ],
)
def test_the_first_unstorable_value_is_found_with_its_place(
    value: Any, place: str, problem: JsonProblem
) -> None:
    found = json_value_problem(value)

    assert found is not None
    assert (found.place, found.problem) == (place, problem)
    with pytest.raises(JsonValueError, match=f"^{re.escape(place)}: "):
        json_value_check(value)


def test_storable_values_pass_at_their_limits() -> None:
    value = {"a": [INT_MAX, INT_MIN, 1e308, 5e-324, -0.0, "Кайу ✓", None, True], "d": deep(30)}

    assert json_value_problem(value) is None


def test_nesting_deeper_than_the_limit_is_found_without_recursing() -> None:
    assert json_value_problem(deep(MAX_DEPTH)) is None
    found = json_value_problem(deep(MAX_DEPTH + 1))
    assert found is not None and found.problem is JsonProblem.DEPTH
    # Far deeper than Python's recursion limit: a loop, not a recursion.
    assert json_value_problem(deep(100_000)) is not None


def test_a_map_with_nan_is_a_map_error_naming_the_place() -> None:
    data = {"provinces": [{"id": "a", "x": math.nan}, {"id": "b"}], "borders": [["a", "b"]]}

    with pytest.raises(MapError, match=r"^map\.provinces\[0\]\.x: must be a finite number"):
        map_from_dict(data)


def test_r1_r3_the_bundled_map_seats_every_line_up() -> None:
    assert lineup_seating_check(rokugan_map(), dict.fromkeys(rokugan_map().home_provinces, 4)) == []


def test_r1_r3_a_clan_short_of_home_provinces_or_castles_is_named() -> None:
    data = rokugan_map().to_dict()
    for province in data["provinces"]:
        if province["home_clan"] == "crab":
            province["home_clan"] = None
        if province["home_clan"] == "lion":
            province["castle"] = None
    game_map = map_from_dict(data)

    short = lineup_seating_check(game_map, {"crab": 1, "lion": 2, "crane": 2})

    assert [(s.clan, s.homes, s.castles) for s in short] == [("crab", 0, 0), ("lion", 4, 0)]
    assert "R3.2" in str(short[0]) and "R9" in str(short[1])
    assert lineup_seating_check(game_map, {"crab": 2}, excluded_clans=frozenset({"crab"})) == []
