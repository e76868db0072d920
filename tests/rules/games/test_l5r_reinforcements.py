"""Reinforcements at an L5R table: freeze, seating, production turns, unfreeze (R8)."""

from __future__ import annotations

from typing import Any

import pytest

from sl5r.rules.games import GameError

from .helpers import (
    L5R,
    Scripted,
    end_turn,
    entrant,
    honor,
    l5r,
    l5r_started,
    lose_provinces,
    player,
    stronghold,
)

THREE = {"crab-1": 5, "lion-1": 8, "crane-1": 3}  # seating crab, crane, lion; lion starts


def arrive(state: dict[str, Any], *armies: str, rng: Scripted | None = None) -> dict[str, Any]:
    return L5R.reinforce(
        state, entrants=[entrant(a) for a in armies], rng=rng or Scripted(), rng_label="test"
    )


def produce(state: dict[str, Any]) -> dict[str, Any]:
    return l5r(state, type="production_done", by=state["current"])


def test_r8_the_current_player_finishes_his_turn_before_the_game_freezes() -> None:
    s = arrive(l5r_started(THREE), "dragon-1")
    assert (s["stage"], s["frozen"], s["current"]) == ("playing", True, "lion-1")
    assert player(s, "dragon-1")["status"] == "newcomer"
    assert L5R.summary(s)["waiting_for"] == (
        "lion-1 to play his turn (Straighten phase); then the game freezes and dragon-1 sits "
        "down for their production turns (R8)"
    )
    s = l5r(s, type="phase", by="lion-1", phase="attack")
    assert s["current"] == "lion-1"


def test_r8_newcomers_sit_at_random_between_the_player_who_ended_and_the_next() -> None:
    s = arrive(l5r_started(THREE), "dragon-1", "unicorn-1")
    s = end_turn(s, rng=Scripted("unicorn-1"))
    assert s["seating"] == ["crab-1", "crane-1", "lion-1", "unicorn-1", "dragon-1"]
    assert s["draws"][-1] == {
        "what": "newcomer_seating",
        "from": ["dragon-1", "unicorn-1"],
        "method": "random",
        "source": "test",
        "result": ["unicorn-1", "dragon-1"],
    }
    assert (s["stage"], s["current"], s["phase"]) == ("production", "unicorn-1", None)


def test_r8_each_newcomer_plays_two_production_turns_in_seat_order() -> None:
    s = arrive(l5r_started(THREE), "dragon-1", "unicorn-1")
    s = end_turn(s, rng=Scripted("unicorn-1"))
    s = stronghold(stronghold(s, "dragon-1", 2), "unicorn-1", 3)
    seen = []
    while s["stage"] == "production":
        seen.append((s["current"], s["production"]["turn"]))
        assert "production turn" in L5R.summary(s)["waiting_for"]
        s = produce(s)
    assert seen == [("unicorn-1", 1), ("unicorn-1", 2), ("dragon-1", 1), ("dragon-1", 2)]
    # The game unfreezes with the first newcomer's normal turn.
    assert (s["stage"], s["frozen"], s["current"], s["phase"]) == (
        "playing",
        False,
        "unicorn-1",
        "straighten",
    )
    assert player(s, "dragon-1")["status"] == "playing"
    s = end_turn(end_turn(s))  # unicorn, dragon, then back to crab at the next seat
    assert s["current"] == "crab-1"


def test_r8_r13_a_newcomer_enters_his_stronghold_and_has_a_bamboo_harvesters() -> None:
    s = end_turn(arrive(l5r_started(THREE), "dragon-1"))
    assert L5R.summary(s)["waiting_for"].endswith("dragon-1 must enter a stronghold")
    assert "production_done" not in L5R.actions(s, by="dragon-1")
    with pytest.raises(GameError, match="dragon-1 must enter a stronghold first"):
        produce(s)
    s = stronghold(s, "dragon-1", 4, sensei={"honor": -30})
    assert (player(s, "dragon-1")["honor"], player(s, "dragon-1")["bamboo_harvesters"]) == (
        -19,
        True,
    )


def test_r8_production_turns_allow_no_normal_play() -> None:
    s = stronghold(end_turn(arrive(l5r_started(THREE), "dragon-1")), "dragon-1")
    assert L5R.actions(s, by="crab-1") == ["honor", "province", "ring", "declare", "truce"]
    assert "end_turn" not in L5R.actions(s, by="judge")
    with pytest.raises(GameError, match="frozen: dragon-1 is playing a production turn"):
        l5r(s, type="end_turn", by="judge")
    with pytest.raises(GameError, match="it is dragon-1's production turn"):
        l5r(s, type="production_done", by="crab-1")
    assert l5r(s, type="production_done", by="judge")["production"]["turn"] == 2


def test_r8_r13_the_first_newcomer_wins_with_40_honor_at_the_start_of_his_turn() -> None:
    s = end_turn(arrive(l5r_started(THREE), "dragon-1"))
    s = honor(stronghold(s, "dragon-1", 10), "dragon-1", 30)
    s = produce(produce(s))
    assert s["outcome"] == {
        "kind": "win",
        "winner": "dragon-1",
        "losers": [],
        "reason": "honor",
    }


def test_r8_newcomers_count_for_a_truce_and_for_the_last_one_standing() -> None:
    s = arrive(l5r_started({"crab-1": 5, "lion-1": 8}), "dragon-1")
    s = lose_provinces(s, "crab-1")
    assert s["outcome"] is None  # dragon-1 still fights lion-1
    s = l5r(s, type="truce", by="lion-1", agree=True)
    assert s["outcome"] is None
    s = l5r(s, type="truce", by="dragon-1", agree=True)
    assert s["outcome"]["kind"] == "truce"


def test_r8_the_current_player_losing_ends_his_turn_and_seats_the_newcomers() -> None:
    s = lose_provinces(arrive(l5r_started(THREE), "dragon-1"), "lion-1")
    assert (s["stage"], s["current"]) == ("production", "dragon-1")
    assert s["seating"] == ["crab-1", "crane-1", "lion-1", "dragon-1"]


def test_r8_armies_arriving_during_production_sit_after_the_newcomers_of_this_freeze() -> None:
    s = stronghold(end_turn(arrive(l5r_started(THREE), "dragon-1")), "dragon-1")
    s = produce(s)
    s = arrive(s, "unicorn-1")
    assert s["seating"] == ["crab-1", "crane-1", "lion-1", "dragon-1", "unicorn-1"]
    s = stronghold(produce(s), "unicorn-1")
    assert s["current"] == "unicorn-1"
    s = produce(produce(s))
    assert (s["stage"], s["current"]) == ("playing", "dragon-1")


def test_r8_a_newcomer_who_loses_during_production_is_skipped() -> None:
    s = arrive(l5r_started(THREE), "dragon-1", "unicorn-1")
    s = stronghold(end_turn(s, rng=Scripted("dragon-1")), "dragon-1")
    s = lose_provinces(s, "dragon-1")
    assert s["current"] == "unicorn-1"
    s = produce(produce(stronghold(s, "unicorn-1")))
    assert (s["stage"], s["current"]) == ("playing", "unicorn-1")


def test_r8_no_reinforcement_after_the_battle_ended() -> None:
    s = l5r(l5r_started(THREE), type="judge_result", by="judge", kind="truce")
    with pytest.raises(GameError, match="reinforce: the battle is over"):
        arrive(s, "dragon-1")


def test_r8_an_army_already_at_the_table_cannot_arrive_again() -> None:
    with pytest.raises(GameError, match="crab-1 is already at the table"):
        arrive(l5r_started(THREE), "crab-1")
