"""R9 as the site asks it before the deadline: from which turn, and in which castles."""

from __future__ import annotations

from dataclasses import replace

from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.turn import (
    Army,
    Order,
    TurnState,
    order_check,
    reform_first_turn,
    reform_provinces,
)

MAP = rokugan_map()


def board(army: Army, turn: int = 2) -> TurnState:
    return TurnState(game_map=MAP, turn=turn, armies=[army], control=MAP.initial_control())


def test_r9_a_loser_reforms_from_t_plus_2_a_winners_choice_from_t_plus_1() -> None:
    loser = Army("crab-1", "crab", None, destroyed_in_turn=3, destroyed_by="loss")
    chosen = replace(loser, destroyed_by="winner")

    assert (reform_first_turn(loser), reform_first_turn(chosen)) == (5, 4)


def test_r9_the_castles_offered_are_the_ones_the_deadline_would_accept() -> None:
    army = Army("crab-1", "crab", None, destroyed_in_turn=1, destroyed_by="winner")
    state = board(army)

    offered = reform_provinces(state, "crab-1")

    assert offered == ("crab-hida", "crab-kaiu")
    for province in MAP.home_provinces["crab"]:
        accepted = order_check(state, Order(army="crab-1", reform=province)) is None
        assert accepted == (province in offered)


def test_r9_castles_are_offered_before_the_army_may_reform_as_they_stand_now() -> None:
    army = Army("crab-1", "crab", None, destroyed_in_turn=2, destroyed_by="loss")

    assert reform_provinces(board(army, turn=2), "crab-1") == ("crab-hida", "crab-kaiu")


def test_r9_a_clan_without_its_home_castles_is_offered_none() -> None:
    army = Army("crab-1", "crab", None, destroyed_in_turn=1, destroyed_by="winner")
    control = {**MAP.initial_control(), "crab-hida": "lion", "crab-kaiu": "lion"}

    assert reform_provinces(replace(board(army), control=control), "crab-1") == ()


def test_an_army_on_the_map_has_no_reform_options() -> None:
    assert reform_provinces(board(Army("crab-1", "crab", "crab-hida")), "crab-1") == ()
