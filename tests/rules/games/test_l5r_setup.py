"""Setting up the L5R table: strongholds, seating and the starting player (R7, R10, R13)."""

from __future__ import annotations

import random

import pytest

from sl5r.rules.games import GameError

from .helpers import L5R, Scripted, entrant, l5r, l5r_open, l5r_started, player, stronghold


def test_r13_family_honor_starts_at_the_strongholds_honor() -> None:
    s = stronghold(l5r_open("crab-1", "lion-1"), "crab-1", honor=7)
    assert (player(s, "crab-1")["honor"], player(s, "crab-1")["province_strength"]) == (7, 6)
    assert player(s, "crab-1")["provinces"] == 4


def test_r13_a_sensei_never_takes_family_honor_below_minus_19() -> None:
    s = l5r_open("crab-1", "lion-1")
    s = stronghold(s, "crab-1", honor=5, sensei={"honor": -30})
    assert player(s, "crab-1")["honor"] == -19


def test_r10_the_crane_bonus_is_added_after_the_sensei_clamp() -> None:
    s = l5r_open(entrant("crane-1", honor_bonus=3), "lion-1")
    s = stronghold(s, "crane-1", honor=2, sensei={"honor": -30})
    assert player(s, "crane-1")["honor"] == -16
    s = stronghold(s, "crane-1", honor=2, sensei={"honor": 1})
    assert player(s, "crane-1")["honor"] == 6


def test_r13_a_sensei_never_takes_strength_or_gold_below_0() -> None:
    s = l5r_open("crab-1", "lion-1")
    s = l5r(
        s,
        type="stronghold",
        by="crab-1",
        honor=5,
        province_strength=2,
        gold=1,
        sensei={"honor": 0, "province_strength": -5, "gold": -3},
    )
    crab = player(s, "crab-1")
    assert (crab["province_strength"], crab["gold"]) == (0, 0)
    s = l5r(
        s,
        type="stronghold",
        by="crab-1",
        honor=5,
        province_strength=2,
        gold=1,
        sensei={"province_strength": 1, "gold": 2},
    )
    crab = player(s, "crab-1")
    assert (crab["province_strength"], crab["gold"]) == (3, 3)
    assert crab["stronghold"]["sensei"] == {"honor": 0, "province_strength": 1, "gold": 2}


def test_r7_r10_hand_size_small_farms_and_force_are_kept_per_player() -> None:
    dragon = entrant("dragon-1", hand_size=6, small_farms=2, force_modifier=-1)
    s = l5r_open(dragon, "lion-1")
    kept = player(s, "dragon-1")
    assert (kept["hand_size"], kept["small_farms"], kept["force_modifier"]) == (6, 2, -1)


def test_r13_the_starting_player_has_the_highest_family_honor() -> None:
    s = l5r_started({"crab-1": 5, "lion-1": 8, "crane-1": 3})
    assert (s["stage"], s["starting_player"], s["current"]) == ("playing", "lion-1", "lion-1")
    assert (s["phase"], s["round"], s["turn"]) == ("straighten", 1, 1)
    assert not [d for d in s["draws"] if d["what"] == "starting_player"]


def test_r11_r13_a_tie_for_the_starting_player_is_a_recorded_draw() -> None:
    rng = Scripted("lion-1")
    s = l5r_started({"crab-1": 8, "lion-1": 8, "crane-1": 3}, rng=rng)
    assert s["starting_player"] == "lion-1"
    assert rng.asked == [("crab-1", "lion-1")]
    assert s["draws"][-1] == {
        "what": "starting_player",
        "from": ["crab-1", "lion-1"],
        "method": "random",
        "source": "test",
        "result": "lion-1",
    }


def test_r11_the_same_seed_gives_the_same_starting_player() -> None:
    def first(seed: int) -> str:
        s = l5r_open("crab-1", "lion-1", "crane-1")
        for army in ("crab-1", "lion-1", "crane-1"):
            s = stronghold(s, army, 4)
        s = L5R.act(s, {"type": "begin", "by": "judge"}, rng=random.Random(seed))
        return str(s["starting_player"])

    assert {first(7) for _ in range(3)} == {first(7)}
    assert len({first(seed) for seed in range(20)}) > 1


def test_r11_a_judge_may_enter_a_tie_break_drawn_at_the_table() -> None:
    s = l5r_open("crab-1", "lion-1")
    s = stronghold(stronghold(s, "crab-1", 4), "lion-1", 4)
    s = l5r(s, type="begin", by="judge", first="lion-1")
    assert s["starting_player"] == "lion-1"
    assert s["draws"][-1]["method"] == "given"
    assert s["draws"][-1]["source"] == "judge"


def test_r11_only_a_judge_gives_a_tie_break_and_only_among_the_tied() -> None:
    s = l5r_open("crab-1", "lion-1", "crane-1")
    for army, honor in (("crab-1", 4), ("lion-1", 4), ("crane-1", 2)):
        s = stronghold(s, army, honor)
    with pytest.raises(GameError, match="only a judge"):
        l5r(s, type="begin", by="crab-1", first="crab-1")
    with pytest.raises(GameError, match="first: one of crab-1, lion-1"):
        l5r(s, type="begin", by="judge", first="crane-1")


