"""Bushido as the battle game: turns, pass tokens, victory points, the ladder (R14, R8)."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from sl5r.rules.games import GameError, TableOutcome

from .helpers import BUSHIDO, Scripted, bushido, entrant


def table(*armies: str, turns: int | None = None, rng: Scripted | None = None) -> dict[str, Any]:
    options = {} if turns is None else {"turns": turns}
    return BUSHIDO.open(
        entrants=[entrant(a) for a in armies],
        options=options,
        rng=rng or Scripted(),
        rng_label="test",
    )


def start(s: dict[str, Any], models: dict[str, int], winner: str | None = None) -> dict[str, Any]:
    """The Starting phase: the tactical test and each side's models."""
    s = bushido(s, type="tactical_test", by="judge", winner=winner or next(iter(models)))
    for army, count in models.items():
        s = bushido(s, type="models", by=army, army=army, count=count)
    return s


def play_turn(
    s: dict[str, Any], models: dict[str, int], points: dict[str, int] | None = None
) -> dict[str, Any]:
    s = bushido(start(s, models), type="phase", by="judge", phase="main")
    s = bushido(s, type="phase", by="judge", phase="end")
    for army, vp in (points or {}).items():
        s = bushido(s, type="victory_points", by="judge", army=army, points=vp)
    return bushido(s, type="end_turn", by="judge")


def test_r14_a_game_starts_in_the_starting_phase_of_turn_one() -> None:
    s = table("crab-1", "lion-1")
    assert (s["sides"], s["queue"], s["turn"], s["turns"], s["phase"]) == (
        ["crab", "lion"],
        [],
        1,
        4,
        "starting",
    )
    assert table("crab-1", "lion-1", turns=6)["turns"] == 6


@pytest.mark.parametrize("turns", [0, 11, "4", True])
def test_r14_the_scenario_sets_one_to_ten_turns(turns: Any) -> None:
    with pytest.raises(GameError, match="turns"):
        table("crab-1", "lion-1", turns=turns)


def test_r14_pass_tokens_are_the_difference_in_models_given_to_the_smaller_warband() -> None:
    s = start(table("crab-1", "lion-1"), {"crab-1": 5, "lion-1": 8})
    assert s["pass_tokens"] == {"side": "crab", "count": 3}
    assert "crab gets 3 pass tokens" in BUSHIDO.summary(s)["waiting_for"]
    s = bushido(s, type="models", by="lion-1", army="lion-1", count=5)
    assert s["pass_tokens"] == {"side": None, "count": 0}


def test_r14_the_main_phase_waits_for_the_tactical_test_and_both_warbands() -> None:
    s = table("crab-1", "lion-1")
    s = bushido(s, type="models", by="crab-1", army="crab-1", count=5)
    assert "phase" not in BUSHIDO.actions(s, by="judge")
    with pytest.raises(GameError, match="first enter the tactical test and the models"):
        bushido(s, type="phase", by="judge", phase="main")
    assert BUSHIDO.summary(s)["waiting_for"] == (
        "game 1 (crab against lion), turn 1 of 4, Starting phase: enter the tactical test "
        "winner and the models of lion"
    )


def test_r14_victory_points_are_scored_in_the_end_phase_and_add_up() -> None:
    s = start(table("crab-1", "crab-2", "lion-1"), {"crab-1": 5, "lion-1": 5})
    with pytest.raises(GameError, match="victory points are scored"):
        bushido(s, type="victory_points", by="crab-1", army="crab-1", points=1)
    s = bushido(s, type="phase", by="crab-2", phase="end")
    s = bushido(s, type="victory_points", by="crab-1", army="crab-2", points=2)
    s = bushido(s, type="victory_points", by="lion-1", army="crab-1", points=1)
    assert s["victory_points"] == {"crab": 3, "lion": 0}
    with pytest.raises(GameError, match="crab scored 3 this turn"):
        bushido(s, type="victory_points", by="judge", army="crab-1", points=-4)
    s = bushido(s, type="victory_points", by="judge", army="crab-1", points=-1)
    s = bushido(s, type="end_turn", by="judge")
    assert (s["turn"], s["phase"], s["victory_points"]) == (2, "starting", {"crab": 2, "lion": 0})
    assert [p["victory_points"] for p in BUSHIDO.summary(s)["players"]] == [2, 2, 0]


