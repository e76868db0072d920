"""Hypothesis strategies for the rules engine: random connected maps, armies, orders, draws.

A ``Scenario`` is one turn's whole input: the map (as the dict ``map_from_dict`` reads, and
built), the state at the start of the turn, the orders, the given draws and the seed of the
random source. Its ``repr`` is the turn as a case file (docs/adjudication.md) with its seed,
so a failing example can be saved and run with ``manage.py adjudicate``.

The values are drawn so that what the engine decides happens often: a few clans share a
small map (swap conflicts, meetings, rotations), Unicorn and Scorpion armies are common,
moves often go towards another army or along empty provinces (Unicorn double moves), and the
orders mix legal moves with every kind of illegal one (R4's reasons).

Speed: hypothesis spends far more time per draw than the engine spends per turn, so each
army (with its order) or province is one drawn integer, scrambled and read as mixed-radix
digits (``_Digits``), and the strategies are built once. Zero decodes to the plainest value
of every field, so examples still shrink towards plain cases: no home clan, no castle,
passable provinces, living armies, holds that claim.
"""

from __future__ import annotations

import functools
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from hypothesis import strategies as st

from sl5r.rules import (
    Army,
    GameMap,
    Order,
    RandomSource,
    Settings,
    TurnResult,
    TurnState,
    adjudicate_turn,
    draw_key,
    map_from_dict,
)
from sl5r.rules.casefile import case_to_dict
from sl5r.rules.clans import CLANS, SCORPION, UNICORN
from sl5r.rules.turn import OnSwap

MIN_PROVINCES = 3
MAX_PROVINCES = 30
MAX_ARMIES = 24
MAX_TURN = 6
MAX_GIVEN_DRAWS = 6
UNKNOWN_PROVINCE = "nowhere"

T = TypeVar("T")

# What an army is at the start of the turn; the plain kind first (0 decodes to it).
ALIVE, IN_BATTLE, DESTROYED = "alive", "in_battle", "destroyed"
ARMY_KINDS = (ALIVE,) * 6 + (IN_BATTLE, DESTROYED)

# Order kinds, weighted by repetition; the plain one first.
NO_ORDER, HOLD = "no_order", "hold"
_ILLEGAL = ("any", "unknown", "unknown_second", "any_two", "three", "reform", "reform_any")
ORDER_KINDS = (
    (NO_ORDER, HOLD)
    + ("neighbour",) * 6
    + ("towards",) * 8  # to a neighbour that holds an army: swaps and meetings
    + ("two_free", "two_steps")  # not for a Unicorn: rejected
    + _ILLEGAL
)
UNICORN_ORDER_KINDS = (
    (NO_ORDER, HOLD)
    + ("neighbour",) * 3
    + ("towards",) * 4
    + ("two_free",) * 8  # along two provinces empty at the start: double moves (R5.4)
    + ("two_steps",) * 2
    + _ILLEGAL
)
DESTROYED_ORDER_KINDS = (NO_ORDER, "reform", "reform", "reform", "reform_any", HOLD, "any")


@dataclass(frozen=True)
class Scenario:
    map_data: dict[str, Any]
    game_map: GameMap
    state: TurnState
    orders: tuple[Order, ...]
    draws: dict[str, str]
    seed: int

    @property
    def rng_label(self) -> str:
        return f"seed {self.seed}"

    def run(
        self, *, draws: Mapping[str, str] | None = None, rng: RandomSource | None = None
    ) -> TurnResult:
        """Adjudicate the turn with its own draws and ``random.Random(seed)`` by default."""
        return adjudicate_turn(
            self.state,
            self.orders,
            draws=self.draws if draws is None else draws,
            rng=random.Random(self.seed) if rng is None else rng,
            rng_label=self.rng_label,
        )

    def as_case(self) -> dict[str, Any]:
        """The turn as a case file (format 1), seed included."""
        case = case_to_dict(
            state=self.state, orders=self.orders, draws=self.draws, map_ref=self.map_data
        )
        case["seed"] = self.seed
        return case

    def __repr__(self) -> str:
        return f"Scenario(case={json.dumps(self.as_case(), ensure_ascii=False)})"


def scenario_from(
    map_data: dict[str, Any],
    *,
    armies: Sequence[Army],
    orders: Sequence[Order],
    turn: int = 1,
    settings: Settings | None = None,
    control: Mapping[str, str | None] | None = None,
    draws: Mapping[str, str] | None = None,
    seed: int = 0,
) -> Scenario:
    """A hand-written scenario, for ``@example`` and plain tests."""
    game_map = map_from_dict(map_data)
    settings = settings or Settings()
    start_control = game_map.initial_control(settings.excluded_clans)
    start_control.update(control or {})
    return Scenario(
        map_data=map_data,
        game_map=game_map,
        state=TurnState(
            game_map=game_map,
            turn=turn,
            armies=tuple(armies),
            control=start_control,
            settings=settings,
        ),
        orders=tuple(orders),
        draws=dict(draws or {}),
        seed=seed,
    )


