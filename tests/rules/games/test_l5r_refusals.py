"""What the L5R table refuses, and how states behave as JSON values (R8, R11, R13)."""

from __future__ import annotations

import copy
import itertools
import json
import random
from typing import Any

import pytest

from sl5r.rules.games import GameError

from .helpers import L5R, entrant, l5r, l5r_open, l5r_started

THREE = {"crab-1": 5, "lion-1": 8, "crane-1": 3}


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"type": "dance", "by": "lion-1"}, 'type: unknown action "dance"'),
        ({"by": "lion-1"}, "type: every action has a type"),
        ({"type": "end_turn"}, "by: every action says who does it"),
        ({"type": "end_turn", "by": "phoenix-1"}, "by: phoenix-1 is not at this table"),
        ({"type": "end_turn", "by": "lion-1", "force": True}, 'end_turn: unknown field "force"'),
        ({"type": "end_turn", "by": "crab-1"}, "end_turn: it is lion-1's turn"),
        ({"type": "begin", "by": "judge"}, "begin: the battle has already begun"),
        ({"type": "stronghold", "by": "crab-1", "honor": 1}, "only newcomers"),
        (
            {"type": "honor", "by": "crab-1", "army": "crab-1", "delta": "1"},
            "delta: a whole number is expected, not '1'",
        ),
        (
            {"type": "honor", "by": "crab-1", "army": "crab-1", "delta": True},
            "delta: a whole number is expected, not True",
        ),
        (
            {"type": "honor", "by": "crab-1", "army": "crab-1", "delta": 1.0},
            "delta: a whole number is expected",
        ),
        (
            {"type": "honor", "by": "crab-1", "army": "crab-1", "delta": 0},
            "delta: a change of family honor is not 0",
        ),
        (
            {"type": "honor", "by": "crab-1", "army": "crab-1", "delta": 500},
            "delta: 500 is not between -99 and 99",
        ),
        (
            {"type": "honor", "by": "crab-1", "army": "ronin-1", "delta": 1},
            "army: 'ronin-1' is not an army at this table",
        ),
        ({"type": "honor", "by": "crab-1", "delta": 1}, "army: an army code is expected"),
        ({"type": "phase", "by": "lion-1", "phase": 3}, "phase: one of events"),
        ({"type": "truce", "by": "crab-1", "agree": "yes"}, "agree: true or false"),
        ({"type": "truce", "by": "judge", "agree": True}, "army: an army code is expected"),
        ({"type": "production_done", "by": "judge"}, "nobody is playing a production turn"),
        (
            {"type": "judge_result", "by": "judge", "kind": "draw"},
            "kind: one of win, truce",
        ),
    ],
)
def test_malformed_or_illegal_actions_are_game_errors(action: dict[str, Any], message: str) -> None:
    s = l5r_started(THREE)
    with pytest.raises(GameError, match=message):
        L5R.act(s, action, rng=random.Random(1))


@pytest.mark.parametrize(
    "action",
    [
        {"type": "phase", "by": "judge", "phase": "events"},
        {"type": "end_turn", "by": "judge"},
        {"type": "honor", "by": "judge", "army": "crab-1", "delta": 1},
        {"type": "ring", "by": "judge", "army": "crab-1", "element": "air"},
    ],
)
def test_r13_nothing_is_played_before_the_battle_begins(action: dict[str, Any]) -> None:
    with pytest.raises(GameError, match="the battle has not begun"):
        l5r(l5r_open("crab-1", "lion-1"), **action)


def test_a_stronghold_needs_well_formed_numbers() -> None:
    s = l5r_open("crab-1", "lion-1")
    base = {"type": "stronghold", "by": "crab-1", "honor": 5, "province_strength": 6, "gold": 5}
    for change, message in (
        ({"province_strength": -1}, "province_strength: -1 is not between 0 and 99"),
        ({"gold": None}, "gold: a whole number is expected"),
        ({"sensei": 3}, "sensei: an object"),
        ({"sensei": {"fate": 1}}, 'sensei: unknown field "fate"'),
        ({"sensei": {"gold": "1"}}, "gold: a whole number"),
        ({"army": "lion-1"}, "crab-1 may only do this for himself"),
    ):
        with pytest.raises(GameError, match=message):
            l5r(s, **{**base, **change})


