"""Adjudicating one strategic turn (R4–R9): orders in, positions, meetings and control out.

``adjudicate_turn`` is a pure function. Everything random goes through the ``RandomSource``
the caller passes, and every draw comes back in the result (R11), so the same state, orders
and draws always give the same result. The decisions where rules.md leaves room are recorded
in docs/adjudication.md; the comments below say which rule each step carries out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal, Protocol

from .clans import CLANS, SCORPION, UNICORN
from .errors import RulesInputError
from .mapgraph import GameMap
from .scoring import clan_scores, small_farms

OnSwap = Literal["stay", "advance"]
DestroyedBy = Literal["loss", "winner"]

# R9: a loser may reform from T + 2, an army destroyed by the winner's choice from T + 1.
REFORM_DELAY: Mapping[str, int] = {"loss": 2, "winner": 1}


class RandomSource(Protocol):
    """What the engine needs from a random generator; ``random.Random`` is one."""

    def choice(self, seq: Sequence[str], /) -> str: ...


class Outcome(str, Enum):
    MOVED = "moved"
    HELD = "held"
    BLOCKED = "blocked"
    STOPPED = "stopped"
    REFORMED = "reformed"
    REJECTED = "rejected"


class DrawMethod(str, Enum):
    GIVEN = "given"
    RANDOM = "random"
    SCORPION = "scorpion"


@dataclass(frozen=True, slots=True)
class Settings:
    clan_abilities: bool = True
    excluded_clans: frozenset[str] = frozenset()

    @property
    def clans(self) -> tuple[str, ...]:
        """The clans in the game (R1): the eight less the excluded ones."""
        return tuple(c for c in CLANS if c not in self.excluded_clans)


@dataclass(frozen=True, slots=True)
class Army:
    id: str
    clan: str
    province: str | None
    in_battle: bool = False
    destroyed_in_turn: int | None = None
    destroyed_by: DestroyedBy | None = None

    @property
    def destroyed(self) -> bool:
        return self.province is None


@dataclass(frozen=True, slots=True)
class Order:
    army: str
    move: tuple[str, ...] = ()
    reform: str | None = None
    claim: bool = True
    on_swap: OnSwap = "advance"
    late: bool = False


@dataclass(frozen=True, slots=True)
class TurnState:
    """The board at the start of a turn. ``control`` covers every province of the map."""

    game_map: GameMap
    turn: int
    armies: Sequence[Army]
    control: Mapping[str, str | None]
    settings: Settings = field(default_factory=Settings)


@dataclass(frozen=True, slots=True)
class OrderResult:
    army: str
    outcome: Outcome
    province: str | None
    reason_code: str | None = None
    reason_text: str | None = None

    @property
    def reason(self) -> str | None:
        if self.reason_code is None:
            return None
        return f"{self.reason_code}: {self.reason_text}"


@dataclass(frozen=True, slots=True)
class Draw:
    """How one swap conflict was decided (R5.2, R5.3, R11)."""

    provinces: tuple[str, str]
    moving_from: str
    method: DrawMethod
    choices: tuple[str, ...] = ()
    source: str | None = None
    armies: tuple[str, ...] = ()
    on_swap: OnSwap | None = None

    @property
    def key(self) -> str:
        return draw_key(*self.provinces)


@dataclass(frozen=True, slots=True)
class Meeting:
    province: str
    armies: tuple[str, ...]
    new: bool


@dataclass(frozen=True, slots=True)
class Reinforcement:
    province: str
    armies: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class TurnResult:
    turn: int
    armies: tuple[Army, ...]
    orders: tuple[OrderResult, ...]
    draws: tuple[Draw, ...]
    meetings: tuple[Meeting, ...]
    reinforcements: tuple[Reinforcement, ...]
    control: dict[str, str | None]
    scores: dict[str, int]
    small_farms: dict[str, int]


def draw_key(a: str, b: str) -> str:
    """The key of a swap draw: the two province ids sorted and joined with ``|``."""
    return f"{a}|{b}" if a < b else f"{b}|{a}"


class _Rejected(Exception):
    def __init__(self, code: str, text: str) -> None:
        super().__init__(code)
        self.code = code
        self.text = text


@dataclass(slots=True)
class _Plan:
    """A valid order, being carried out."""

    army: Army
    order: Order
    path: tuple[str, ...] = ()
    reform: str | None = None
    outcome: Outcome = Outcome.HELD
    end: str | None = None


def _validate(
    state: TurnState,
    army: Army,
    order: Order,
    blocked: frozenset[str],
    occupied: frozenset[str],
) -> _Plan:
    """Check one order against the start of the turn (R4, R5.4, R9); raise ``_Rejected``.

    The checks run in the order of docs/adjudication.md's table of reason codes.
    """
    game_map = state.game_map
    provinces = game_map.provinces
    if order.late:
        raise _Rejected("late", "the order arrived after the deadline")
    if army.in_battle:
        raise _Rejected("in_battle", "the army is in a battle; its General cannot give orders")
    if army.province is None and order.reform is None:
        raise _Rejected("destroyed", "the army is destroyed; it can only reform")
    if order.reform is not None:
        return _validate_reform(state, army, order, blocked)

    start = army.province
    assert start is not None
    path = order.move
    if not path:
        return _Plan(army=army, order=order, end=start)
    if len(path) > 2:
        raise _Rejected("too_many_steps", f"a move has one or two provinces, not {len(path)}")
    if len(path) == 2:
        if army.clan != UNICORN:
            raise _Rejected("not_unicorn", "only a Unicorn army may move two provinces")
        if not state.settings.clan_abilities:
            raise _Rejected("abilities_off", "clan abilities are off: no two-province moves")
    previous = start
    neighbours = game_map.neighbours
    for step in path:
        if step not in provinces:
            raise _Rejected("unknown_province", f'there is no province "{step}"')
        if step not in neighbours[previous]:
            raise _Rejected(
                "not_adjacent",
                f"{provinces[step].name} does not border {provinces[previous].name}",
            )
        if step in blocked:
            raise _Rejected("impassable", f"{provinces[step].name} is impassable")
        previous = step
    if len(path) == 2:
        if path[1] == start:
            raise _Rejected("returns", "a two-province move may not end where it started")
        taken = [p for p in path if p in occupied]
        if taken:
            raise _Rejected(
                "occupied",
                f"{provinces[taken[0]].name} held an army at the start of the turn",
            )
    return _Plan(army=army, order=order, path=path)


def _validate_reform(state: TurnState, army: Army, order: Order, blocked: frozenset[str]) -> _Plan:
    provinces = state.game_map.provinces
    target = order.reform
    assert target is not None
    if army.province is not None:
        raise _Rejected("not_destroyed", "only a destroyed army can reform")
    if target not in provinces:
        raise _Rejected("unknown_province", f'there is no province "{target}"')
    province = provinces[target]
    if target in blocked:
        raise _Rejected("impassable", f"{province.name} is impassable")
    first_turn = reform_first_turn(army)
    if state.turn < first_turn:
        raise _Rejected("too_early", f"the army may reform from turn {first_turn} on")
    if province.castle is None:
        raise _Rejected("not_castle", f"{province.name} has no castle")
    if province.home_clan != army.clan:
        raise _Rejected("not_home", f"{province.name} is not a home province of the clan")
    if state.control.get(target) != army.clan:
        raise _Rejected("not_controlled", f"the clan does not control {province.name}")
    return _Plan(army=army, order=order, reform=target)


@dataclass(frozen=True, slots=True)
class Rejection:
    code: str
    text: str

    def __str__(self) -> str:
        return f"{self.code}: {self.text}"


def reform_first_turn(army: Army) -> int:
    """R9: the first turn in which a destroyed army may give a Reform order."""
    return (army.destroyed_in_turn or 0) + REFORM_DELAY[army.destroyed_by or "loss"]


def reform_provinces(state: TurnState, army_id: str) -> tuple[str, ...]:
    """R9: the castle home provinces the army could reform in from its first reform turn,
    were the board as it is now (empty when its clan controls none of them).

    Each candidate is put to the same check the deadline makes, at the turn the army may
    reform from, so the site never offers what the turn would reject.
    """
    army = next((a for a in state.armies if a.id == army_id), None)
    if army is None or not army.destroyed:
        return ()
    at = replace(state, turn=max(state.turn, reform_first_turn(army)))
    homes = sorted(state.game_map.home_provinces.get(army.clan, ()))
    return tuple(p for p in homes if order_check(at, Order(army=army_id, reform=p)) is None)


def order_check(state: TurnState, order: Order) -> Rejection | None:
    """Why ``order`` would be rejected at the deadline if nothing changed, or None.

    The site uses it to refuse an illegal order as it is given (R4), with the same reason
    the turn would give.
    """
    army = next((a for a in state.armies if a.id == order.army), None)
    if army is None:
        return Rejection("unknown_army", f'there is no army "{order.army}"')
    blocked = state.game_map.blocked_provinces(state.settings.excluded_clans)
    occupied = frozenset(a.province for a in state.armies if a.province is not None)
    try:
        _validate(state, army, order, blocked, occupied)
    except _Rejected as rejected:
        return Rejection(rejected.code, rejected.text)
    return None


def adjudicate_turn(
    state: TurnState,
    orders: Sequence[Order],
    *,
    draws: Mapping[str, str] | None = None,
    rng: RandomSource,
    rng_label: str = "system",
) -> TurnResult:
    """Carry out one turn's orders at once (R4–R9) and report everything that happened.

    ``draws`` gives swap draws by ``draw_key`` (the value is the province whose armies
    move); a conflict without one is drawn with ``rng`` in the sorted order of the keys.
    """
    given = draws or {}
    game_map = state.game_map
    settings = state.settings
    armies = {a.id: a for a in state.armies}
    blocked = game_map.blocked_provinces(settings.excluded_clans)
    occupied = frozenset(a.province for a in state.armies if a.province is not None)
    battles = frozenset(a.province for a in state.armies if a.in_battle and a.province)

    plans: dict[str, _Plan] = {}
    results: dict[str, OrderResult] = {}
    for index, order in enumerate(orders):
        army = armies.get(order.army)
        if army is None:
            raise RulesInputError(f"orders[{index}].army", f'unknown army "{order.army}"')
        try:
            plans[order.army] = _validate(state, army, order, blocked, occupied)
        except _Rejected as rejected:
            results[order.army] = OrderResult(
                army=army.id,
                outcome=Outcome.REJECTED,
                province=army.province,
                reason_code=rejected.code,
                reason_text=rejected.text,
            )

    decided = _resolve_swaps(state, plans, given, rng, rng_label)
    _resolve_unicorn_stops(plans)

    # Where every army ends and who arrived where (R5, R9), in one pass over the armies.
    # R5.5, R8: whoever enters a province with a battle going on joins it.
    final: list[Army] = []
    arrived: set[str] = set()
    by_province: dict[str, list[Army]] = {}
    joining: dict[str, list[str]] = {}
    for army in state.armies:
        plan = plans.get(army.id)
        end = army.province if plan is None else plan.end
        if end is not None and end != army.province:
            arrived.add(army.id)
            in_battle = end in battles
            army = Army(id=army.id, clan=army.clan, province=end, in_battle=in_battle)
            if in_battle:
                joining.setdefault(end, []).append(army.id)
        final.append(army)
        if end is not None:
            present = by_province.get(end)
            if present is None:
                by_province[end] = [army]
            else:
                present.append(army)
    reinforcements = [
        Reinforcement(province=pid, armies=tuple(sorted(ids)))
        for pid, ids in sorted(joining.items())
    ]

    # R7 meetings and R6 control, province by province.
    control = dict(state.control)
    meetings: list[Meeting] = []
    for pid, present in by_province.items():
        if pid in battles:
            continue  # R6: no change of hands while a battle goes on.
        clan = present[0].clan
        if len(present) > 1 and any(a.clan != clan for a in present):
            meetings.append(
                Meeting(
                    province=pid,
                    armies=tuple(sorted(a.id for a in present)),
                    new=any(a.id in arrived for a in present),
                )
            )
        elif control.get(pid) != clan and any(_claims(plans.get(a.id)) for a in present):
            control[pid] = clan
    meetings.sort(key=lambda m: m.province)

    for aid, plan in plans.items():
        results[aid] = OrderResult(army=aid, outcome=plan.outcome, province=plan.end)
    if len(results) != len(orders):
        _raise_second_order(orders)

    clans_in_game = settings.clans
    return TurnResult(
        turn=state.turn,
        armies=tuple(final),
        orders=tuple(results[o.army] for o in orders),
        draws=tuple(decided),
        meetings=tuple(meetings),
        reinforcements=tuple(reinforcements),
        control=control,
        scores=clan_scores(game_map, control, clans_in_game),
        small_farms=small_farms(game_map, control, clans_in_game),
    )


def _raise_second_order(orders: Sequence[Order]) -> None:
    seen: set[str] = set()
    for index, order in enumerate(orders):
        if order.army in seen:
            raise RulesInputError(f"orders[{index}].army", f'a second order for "{order.army}"')
        seen.add(order.army)


def _claims(plan: _Plan | None) -> bool:
    # R6: an army claims unless the order carried out for it says claim: false.
    return plan is None or plan.order.claim


def _resolve_swaps(
    state: TurnState,
    plans: dict[str, _Plan],
    given: Mapping[str, str],
    rng: RandomSource,
    rng_label: str,
) -> list[Draw]:
    """Carry out single moves and reforms, deciding swap conflicts (R5.2, R5.3)."""
    edges: dict[tuple[str, str], list[_Plan]] = {}
    opposed: list[tuple[str, str]] = []
    for plan in plans.values():
        path = plan.path
        if plan.reform is not None:
            plan.outcome, plan.end = Outcome.REFORMED, plan.reform
        elif len(path) == 1:
            start = plan.army.province
            assert start is not None
            key = (start, path[0])
            group = edges.get(key)
            if group is None:
                edges[key] = [plan]
                if (path[0], start) in edges:
                    opposed.append(key)
            else:
                group.append(plan)
            plan.outcome, plan.end = Outcome.MOVED, path[0]
        elif len(path) == 2:
            plan.outcome, plan.end = Outcome.MOVED, path[1]
        else:
            plan.end = plan.army.province

    conflicts: list[tuple[str, str]] = []
    for a, b in opposed:
        sides = edges[(a, b)] + edges[(b, a)]
        if len({p.army.clan for p in sides}) > 1:
            conflicts.append((a, b) if a < b else (b, a))

    decided: list[Draw] = []
    for a, b in sorted(conflicts, key=lambda pair: draw_key(*pair)):
        draw = _decide_conflict(state, a, b, edges[(a, b)], edges[(b, a)], given, rng, rng_label)
        decided.append(draw)
        staying_from = b if draw.moving_from == a else a
        staying_to = a if staying_from == b else b
        for plan in edges[(staying_from, staying_to)]:
            plan.outcome, plan.end = Outcome.BLOCKED, staying_from
    return decided


def _decide_conflict(
    state: TurnState,
    a: str,
    b: str,
    from_a: list[_Plan],
    from_b: list[_Plan],
    given: Mapping[str, str],
    rng: RandomSource,
    rng_label: str,
) -> Draw:
    pair = (a, b)
    if state.settings.clan_abilities:
        scorpions_a = [p for p in from_a if p.army.clan == SCORPION]
        scorpions_b = [p for p in from_b if p.army.clan == SCORPION]
        if bool(scorpions_a) != bool(scorpions_b):
            side, scorpions = (a, scorpions_a) if scorpions_a else (b, scorpions_b)
            choices = {p.order.on_swap for p in scorpions}
            if len(choices) == 1:
                # R5.3: "advance" fights where the Scorpion goes, "stay" where it stands.
                on_swap = choices.pop()
                other = b if side == a else a
                return Draw(
                    provinces=pair,
                    moving_from=side if on_swap == "advance" else other,
                    method=DrawMethod.SCORPION,
                    armies=tuple(sorted(p.army.id for p in scorpions)),
                    on_swap=on_swap,
                )
    key = draw_key(a, b)
    if key in given:
        return Draw(provinces=pair, moving_from=given[key], method=DrawMethod.GIVEN)
    return Draw(
        provinces=pair,
        moving_from=rng.choice(pair),
        method=DrawMethod.RANDOM,
        choices=pair,
        source=rng_label,
    )


def _resolve_unicorn_stops(plans: dict[str, _Plan]) -> None:
    """R5.4: a double move stops in P1 when another clan's army enters P1 this turn.

    Only single moves and reforms can enter P1: P1 was empty at the start of the turn, so no
    swap can block them, and double moves are the Unicorn's alone.
    """
    doubles = [p for p in plans.values() if len(p.path) == 2]
    if not doubles:
        return
    firsts = {p.path[0] for p in doubles}
    entering: dict[str, set[str]] = {}
    for plan in plans.values():
        end = plan.end
        if end in firsts and len(plan.path) != 2 and end != plan.army.province:
            entering.setdefault(end, set()).add(plan.army.clan)
    for plan in doubles:
        first = plan.path[0]
        if entering.get(first, set()) - {plan.army.clan}:
            plan.outcome, plan.end = Outcome.STOPPED, first