def test_r14_the_game_ends_in_the_end_phase_of_the_final_turn() -> None:
    s = table("crab-1", "lion-1", turns=2)
    s = play_turn(s, {"crab-1": 5, "lion-1": 5}, {"lion-1": 2})
    assert s["outcome"] is None
    assert BUSHIDO.summary(s)["waiting_for"].startswith("game 1 (crab against lion), turn 2 of 2")
    s = play_turn(s, {"crab-1": 5, "lion-1": 4}, {"crab-1": 1})
    assert BUSHIDO.outcome(s) == TableOutcome("win", "lion-1", ("crab-1",), "victory_points")
    assert s["results"] == [
        {
            "game": 1,
            "sides": ["crab", "lion"],
            "victory_points": {"crab": 1, "lion": 2},
            "winner": "lion",
            "reason": "victory_points",
        }
    ]


def test_r14_a_side_without_models_sends_the_game_to_its_end_phase() -> None:
    s = start(table("crab-1", "lion-1"), {"crab-1": 5, "lion-1": 5})
    s = bushido(s, type="phase", by="judge", phase="main")
    s = bushido(s, type="models", by="judge", army="crab-1", count=0)
    assert (s["phase"], s["ending"]) == ("end", "no_models")
    assert BUSHIDO.summary(s)["waiting_for"].endswith("then end the game")
    s = bushido(s, type="victory_points", by="judge", army="lion-1", points=3)
    s = bushido(s, type="end_turn", by="judge")
    assert BUSHIDO.outcome(s) == TableOutcome("win", "lion-1", ("crab-1",), "no_models")


def test_r14_more_victory_points_win_even_for_the_side_without_models() -> None:
    s = start(table("crab-1", "lion-1"), {"crab-1": 5, "lion-1": 5})
    s = bushido(s, type="models", by="judge", army="crab-1", count=0)
    s = bushido(s, type="victory_points", by="judge", army="crab-1", points=3)
    s = bushido(s, type="end_turn", by="judge")
    assert BUSHIDO.outcome(s) == TableOutcome("win", "crab-1", ("lion-1",), "no_models")


def test_r14_the_table_may_declare_every_victory_point_scored() -> None:
    s = start(table("crab-1", "lion-1", turns=6), {"crab-1": 5, "lion-1": 5})
    with pytest.raises(GameError, match="in the End phase"):
        bushido(s, type="declare", by="crab-1", kind="all_scored")
    s = bushido(s, type="phase", by="judge", phase="end")
    s = bushido(s, type="victory_points", by="judge", army="crab-1", points=4)
    with pytest.raises(GameError, match="kind: one of all_scored"):
        bushido(s, type="declare", by="crab-1", kind="enlightenment")
    s = bushido(s, type="declare", by="lion-1", kind="all_scored")
    assert BUSHIDO.outcome(s) == TableOutcome("win", "crab-1", ("lion-1",), "victory_points")


def test_r14_a_tie_ends_the_battle_in_a_truce() -> None:
    s = play_turn(table("crab-1", "lion-1", turns=1), {"crab-1": 5, "lion-1": 5})
    assert BUSHIDO.outcome(s) == TableOutcome("truce", None, (), "tie")


def test_r14_r11_a_third_clan_waits_in_a_recorded_random_order() -> None:
    rng = Scripted("lion", "crane")
    s = table("crab-1", "lion-1", "crane-1", rng=rng)
    assert (s["sides"], s["queue"]) == (["lion", "crane"], ["crab"])
    assert s["draws"] == [
        {
            "what": "ladder",
            "from": ["crab", "crane", "lion"],
            "method": "random",
            "source": "test",
            "result": ["lion", "crane", "crab"],
        }
    ]
    summary = BUSHIDO.summary(s)
    assert [p["status"] for p in summary["players"]] == ["waiting", "fighting", "fighting"]
    with pytest.raises(GameError, match="the crab side waits for its turn to fight"):
        bushido(s, type="models", by="crab-1", army="crab-1", count=3)
    assert BUSHIDO.actions(s, by="crab-1") == ["truce"]


def test_r14_the_winner_of_a_game_faces_the_next_waiting_side() -> None:
    s = table("crab-1", "lion-1", "crane-1", turns=1, rng=Scripted("lion", "crane"))
    s = play_turn(s, {"lion-1": 5, "crane-1": 5}, {"lion-1": 1})
    assert (s["sides"], s["queue"], s["game_number"], s["turn"]) == (["lion", "crab"], [], 2, 1)
    assert s["losers"] == ["crane-1"]
    assert s["victory_points"] == {"lion": 0, "crab": 0}
    with pytest.raises(GameError, match="crane-1 has lost and left the table"):
        bushido(s, type="truce", by="crane-1", agree=True)
    s = play_turn(s, {"lion-1": 5, "crab-1": 5}, {"crab-1": 2})
    assert BUSHIDO.outcome(s) == TableOutcome(
        "win", "crab-1", ("crane-1", "lion-1"), "victory_points"
    )