def test_a_state_of_another_game_or_version_is_refused() -> None:
    s = l5r_started(THREE)
    with pytest.raises(GameError, match="state: not the state of a l5r table"):
        L5R.act({**s, "game": "bushido"}, {"type": "end_turn", "by": "judge"}, rng=random.Random())
    with pytest.raises(GameError, match="state version 9"):
        L5R.summary({**s, "version": 9})


def test_actions_for_someone_not_at_the_table_are_none() -> None:
    assert L5R.actions(l5r_started(THREE), by="phoenix-1") == []


def script() -> list[dict[str, Any]]:
    """A whole battle: set-up, turns, a reinforcement (as None), losses, the end."""
    return [
        {"type": "stronghold", "by": "crab-1", "honor": 5, "province_strength": 6, "gold": 5},
        {"type": "stronghold", "by": "lion-1", "honor": 5, "province_strength": 6, "gold": 5},
        {"type": "stronghold", "by": "crane-1", "honor": 7, "province_strength": 5, "gold": 4},
        {"type": "begin", "by": "judge"},
        {"type": "honor", "by": "crab-1", "army": "lion-1", "delta": -5},
        {"type": "phase", "by": "crane-1", "phase": "attack"},
        {"type": "province", "by": "crab-1", "army": "crab-1", "delta": -1},
        {"type": "end_turn", "by": "crane-1"},
        {},
        {"type": "end_turn", "by": "judge"},
        {"type": "stronghold", "by": "dragon-1", "honor": 4, "province_strength": 6, "gold": 5},
        {"type": "stronghold", "by": "unicorn-1", "honor": 4, "province_strength": 6, "gold": 5},
        {"type": "production_done", "by": "judge"},
        {"type": "production_done", "by": "judge"},
        {"type": "production_done", "by": "judge"},
        {"type": "production_done", "by": "judge"},
        {"type": "ring", "by": "crab-1", "army": "crab-1", "element": "air"},
        {"type": "end_turn", "by": "judge"},
        {"type": "truce", "by": "crab-1", "agree": True},
        {"type": "end_turn", "by": "judge"},
        {"type": "end_turn", "by": "judge"},
    ]


def play(round_trip: bool, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    entrants = [entrant(a) for a in ("crab-1", "lion-1", "crane-1")]
    s = L5R.open(entrants=entrants, options={}, rng=rng, rng_label=f"seed {seed}")
    states = [s]
    for action in script():
        if round_trip:
            s = json.loads(json.dumps(s))
        if not action:
            newcomers = [entrant("dragon-1"), entrant("unicorn-1")]
            s = L5R.reinforce(s, entrants=newcomers, rng=rng, rng_label=f"seed {seed}")
        else:
            s = L5R.act(s, action, rng=rng, rng_label=f"seed {seed}")
        states.append(s)
    return states


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_r11_a_state_through_json_plays_on_exactly_the_same(seed: int) -> None:
    direct = play(round_trip=False, seed=seed)
    through_json = play(round_trip=True, seed=seed)
    assert direct == through_json
    assert json.loads(json.dumps(direct[-1])) == direct[-1]
    assert direct[-1]["stage"] == "playing"
    assert direct[-1]["round"] >= 2


def test_act_and_reinforce_never_change_their_input() -> None:
    s = l5r_started(THREE)
    frozen = copy.deepcopy(s)
    l5r(s, type="honor", by="judge", army="crab-1", delta=3)
    l5r(s, type="end_turn", by="judge")
    L5R.reinforce(s, entrants=[entrant("dragon-1")], rng=random.Random(1))
    L5R.summary(s)
    L5R.actions(s, by="judge")
    assert s == frozen


@pytest.mark.parametrize("seed", range(10))
def test_the_script_plays_through_for_any_seed(seed: int) -> None:
    states = play(round_trip=False, seed=seed)
    assert all(before is not after for before, after in itertools.pairwise(states))


def test_r11_the_same_seed_and_actions_give_the_same_draws() -> None:
    assert play(round_trip=False, seed=11)[-1]["draws"] == play(True, 11)[-1]["draws"]
    assert play(False, 11)[-1]["draws"][0]["source"] == "seed 11"