MASK64 = 2**64 - 1


def _mix(code: int) -> int:
    """SplitMix64's finaliser, a bijection of 64-bit integers, with 0 kept as 0.

    Hypothesis draws mostly small integers; mixed, a small code still has random high
    digits, so every field is spread evenly, and 0 still decodes to the plainest values.
    """
    if code == 0:
        return 0
    z = (code + 0x9E3779B97F4A7C15) & MASK64
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return z ^ (z >> 31)


class _Digits:
    """A drawn integer, mixed, read as mixed-radix digits: one draw fills many fields."""

    def __init__(self, code: int) -> None:
        self.value = _mix(code)

    def take(self, base: int) -> int:
        if base <= 1:
            return 0
        digit = self.value % base
        self.value //= base
        return digit

    def pick(self, choices: Sequence[T]) -> T:
        return choices[self.take(len(choices))]


# Strategies are built once: building one inside a composite costs more than drawing it.
CODE = st.integers(0, MASK64)
EXCLUSIONS: st.SearchStrategy[frozenset[str]] = st.one_of(
    st.just(frozenset()), st.frozensets(st.sampled_from(CLANS), min_size=1, max_size=2)
)


@functools.cache
def _codes(size: int) -> st.SearchStrategy[list[int]]:
    return st.lists(CODE, min_size=size, max_size=size)


@functools.cache
def _army_clans(in_game: tuple[str, ...]) -> st.SearchStrategy[list[str]]:
    specials = [c for c in (UNICORN, SCORPION) if c in in_game]
    return st.lists(st.sampled_from(specials + list(in_game)), min_size=1, max_size=4, unique=True)


@st.composite
def map_dicts(draw: st.DrawFn, home_clans: Sequence[str] = CLANS) -> dict[str, Any]:
    """A connected map as ``map_from_dict`` reads it: a random spanning tree plus extra borders.

    Every province has a home clan or none (``home_clans`` more often than the other
    clans), a castle one time in three, and is impassable one time in twelve.
    """
    # Sizes come from a mixed code: hypothesis's own integers are mostly small. Small maps
    # are more frequent (the smaller of two draws), so that armies meet and swap.
    sizes = _Digits(draw(CODE))
    spread = MAX_PROVINCES - MIN_PROVINCES + 1
    n = MIN_PROVINCES + min(sizes.take(spread), sizes.take(spread))
    home_choices: list[str | None] = [None, *home_clans, *home_clans, *CLANS]
    provinces: list[dict[str, Any]] = []
    pairs: list[tuple[int, int]] = []
    for i, code in enumerate(draw(_codes(n))):
        digits = _Digits(code)
        provinces.append(
            {
                "id": f"p{i}",
                "name": f"Province {i}",
                "home_clan": digits.pick(home_choices),
                "castle": digits.take(3) == 2,
                "impassable": digits.take(12) == 11,
            }
        )
        if i:
            # A random spanning tree keeps the map connected whatever else is drawn.
            pairs.append((digits.take(i), i))
    seen = {frozenset(p) for p in pairs}
    for code in draw(_codes(sizes.take(n + 1))):
        digits = _Digits(code)
        a, b = digits.take(n), digits.take(n)
        if a != b and frozenset((a, b)) not in seen:
            seen.add(frozenset((a, b)))
            pairs.append((a, b))
    return {
        "id": "random",
        "provinces": provinces,
        "borders": [[f"p{a}", f"p{b}"] for a, b in pairs],
    }


