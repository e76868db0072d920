"""Playing the L5R table: phases, turn order, and every way a battle ends (R8, R13)."""

from __future__ import annotations

import pytest

from sl5r.rules.games import GameError, TableOutcome

from .helpers import (
    L5R,
    end_turn,
    entrant,
    honor,
    l5r,
    l5r_started,
    lose_provinces,
    player,
)

# Seating is the sorted armies: crab-1, crane-1, lion-1; lion-1 starts (most honor).
THREE = {"crab-1": 5, "lion-1": 8, "crane-1": 3}


def test_r13_phases_go_forward_within_a_turn() -> None:
    s = l5r_started(THREE)
    s = l5r(s, type="phase", by="lion-1", phase="action")
    assert s["phase"] == "action"
    with pytest.raises(GameError, match="phase: one of attack, dynasty, end is expected"):
        l5r(s, type="phase", by="lion-1", phase="events")
    s = l5r(s, type="phase", by="judge", phase="end")
    assert "phase" not in L5R.actions(s, by="lion-1")
    with pytest.raises(GameError, match="the End phase is the last one"):
        l5r(s, type="phase", by="lion-1", phase="end")


def test_r13_turn_order_goes_to_the_left_and_rounds_are_counted() -> None:
    s = l5r_started(THREE)
    seen = []
    for _ in range(4):
        seen.append((s["current"], s["round"], s["turn"]))
        s = end_turn(s)
    assert seen == [("lion-1", 1, 1), ("crab-1", 1, 2), ("crane-1", 1, 3), ("lion-1", 2, 4)]
    assert (s["current"], s["phase"]) == ("crab-1", "straighten")


def test_r13_turn_order_skips_players_who_lost() -> None:
    s = l5r_started({**THREE, "dragon-1": 1})  # seating crab, crane, dragon, lion
    s = lose_provinces(s, "crab-1")
    assert player(s, "crab-1")["status"] == "lost"
    s = end_turn(s)  # lion-1 ends: crab-1 is skipped
    assert s["current"] == "crane-1"


def test_r13_only_the_current_player_or_a_judge_moves_the_turn() -> None:
    s = l5r_started(THREE)
    with pytest.raises(GameError, match="end_turn: it is lion-1's turn"):
        l5r(s, type="end_turn", by="crab-1")
    assert L5R.actions(s, by="crab-1") == ["honor", "province", "ring", "declare", "truce"]
    assert "end_turn" in L5R.actions(s, by="lion-1")
    assert l5r(s, type="end_turn", by="judge")["current"] == "crab-1"


def test_r13_anyone_at_the_table_may_record_anyones_family_honor() -> None:
    s = l5r_started(THREE)
    s = l5r(s, type="honor", by="crab-1", army="lion-1", delta=-2)
    s = l5r(s, type="honor", by="judge", army="crab-1", delta=5)
    assert (player(s, "lion-1")["honor"], player(s, "crab-1")["honor"]) == (6, 10)
    assert s["history"][-1]["summary"] == "crab-1: family honor +5 = 10"


def test_r13_a_player_with_no_provinces_left_loses_at_once() -> None:
    s = l5r_started(THREE)
    s = lose_provinces(s, "crab-1", 3)
    assert player(s, "crab-1")["status"] == "playing"
    s = lose_provinces(s, "crab-1", 1)
    assert (player(s, "crab-1")["status"], player(s, "crab-1")["lost_reason"]) == (
        "lost",
        "no_provinces",
    )
    assert s["losers"] == ["crab-1"]
    with pytest.raises(GameError, match="crab-1 has lost and left the table"):
        l5r(s, type="honor", by="crab-1", army="lion-1", delta=1)


def test_r13_provinces_change_one_at_a_time_and_never_above_four() -> None:
    s = l5r_started(THREE)
    with pytest.raises(GameError, match="already has his 4 provinces"):
        l5r(s, type="province", by="judge", army="crab-1", delta=1)
    with pytest.raises(GameError, match="delta: a province is lost"):
        l5r(s, type="province", by="judge", army="crab-1", delta=-2)
    s = lose_provinces(s, "crab-1", 2)
    s = l5r(s, type="province", by="judge", army="crab-1", delta=1)
    assert player(s, "crab-1")["provinces"] == 3


