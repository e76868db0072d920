"""The turn engine as a library: draws, randomness and inputs it refuses (R5, R11)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from sl5r.rules.errors import RulesInputError
from sl5r.rules.mapgraph import map_from_dict
from sl5r.rules.turn import (
    Army,
    DrawMethod,
    Order,
    Outcome,
    Settings,
    TurnState,
    adjudicate_turn,
    order_check,
)

SQUARE = map_from_dict(
    {
        "provinces": [{"id": p, "home_clan": None, "castle": False} for p in "abcd"],
        "borders": [["a", "b"], ["b", "c"], ["c", "d"], ["d", "a"]],
    }
)


class CountingSource:
    """A random source that records what it was asked to choose from."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, ...]] = []

    def choice(self, seq: Sequence[str], /) -> str:
        self.asked.append(tuple(seq))
        return seq[-1]


def state(*armies: Army) -> TurnState:
    return TurnState(game_map=SQUARE, turn=1, armies=armies, control=SQUARE.initial_control())


def two_swaps() -> tuple[TurnState, list[Order]]:
    s = state(
        Army("crab-1", "crab", "a"),
        Army("lion-1", "lion", "b"),
        Army("crane-1", "crane", "c"),
        Army("dragon-1", "dragon", "d"),
    )
    orders = [
        Order("crane-1", move=("d",)),
        Order("dragon-1", move=("c",)),
        Order("crab-1", move=("b",)),
        Order("lion-1", move=("a",)),
    ]
    return s, orders


def test_r11_random_source_is_asked_once_per_conflict_in_sorted_key_order() -> None:
    s, orders = two_swaps()
    source = CountingSource()
    result = adjudicate_turn(s, orders, rng=source, rng_label="test")
    assert source.asked == [("a", "b"), ("c", "d")]
    assert [d.provinces for d in result.draws] == [("a", "b"), ("c", "d")]
    assert all(d.method is DrawMethod.RANDOM and d.source == "test" for d in result.draws)
    assert {o.army: o.outcome for o in result.orders} == {
        "crane-1": Outcome.BLOCKED,
        "dragon-1": Outcome.MOVED,
        "crab-1": Outcome.BLOCKED,
        "lion-1": Outcome.MOVED,
    }


def test_r11_given_draws_are_not_drawn_again() -> None:
    s, orders = two_swaps()
    source = CountingSource()
    result = adjudicate_turn(s, orders, draws={"a|b": "a"}, rng=source)
    assert source.asked == [("c", "d")]
    assert result.draws[0].method is DrawMethod.GIVEN
    assert result.draws[0].moving_from == "a"


def test_r5_2_no_conflict_means_no_draw() -> None:
    s = state(Army("crab-1", "crab", "a"), Army("crab-2", "crab", "b"))
    source = CountingSource()
    result = adjudicate_turn(
        s, [Order("crab-1", move=("b",)), Order("crab-2", move=("a",))], rng=source
    )
    assert source.asked == [] and result.draws == ()
    assert [a.province for a in result.armies] == ["b", "a"]


def test_engine_refuses_orders_for_unknown_or_twice_ordered_armies() -> None:
    s = state(Army("crab-1", "crab", "a"))
    with pytest.raises(RulesInputError, match=r'orders\[0\].army: unknown army "ghost"'):
        adjudicate_turn(s, [Order("ghost")], rng=random.Random(1))
    with pytest.raises(RulesInputError, match="a second order"):
        adjudicate_turn(s, [Order("crab-1"), Order("crab-1")], rng=random.Random(1))


def test_rejected_order_reason_is_code_and_sentence() -> None:
    s = state(Army("crab-1", "crab", "a"))
    result = adjudicate_turn(s, [Order("crab-1", move=("c",))], rng=random.Random(1))
    (order,) = result.orders
    assert order.outcome is Outcome.REJECTED
    assert order.reason_code == "not_adjacent"
    assert order.reason == "not_adjacent: c does not border a"


def test_input_state_is_not_modified() -> None:
    s, orders = two_swaps()
    before = (tuple(s.armies), dict(s.control))
    adjudicate_turn(s, orders, rng=random.Random(3))
    assert (tuple(s.armies), dict(s.control)) == before


# --- the reasons of rejected orders, as people read them ---------------------------------

