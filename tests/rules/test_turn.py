"""The turn engine as a library: draws, randomness and inputs it refuses (R5, R11)."""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from sl5r.rules.errors import RulesInputError
from sl5r.rules.mapgraph import map_from_dict
from sl5r.rules.turn import Army, DrawMethod, Order, Outcome, TurnState, adjudicate_turn

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