def test_r13_the_current_player_losing_his_last_province_passes_the_turn() -> None:
    s = lose_provinces(l5r_started(THREE), "lion-1")
    assert (s["current"], s["phase"]) == ("crab-1", "straighten")


def test_r13_a_player_at_minus_20_at_the_end_of_his_turn_loses() -> None:
    s = honor(l5r_started(THREE), "lion-1", -28)
    assert player(s, "lion-1")["honor"] == -20
    s = end_turn(s)
    assert (player(s, "lion-1")["status"], player(s, "lion-1")["lost_reason"]) == (
        "lost",
        "dishonor",
    )
    assert s["current"] == "crab-1"


def test_r13_minus_20_at_the_end_of_someone_elses_turn_is_no_loss() -> None:
    s = honor(l5r_started(THREE), "crab-1", -25)
    s = end_turn(s)  # lion-1's turn ends
    assert player(s, "crab-1")["status"] == "playing"
    s = honor(s, "crab-1", 10)  # recovers during his own turn
    s = end_turn(s)
    assert player(s, "crab-1")["status"] == "playing"


def test_r13_40_honor_at_the_start_of_his_turn_wins() -> None:
    s = honor(l5r_started(THREE), "crab-1", 35)
    assert s["outcome"] is None  # 40 during someone else's turn is not yet a win
    s = end_turn(s)
    assert L5R.outcome(s) == TableOutcome(kind="win", winner="crab-1", losers=(), reason="honor")
    assert s["stage"] == "over"
    assert L5R.summary(s)["players"][0] == {
        "army": "crab-1",
        "clan": "crab",
        "honor": 40,
        "provinces": 4,
        "rings": [],
        "status": "winner",
    }


def test_r13_40_honor_reached_during_his_own_turn_waits_for_his_next_turn() -> None:
    s = honor(l5r_started(THREE), "lion-1", 40)
    s = end_turn(s)
    assert s["outcome"] is None
    s = honor(s, "lion-1", -10)  # falls back before his turn comes
    s = end_turn(end_turn(s))
    assert (s["current"], s["outcome"]) == ("lion-1", None)


def test_r13_five_rings_of_different_elements_win_by_enlightenment() -> None:
    s = l5r_started(THREE)
    for element in ("air", "earth", "fire", "water"):
        s = l5r(s, type="ring", by="crane-1", army="crane-1", element=element)
    with pytest.raises(GameError, match="already claimed the water ring"):
        l5r(s, type="ring", by="crane-1", army="crane-1", element="water")
    with pytest.raises(GameError, match="element: one of air, earth"):
        l5r(s, type="ring", by="crane-1", army="crane-1", element="wood")
    assert s["outcome"] is None
    s = l5r(s, type="ring", by="lion-1", army="crane-1", element="void")
    assert L5R.outcome(s) == TableOutcome("win", "crane-1", (), "enlightenment")


def test_r13_a_player_or_a_judge_may_declare_enlightenment() -> None:
    s = l5r_started(THREE)
    with pytest.raises(GameError, match="crab-1 may only do this for himself"):
        l5r(s, type="declare", by="crab-1", kind="enlightenment", army="crane-1")
    with pytest.raises(GameError, match="kind: one of enlightenment"):
        l5r(s, type="declare", by="crab-1", kind="honor", army="crab-1")
    won = l5r(s, type="declare", by="crab-1", kind="enlightenment", army="crab-1")
    assert L5R.outcome(won) == TableOutcome("win", "crab-1", (), "enlightenment")
    won = l5r(s, type="declare", by="judge", kind="enlightenment", army="crane-1")
    assert won["outcome"]["winner"] == "crane-1"


def test_r13_the_last_player_standing_wins() -> None:
    s = l5r_started({"crab-1": 5, "lion-1": 8})
    s = lose_provinces(s, "lion-1")
    assert L5R.outcome(s) == TableOutcome("win", "crab-1", ("lion-1",), "last_standing")
    assert L5R.summary(s)["waiting_for"] == "nothing: crab-1 won the battle (last_standing)"