def test_r13_everyone_but_the_starting_player_has_a_bowed_bamboo_harvesters() -> None:
    s = l5r_started({"crab-1": 5, "lion-1": 8, "crane-1": 3})
    assert {p["army"]: p["bamboo_harvesters"] for p in s["players"]} == {
        "crab-1": True,
        "lion-1": False,
        "crane-1": True,
    }


def test_r7_r11_the_seating_is_a_recorded_random_draw() -> None:
    rng = Scripted("lion-1", "crab-1")
    s = l5r_open("crab-1", "lion-1", "crane-1", rng=rng)
    assert s["seating"] == ["lion-1", "crab-1", "crane-1"]
    assert s["seating_by"] == "random"
    assert rng.asked == [("crab-1", "crane-1", "lion-1"), ("crab-1", "crane-1")]
    assert s["draws"] == [
        {
            "what": "seating",
            "from": ["crab-1", "crane-1", "lion-1"],
            "method": "random",
            "source": "test",
            "result": ["lion-1", "crab-1", "crane-1"],
        }
    ]


def test_r10_a_scorpion_chooses_the_seating_of_three_armies() -> None:
    scorpion = entrant("scorpion-1", chooses_seating=True)
    s = l5r_open(scorpion, "crab-1", "lion-1")
    assert (s["seating"], s["chooser"], s["draws"]) == (None, "scorpion-1", [])
    for army in ("scorpion-1", "crab-1", "lion-1"):
        s = stronghold(s, army)
    assert "begin" not in L5R.actions(s, by="crab-1")
    with pytest.raises(GameError, match="scorpion-1 must choose the seating"):
        l5r(s, type="begin", by="crab-1")
    with pytest.raises(GameError, match="scorpion-1 chooses the seating"):
        l5r(s, type="seating", by="crab-1", order=["crab-1", "lion-1", "scorpion-1"])
    assert "seating" in L5R.actions(s, by="scorpion-1")
    s = l5r(s, type="seating", by="scorpion-1", order=["lion-1", "scorpion-1", "crab-1"])
    assert (s["seating"], s["seating_by"]) == (["lion-1", "scorpion-1", "crab-1"], "scorpion")
    s = l5r(s, type="begin", by="crab-1", rng=Scripted("scorpion-1"))
    assert (s["stage"], s["starting_player"]) == ("playing", "scorpion-1")


def test_r10_the_seating_lists_every_army_once() -> None:
    s = l5r_open(entrant("scorpion-1", chooses_seating=True), "crab-1", "lion-1")
    for order in (["crab-1", "lion-1"], ["crab-1", "crab-1", "lion-1"], "crab-1", None):
        with pytest.raises(GameError, match="order: the seating lists every army"):
            l5r(s, type="seating", by="scorpion-1", order=order)


def test_r10_r11_of_two_scorpions_a_recorded_draw_says_who_chooses() -> None:
    rng = Scripted("scorpion-2")
    s = l5r_open(
        entrant("scorpion-1", chooses_seating=True),
        entrant("scorpion-2", chooses_seating=True),
        "crab-1",
        rng=rng,
    )
    assert s["chooser"] == "scorpion-2"
    assert s["draws"] == [
        {
            "what": "seating_chooser",
            "from": ["scorpion-1", "scorpion-2"],
            "method": "random",
            "source": "test",
            "result": "scorpion-2",
        }
    ]


def test_r11_a_judge_may_give_the_seating() -> None:
    s = l5r_open("crab-1", "lion-1")
    s = l5r(s, type="seating", by="judge", order=["lion-1", "crab-1"])
    assert s["seating_by"] == "judge"
    assert s["draws"][-1]["method"] == "given"
    with pytest.raises(GameError, match="drawn at random"):
        l5r(s, type="seating", by="crab-1", order=["lion-1", "crab-1"])


def test_r13_a_stronghold_may_be_entered_again_until_the_battle_begins() -> None:
    s = stronghold(stronghold(l5r_open("crab-1", "lion-1"), "crab-1", 3), "crab-1", 9)
    assert player(s, "crab-1")["honor"] == 9
    s = l5r(stronghold(s, "lion-1"), type="begin", by="lion-1")
    with pytest.raises(GameError, match="only newcomers enter a stronghold"):
        stronghold(s, "crab-1", 2)


def test_r13_the_battle_begins_only_when_every_stronghold_is_in() -> None:
    s = stronghold(l5r_open("crab-1", "lion-1", "crane-1"), "crab-1")
    with pytest.raises(GameError, match="begin: lion-1 and crane-1 must enter a stronghold"):
        l5r(s, type="begin", by="judge")
    assert L5R.summary(s)["waiting_for"] == "lion-1 and crane-1 to enter a stronghold"


def test_r8_armies_arriving_during_set_up_are_ordinary_players_and_the_seating_is_redrawn() -> None:
    s = l5r_open("crab-1", "lion-1")
    s = L5R.reinforce(s, entrants=[entrant("crane-1")], rng=Scripted("lion-1"), rng_label="test")
    assert s["seating"] == ["lion-1", "crab-1", "crane-1"]
    assert player(s, "crane-1")["status"] == "setup"
    assert s["draws"][-1]["from"] == ["crab-1", "crane-1", "lion-1"]