def _order(
    digits: _Digits,
    army: Army,
    game_map: GameMap,
    ids: Sequence[str],
    occupied: frozenset[str],
) -> Order | None:
    neighbours = game_map.neighbours
    if army.province is None:
        kind = digits.pick(DESTROYED_ORDER_KINDS)
    else:
        kind = digits.pick(UNICORN_ORDER_KINDS if army.clan == UNICORN else ORDER_KINDS)
    if kind == NO_ORDER:
        return None
    claim = digits.take(4) != 3
    on_swap: OnSwap = "stay" if digits.take(2) else "advance"
    late = digits.take(20) == 19
    near = sorted(neighbours[army.province]) if army.province is not None else []
    move: tuple[str, ...] = ()
    reform: str | None = None
    if kind == "neighbour" and near:
        move = (digits.pick(near),)
    elif kind == "towards" and near:
        move = (digits.pick([p for p in near if p in occupied] or near),)
    elif kind == "two_free" and near:
        free = [p for p in near if p not in occupied] or near
        first = digits.pick(free)
        onward = sorted(neighbours[first] - occupied - {army.province}) or sorted(neighbours[first])
        move = (first, digits.pick(onward))
    elif kind == "two_steps" and near:
        first = digits.pick(near)
        move = (first, digits.pick(sorted(neighbours[first])))
    elif kind == "unknown":
        move = (UNKNOWN_PROVINCE,)
    elif kind == "unknown_second" and near:
        move = (digits.pick(near), UNKNOWN_PROVINCE)
    elif kind == "any_two":
        move = (digits.pick(ids), digits.pick(ids))
    elif kind == "three":
        move = (digits.pick(ids), digits.pick(ids), digits.pick(ids))
    elif kind == "reform":
        homes = game_map.home_provinces.get(army.clan, ())
        castles = [pid for pid in homes if pid in game_map.castles]
        reform = digits.pick(castles or ids)
    elif kind == "reform_any":
        reform = digits.pick(ids)
    elif kind != HOLD:
        move = (digits.pick(ids),)
    return Order(army=army.id, move=move, reform=reform, claim=claim, on_swap=on_swap, late=late)


@st.composite
def scenarios(draw: st.DrawFn) -> Scenario:
    """One turn's input: map, settings, turn, control, armies, orders, given draws, seed."""
    excluded = draw(EXCLUSIONS)
    army_clans = draw(_army_clans(tuple(c for c in CLANS if c not in excluded)))
    map_data = draw(map_dicts(home_clans=army_clans))
    game_map = map_from_dict(map_data)
    ids = sorted(game_map.provinces)
    blocked = game_map.blocked_provinces(excluded)
    passable = [pid for pid in ids if pid not in blocked]

    general = _Digits(draw(CODE))
    settings = Settings(clan_abilities=general.take(4) != 3, excluded_clans=excluded)
    turn = MAX_TURN - general.take(MAX_TURN)

    # Control: the home clans', with some provinces given to another clan or to nobody.
    control = game_map.initial_control(excluded)
    for code in draw(_codes(general.take(len(ids) + 1))):
        digits = _Digits(code)
        control[digits.pick(ids)] = digits.pick([None, *army_clans])

    # Armies, each drawn with its order: where they stand decides what orders make sense.
    army_digits: list[_Digits] = []
    armies: list[Army] = []
    # Many armies more often (the larger of two draws).
    count = max(general.take(MAX_ARMIES + 1), general.take(MAX_ARMIES + 1))
    for i, code in enumerate(draw(_codes(count))):
        digits = _Digits(code)
        clan = digits.pick(army_clans)
        kind = digits.pick(ARMY_KINDS)
        aid = f"{clan}-{i}"
        if kind == DESTROYED or not passable:
            army = Army(
                id=aid,
                clan=clan,
                province=None,
                destroyed_in_turn=1 + digits.take(turn),
                destroyed_by=digits.pick(("loss", "winner")),
            )
        else:
            # Low ids more often: they are near the spanning tree's root, so armies crowd.
            province = passable[min(digits.take(len(passable)), digits.take(len(passable)))]
            army = Army(id=aid, clan=clan, province=province, in_battle=kind == IN_BATTLE)
        armies.append(army)
        army_digits.append(digits)

    occupied = frozenset(a.province for a in armies if a.province is not None)
    ordered = list(range(len(armies)))
    shuffle = general.take(2**16)
    if shuffle:  # 0 keeps the armies' own order
        random.Random(shuffle).shuffle(ordered)
    orders = tuple(
        order
        for i in ordered
        if (order := _order(army_digits[i], armies[i], game_map, ids, occupied)) is not None
    )

    given: dict[str, str] = {}
    draws_digits = _Digits(draw(CODE))
    if game_map.borders:
        for _ in range(draws_digits.take(MAX_GIVEN_DRAWS + 1)):
            a, b = draws_digits.pick(game_map.borders)
            given[draw_key(a, b)] = (a, b)[draws_digits.take(2)]

    return Scenario(
        map_data=map_data,
        game_map=game_map,
        state=TurnState(
            game_map=game_map,
            turn=turn,
            armies=tuple(armies),
            control=control,
            settings=settings,
        ),
        orders=orders,
        draws=given,
        seed=draw(CODE) % 2**32,
    )