NAMED = map_from_dict(
    {
        "provinces": [
            {"id": "a", "name": "Alpha", "home_clan": "crab", "castle": "Kyuden Alpha"},
            {"id": "b", "name": "Beta", "home_clan": None, "castle": False},
            {"id": "c", "name": "Gamma", "home_clan": None, "castle": False, "impassable": True},
            {"id": "d", "name": "Delta", "home_clan": "lion", "castle": True},
            {"id": "e", "name": "Epsilon", "home_clan": "crab", "castle": False},
            {"id": "f", "name": "Phi", "home_clan": "crab", "castle": True},
        ],
        "borders": [["a", "b"], ["b", "c"], ["b", "d"], ["a", "e"], ["e", "f"], ["d", "f"]],
    }
)
NAMED_ARMIES = (
    Army("crab-1", "crab", "a"),
    Army("crab-2", "crab", None, destroyed_in_turn=1, destroyed_by="loss"),
    Army("crab-3", "crab", None, destroyed_in_turn=1, destroyed_by="winner"),
    Army("lion-1", "lion", "d", in_battle=True),
    Army("unicorn-1", "unicorn", "e"),
    Army("unicorn-2", "unicorn", "d"),
    Army("crane-1", "crane", "b"),
)


@pytest.mark.parametrize(
    ("order", "reason"),
    [
        (Order("crab-1", move=("b",), late=True), "late: the order arrived after the deadline"),
        (
            Order("lion-1", move=("b",)),
            "in_battle: the army is in a battle; its General cannot give orders",
        ),
        (Order("crab-2", move=("a",)), "destroyed: the army is destroyed; it can only reform"),
        (Order("crab-1", reform="a"), "not_destroyed: only a destroyed army can reform"),
        (
            Order("unicorn-1", move=("a", "b", "d")),
            "too_many_steps: a move has one or two provinces, not 3",
        ),
        (
            Order("crab-1", move=("b", "d")),
            "not_unicorn: only a Unicorn army may move two provinces",
        ),
        (Order("crab-1", move=("zz",)), 'unknown_province: there is no province "zz"'),
        (Order("crab-3", reform="zz"), 'unknown_province: there is no province "zz"'),
        (Order("crab-1", move=("d",)), "not_adjacent: Delta does not border Alpha"),
        (Order("crane-1", move=("c",)), "impassable: Gamma is impassable"),
        (
            Order("unicorn-1", move=("f", "e")),
            "returns: a two-province move may not end where it started",
        ),
        (
            Order("unicorn-2", move=("b", "a")),
            "occupied: Beta held an army at the start of the turn",
        ),
        (Order("crab-2", reform="a"), "too_early: the army may reform from turn 3 on"),
        (Order("crab-3", reform="e"), "not_castle: Epsilon has no castle"),
        (Order("crab-3", reform="d"), "not_home: Delta is not a home province of the clan"),
        (Order("crab-3", reform="f"), "not_controlled: the clan does not control Phi"),
    ],
)
def test_a_rejected_order_gives_the_reason_sentence_of_the_table(order: Order, reason: str) -> None:
    """docs/adjudication.md's reason codes, each with the sentence the site and the command
    have always shown (R4, R5.4, R9); the turn and ``order_check`` give the same one."""
    s = TurnState(
        game_map=NAMED,
        turn=2,
        armies=NAMED_ARMIES,
        control={**NAMED.initial_control(), "f": "lion"},
    )
    result = adjudicate_turn(s, [order], rng=random.Random(1))
    (outcome,) = result.orders
    assert outcome.outcome is Outcome.REJECTED
    assert outcome.reason == reason
    assert (outcome.reason_code, outcome.reason_text) == tuple(reason.split(": ", 1))
    rejection = order_check(s, order)
    assert rejection is not None
    assert str(rejection) == reason


def test_a_two_province_move_with_abilities_off_gives_the_abilities_off_sentence() -> None:
    s = TurnState(
        game_map=NAMED,
        turn=2,
        armies=NAMED_ARMIES,
        control=NAMED.initial_control(),
        settings=Settings(clan_abilities=False),
    )
    order = Order("unicorn-1", move=("a", "b"))
    (outcome,) = adjudicate_turn(s, [order], rng=random.Random(1)).orders
    assert outcome.reason == "abilities_off: clan abilities are off: no two-province moves"


def test_a_carried_out_order_has_no_reason() -> None:
    s = TurnState(game_map=NAMED, turn=2, armies=NAMED_ARMIES, control=NAMED.initial_control())
    (outcome,) = adjudicate_turn(s, [Order("crab-1", move=("b",))], rng=random.Random(1)).orders
    assert (outcome.reason_code, outcome.reason_text, outcome.reason) == (None, None, None)


def test_an_unknown_army_is_refused_by_order_check_with_its_sentence() -> None:
    s = TurnState(game_map=NAMED, turn=2, armies=NAMED_ARMIES, control=NAMED.initial_control())
    rejection = order_check(s, Order("ghost-1", move=("b",)))
    assert rejection is not None
    assert str(rejection) == 'unknown_army: there is no army "ghost-1"'