def test_r8_r14_a_reinforcement_of_a_fighting_clan_joins_its_side() -> None:
    s = table("crab-1", "lion-1", turns=1)
    s = BUSHIDO.reinforce(s, entrants=[entrant("lion-2")], rng=Scripted())
    assert (s["sides"], s["queue"]) == (["crab", "lion"], [])
    s = play_turn(s, {"crab-1": 5, "lion-2": 9}, {"crab-1": 1})
    assert BUSHIDO.outcome(s) == TableOutcome(
        "win", "crab-1", ("lion-1", "lion-2"), "victory_points"
    )


def test_r8_r14_a_reinforcement_of_new_clans_queues_in_a_recorded_order() -> None:
    s = table("crab-1", "lion-1")
    s = BUSHIDO.reinforce(
        s,
        entrants=[entrant("dragon-1"), entrant("crane-1"), entrant("crane-2")],
        rng=Scripted("dragon"),
        rng_label="test",
    )
    assert s["queue"] == ["dragon", "crane"]
    assert s["draws"][-1]["what"] == "ladder"


def test_r8_a_bushido_truce_needs_every_side_still_in_the_battle() -> None:
    s = table("crab-1", "lion-1", "crane-1")
    s = bushido(s, type="truce", by="crab-1", agree=True)
    s = bushido(s, type="truce", by="lion-1", agree=True)
    assert s["outcome"] is None
    s = bushido(s, type="truce", by="judge", army="crane-1", agree=True)
    assert BUSHIDO.outcome(s) == TableOutcome("truce", None, (), "truce")
    assert BUSHIDO.actions(s, by="crab-1") == []
    with pytest.raises(GameError, match="reinforce: the battle is over"):
        BUSHIDO.reinforce(s, entrants=[entrant("dragon-1")], rng=Scripted())


def test_r8_a_judge_decides_a_bushido_battle() -> None:
    s = table("crab-1", "lion-1")
    with pytest.raises(GameError, match="only a judge"):
        bushido(s, type="judge_result", by="crab-1", kind="win", winner="crab-1")
    s = bushido(s, type="judge_result", by="judge", kind="win", winner="lion-1")
    assert BUSHIDO.outcome(s) == TableOutcome("win", "lion-1", (), "judge")
    assert [p["status"] for p in BUSHIDO.summary(s)["players"]] == ["fighting", "winner"]


@pytest.mark.parametrize(
    ("action", "message"),
    [
        ({"type": "charge", "by": "crab-1"}, 'unknown action "charge"'),
        ({"type": "models", "by": "crab-1", "army": "crab-1", "count": -1}, "count: -1"),
        ({"type": "models", "by": "crab-1", "army": "crab-1", "count": "5"}, "count: a whole"),
        ({"type": "models", "by": "crab-1", "army": "crane-1", "count": 5}, "not an army"),
        ({"type": "tactical_test", "by": "crab-1", "winner": "ronin"}, "winner: 'ronin'"),
        ({"type": "phase", "by": "crab-1", "phase": "end", "x": 1}, 'unknown field "x"'),
        ({"type": "end_turn", "by": "crab-1"}, "in the End phase"),
        ({"type": "end_turn", "by": "ronin-1"}, "by: ronin-1 is not at this table"),
    ],
)
def test_bushido_refuses_malformed_actions(action: dict[str, Any], message: str) -> None:
    with pytest.raises(GameError, match=message):
        BUSHIDO.act(table("crab-1", "lion-1"), action, rng=Scripted())


def test_a_bushido_state_through_json_plays_on_the_same() -> None:
    def run(round_trip: bool) -> dict[str, Any]:
        rng = random.Random(3)
        entrants = [entrant(a) for a in ("crab-1", "lion-1", "crane-1")]
        s = BUSHIDO.open(entrants=entrants, options={"turns": 1}, rng=rng)
        fighting = [p["army"] for p in s["players"] if p["clan"] in s["sides"]]
        for step in (
            {"type": "tactical_test", "by": "judge", "winner": fighting[0]},
            {"type": "models", "by": "judge", "army": fighting[0], "count": 4},
            {"type": "models", "by": "judge", "army": fighting[1], "count": 6},
            {"type": "phase", "by": "judge", "phase": "end"},
            {"type": "victory_points", "by": "judge", "army": fighting[1], "points": 2},
            {"type": "end_turn", "by": "judge"},
        ):
            if round_trip:
                s = json.loads(json.dumps(s))
            s = BUSHIDO.act(s, step, rng=rng)
        return s

    assert run(False) == run(True)
    assert run(False)["game_number"] == 2
