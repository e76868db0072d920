"""The orders the site offers an army (a paper slip, a drop-down) are exactly the ones the
deadline would accept (R4, R5.3, R5.4, R9, R10).

``order_options`` builds its list from candidates put to ``order_check``; the properties
below check both directions on random maps, armies and settings (``strategies.py``): every
option passes ``order_check``, and every move or reform ``order_check`` accepts is offered.
"""

from __future__ import annotations

import os
from dataclasses import replace
from itertools import product

import pytest
from hypothesis import HealthCheck, given, settings

from sl5r.rules.errors import RulesInputError
from sl5r.rules.mapgraph import map_from_dict, rokugan_map
from sl5r.rules.turn import (
    Army,
    Order,
    OrderOptions,
    Settings,
    TurnState,
    order_check,
    order_options,
    reform_provinces,
)
from tests.rules.strategies import UNKNOWN_PROVINCE, Scenario, scenarios

MAX_EXAMPLES = int(os.environ.get("SL5R_PROPERTY_EXAMPLES", "120"))

properties = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# A line of five, b and c side by side: a–b–c–d–e, b–f.
LINE = map_from_dict(
    {
        "provinces": [
            {"id": p, "home_clan": "unicorn" if p == "a" else None, "castle": p == "a"}
            for p in "abcdef"
        ],
        "borders": [["a", "b"], ["b", "c"], ["c", "d"], ["d", "e"], ["b", "f"]],
    }
)


def line(*armies: Army, abilities: bool = True, turn: int = 3) -> TurnState:
    return TurnState(
        game_map=LINE,
        turn=turn,
        armies=armies,
        control=LINE.initial_control(),
        settings=Settings(clan_abilities=abilities),
    )


def options_as_orders(options: OrderOptions) -> list[Order]:
    orders = [Order(options.army)] if options.hold else []
    orders += [Order(options.army, move=path) for path in options.moves]
    orders += [Order(options.army, reform=p) for p in options.reforms]
    return orders


# --- both directions, on every army of random turns -----------------------------------------


@properties
@given(scenarios())
def test_every_option_offered_passes_order_check(s: Scenario) -> None:
    for army in s.state.armies:
        options = order_options(s.state, army.id)
        for order in options_as_orders(options):
            assert order_check(s.state, order) is None, order
            # R6, R5.3: claim false and the Scorpion's choice never make an order illegal.
            assert order_check(s.state, replace(order, claim=False, on_swap="stay")) is None


@properties
@given(scenarios())
def test_every_move_and_reform_order_check_accepts_is_offered(s: Scenario) -> None:
    ids = [*sorted(s.game_map.provinces), UNKNOWN_PROVINCE]
    for army in s.state.armies:
        options = order_options(s.state, army.id)
        assert (order_check(s.state, Order(army.id)) is None) == options.hold
        accepted_moves = {
            path
            for path in [(p,) for p in ids] + list(product(ids, repeat=2))
            if order_check(s.state, Order(army.id, move=path)) is None
        }
        assert set(options.moves) == accepted_moves
        accepted_reforms = {
            p for p in ids if order_check(s.state, Order(army.id, reform=p)) is None
        }
        assert set(options.reforms) == accepted_reforms


@properties
@given(scenarios())
def test_moves_come_one_province_first_then_two_each_group_sorted(s: Scenario) -> None:
    for army in s.state.armies:
        moves = order_options(s.state, army.id).moves
        singles = [m for m in moves if len(m) == 1]
        doubles = [m for m in moves if len(m) == 2]
        assert list(moves) == sorted(singles) + sorted(doubles)


@properties
@given(scenarios())
def test_r5_3_the_swap_choice_goes_with_a_scorpion_that_may_move_one_province(
    s: Scenario,
) -> None:
    for army in s.state.armies:
        options = order_options(s.state, army.id)
        single = any(len(m) == 1 for m in options.moves)
        expected = army.clan == "scorpion" and s.state.settings.clan_abilities and single
        assert options.swap_choice == expected


# --- cases ----------------------------------------------------------------------------------


def test_r4_an_army_on_the_map_may_hold_or_move_to_each_neighbour() -> None:
    options = order_options(line(Army("crab-1", "crab", "b")), "crab-1")

    assert options.hold
    assert options.moves == (("a",), ("c",), ("f",))
    assert options.reforms == ()
    assert options.reform_from is None
    assert not options.swap_choice


def test_r5_4_a_unicorn_may_also_move_two_provinces_through_empty_ones() -> None:
    state = line(Army("unicorn-1", "unicorn", "b"), Army("crab-1", "crab", "d"))

    moves = order_options(state, "unicorn-1").moves

    # Not back to b, not into or through d (held at the start of the turn).
    assert moves == (("a",), ("c",), ("f",))
    assert order_options(replace(state, armies=state.armies[:1]), "unicorn-1").moves == (
        ("a",),
        ("c",),
        ("f",),
        ("c", "d"),
    )


def test_r5_4_two_province_moves_only_with_clan_abilities_on() -> None:
    state = line(Army("unicorn-1", "unicorn", "c"), abilities=False)

    assert order_options(state, "unicorn-1").moves == (("b",), ("d",))
    assert order_options(replace(state, settings=Settings()), "unicorn-1").moves == (
        ("b",),
        ("d",),
        ("b", "a"),
        ("b", "f"),
        ("d", "e"),
    )


def test_r5_3_a_scorpion_with_a_move_to_give_carries_the_swap_choice() -> None:
    assert order_options(line(Army("scorpion-1", "scorpion", "e")), "scorpion-1").swap_choice
    off = line(Army("scorpion-1", "scorpion", "e"), abilities=False)
    assert not order_options(off, "scorpion-1").swap_choice


def test_r4_an_army_in_a_battle_has_no_order_to_give() -> None:
    state = line(Army("lion-1", "lion", "c", in_battle=True))

    options = order_options(state, "lion-1")

    assert (options.hold, options.moves, options.reforms, options.any) == (False, (), (), False)
    assert not order_options(
        line(Army("scorpion-1", "scorpion", "c", in_battle=True)), "scorpion-1"
    ).swap_choice


def test_r9_a_destroyed_army_is_offered_its_controlled_home_castles_from_its_turn() -> None:
    destroyed = Army("unicorn-1", "unicorn", None, destroyed_in_turn=2, destroyed_by="loss")

    too_early = order_options(line(destroyed, turn=3), "unicorn-1")
    allowed = order_options(line(destroyed, turn=4), "unicorn-1")

    assert (too_early.hold, too_early.moves, too_early.reforms) == (False, (), ())
    assert too_early.reform_from == 4
    assert allowed.reforms == ("a",)
    assert allowed.any and not too_early.any


def test_r9_the_reforms_offered_agree_with_reform_provinces_on_the_bundled_map() -> None:
    game_map = rokugan_map()
    army = Army("crab-1", "crab", None, destroyed_in_turn=1, destroyed_by="winner")
    state = TurnState(game_map=game_map, turn=2, armies=[army], control=game_map.initial_control())

    assert order_options(state, "crab-1").reforms == reform_provinces(state, "crab-1")


def test_an_unknown_army_is_refused_by_name() -> None:
    with pytest.raises(RulesInputError, match='unknown army "nobody"'):
        order_options(line(), "nobody")