def test_r7_when_only_one_clan_is_left_its_most_honorable_army_wins() -> None:
    s = l5r_started({"crab-1": 5, "crab-2": 7, "lion-1": 8})
    s = lose_provinces(s, "lion-1")
    assert L5R.outcome(s) == TableOutcome("win", "crab-2", ("lion-1",), "last_standing")


def test_r7_clan_mates_tied_in_honor_give_the_win_to_the_earliest_seat() -> None:
    s = l5r_started({"crab-2": 5, "crab-1": 5, "lion-1": 8})
    s = lose_provinces(s, "lion-1")
    assert s["outcome"]["winner"] == "crab-1"


def test_r8_a_truce_needs_every_player_still_in_the_game() -> None:
    s = l5r_started(THREE)
    s = l5r(s, type="truce", by="crab-1", agree=True)
    s = l5r(s, type="truce", by="lion-1", agree=True)
    s = l5r(s, type="truce", by="lion-1", agree=False)
    s = l5r(s, type="truce", by="judge", army="crane-1", agree=True)
    assert s["outcome"] is None
    with pytest.raises(GameError, match="crab-1 may only do this for himself"):
        l5r(s, type="truce", by="crab-1", army="lion-1", agree=True)
    s = l5r(s, type="truce", by="lion-1", agree=True)
    assert L5R.outcome(s) == TableOutcome("truce", None, (), "truce")


def test_r8_players_who_lost_have_no_say_in_a_truce() -> None:
    s = l5r_started(THREE)
    s = l5r(s, type="truce", by="crab-1", agree=True)
    s = lose_provinces(s, "crab-1")
    s = l5r(s, type="truce", by="lion-1", agree=True)
    assert s["outcome"] is None  # crab-1's agreement left with him
    s = l5r(s, type="truce", by="crane-1", agree=True)
    assert L5R.outcome(s) == TableOutcome("truce", None, ("crab-1",), "truce")


def test_r8_a_judge_may_give_the_result_and_change_it() -> None:
    s = lose_provinces(l5r_started(THREE), "crab-1")
    with pytest.raises(GameError, match="only a judge gives a result"):
        l5r(s, type="judge_result", by="lion-1", kind="win", winner="lion-1")
    with pytest.raises(GameError, match="crab-1 has lost"):
        l5r(s, type="judge_result", by="judge", kind="win", winner="crab-1")
    with pytest.raises(GameError, match="a truce has no winner"):
        l5r(s, type="judge_result", by="judge", kind="truce", winner="lion-1")
    s = l5r(s, type="judge_result", by="judge", kind="win", winner="crane-1")
    assert L5R.outcome(s) == TableOutcome("win", "crane-1", ("crab-1",), "judge")
    s = l5r(s, type="judge_result", by="judge", kind="truce")
    assert L5R.outcome(s) == TableOutcome("truce", None, ("crab-1",), "judge")


def test_r8_after_the_outcome_only_a_judge_may_act() -> None:
    s = l5r(l5r_started(THREE), type="judge_result", by="judge", kind="truce")
    assert L5R.actions(s, by="lion-1") == []
    assert L5R.actions(s, by="judge") == ["judge_result"]
    for action in (
        {"type": "end_turn", "by": "judge"},
        {"type": "honor", "by": "lion-1", "army": "lion-1", "delta": 1},
    ):
        with pytest.raises(GameError, match="the battle is over"):
            l5r(s, **action)


def test_summary_shows_the_table_in_seating_order() -> None:
    s = l5r_started(THREE)
    summary = L5R.summary(s)
    assert [p["army"] for p in summary["players"]] == ["crab-1", "crane-1", "lion-1"]
    assert summary["waiting_for"] == "lion-1 to play his turn (Straighten phase)"
    assert (summary["stage"], summary["current"], summary["frozen"]) == ("playing", "lion-1", False)


def test_history_is_bounded() -> None:
    s = l5r_started(THREE)
    for _ in range(60):
        s = honor(s, "crab-1", 1)
        s = honor(s, "crab-1", -1)
    assert len(s["history"]) == 50
    assert s["history"][-1]["n"] == s["actions"]


def test_r10_unknown_clan_entrants_never_reach_the_table() -> None:
    with pytest.raises(GameError, match="clan"):
        l5r_started(THREE, entrant("ronin-1"))
