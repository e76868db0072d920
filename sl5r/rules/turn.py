"""Adjudicating one strategic turn (R4–R9): orders in, positions, meetings and control out.

``adjudicate_turn`` is a pure function. Everything random goes through the ``RandomSource``
the caller passes, and every draw comes back in the result (R11), so the same state, orders
and draws always give the same result. The decisions where rules.md leaves room are recorded
in docs/adjudication.md; the comments below say which rule each step carries out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Literal, Protocol

from .clans import CLANS, SCORPION, UNICORN
from .errors import RulesInputError
from .frozen import quick_init
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


@quick_init
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


@quick_init
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


# The sentence of each reason code (docs/adjudication.md's table), filled in with the
# parameters the check found. A turn keeps the code and the parameters and writes the
# sentence only when someone reads it: most rejections of a big turn are never printed.
REASON_TEXTS: Mapping[str, str] = {
    "unknown_army": 'there is no army "{0}"',
    "late": "the order arrived after the deadline",
    "in_battle": "the army is in a battle; its General cannot give orders",
    "destroyed": "the army is destroyed; it can only reform",
    "not_destroyed": "only a destroyed army can reform",
    "too_many_steps": "a move has one or two provinces, not {0}",
    "not_unicorn": "only a Unicorn army may move two provinces",
    "abilities_off": "clan abilities are off: no two-province moves",
    "unknown_province": 'there is no province "{0}"',
    "not_adjacent": "{0} does not border {1}",
    "impassable": "{0} is impassable",
    "returns": "a two-province move may not end where it started",
    "occupied": "{0} held an army at the start of the turn",
    "too_early": "the army may reform from turn {0} on",
    "not_castle": "{0} has no castle",
    "not_home": "{0} is not a home province of the clan",
    "not_controlled": "the clan does not control {0}",
}


def reason_text(code: str, args: tuple[str | int, ...]) -> str:
    """The sentence of a reason code with its parameters (province names, a count, a turn)."""
    return REASON_TEXTS[code].format(*args)


@quick_init
@dataclass(frozen=True, slots=True)
class OrderResult:
    army: str
    outcome: Outcome
    province: str | None
    reason_code: str | None = None
    reason_args: tuple[str | int, ...] = ()

    @property
    def reason_text(self) -> str | None:
        if self.reason_code is None:
            return None
        return reason_text(self.reason_code, self.reason_args)

    @property
    def reason(self) -> str | None:
        if self.reason_code is None:
            return None
        return f"{self.reason_code}: {reason_text(self.reason_code, self.reason_args)}"


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


# A rejected order: its reason code and the parameters of its sentence (REASON_TEXTS).
_Refusal = tuple[str, tuple[str | int, ...]]


@dataclass(slots=True)
class _Plan:
    """A valid order, being carried out: ``end`` is where it leads, until a swap conflict
    (R5.2) or a Unicorn stop (R5.4) changes it."""

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
) -> _Plan | _Refusal:
    """Check one order against the start of the turn (R4, R5.4, R9): a plan, or why not.

    The checks run in the order of docs/adjudication.md's table of reason codes.
    """
    if order.late:
        return "late", ()
    if army.in_battle:
        return "in_battle", ()
    start = army.province
    if order.reform is not None:
        return _validate_reform(state, army, order, blocked)
    if start is None:
        return "destroyed", ()
    path = order.move
    if not path:
        return _Plan(army, order, (), None, Outcome.HELD, start)
    game_map = state.game_map
    neighbours = game_map.neighbours
    if len(path) == 1:
        step = path[0]
        # The usual order, one step along a border into a passable province.
        if step in neighbours[start] and step not in blocked:
            return _Plan(army, order, path, None, Outcome.MOVED, step)
    elif len(path) > 2:
        return "too_many_steps", (len(path),)
    elif army.clan != UNICORN:
        return "not_unicorn", ()
    elif not state.settings.clan_abilities:
        return "abilities_off", ()
    provinces = game_map.provinces
    previous = start
    for step in path:
        if step not in provinces:
            return "unknown_province", (step,)
        if step not in neighbours[previous]:
            return "not_adjacent", (provinces[step].name, provinces[previous].name)
        if step in blocked:
            return "impassable", (provinces[step].name,)
        previous = step
    if len(path) == 2:
        if path[1] == start:
            return "returns", ()
        for p in path:
            if p in occupied:
                return "occupied", (provinces[p].name,)
    return _Plan(army, order, path, None, Outcome.MOVED, path[-1])


def _validate_reform(
    state: TurnState, army: Army, order: Order, blocked: frozenset[str]
) -> _Plan | _Refusal:
    provinces = state.game_map.provinces
    target = order.reform
    assert target is not None
    if army.province is not None:
        return "not_destroyed", ()
    if target not in provinces:
        return "unknown_province", (target,)
    province = provinces[target]
    if target in blocked:
        return "impassable", (province.name,)
    first_turn = reform_first_turn(army)
    if state.turn < first_turn:
        return "too_early", (first_turn,)
    if province.castle is None:
        return "not_castle", (province.name,)
    if province.home_clan != army.clan:
        return "not_home", (province.name,)
    if state.control.get(target) != army.clan:
        return "not_controlled", (province.name,)
    return _Plan(army, order, (), target, Outcome.REFORMED, target)


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
        return Rejection("unknown_army", reason_text("unknown_army", (order.army,)))
    blocked = state.game_map.blocked_provinces(state.settings.excluded_clans)
    occupied = frozenset(a.province for a in state.armies if a.province is not None)
    checked = _validate(state, army, order, blocked, occupied)
    if isinstance(checked, _Plan):
        return None
    code, args = checked
    return Rejection(code, reason_text(code, args))


@dataclass(frozen=True, slots=True)
class OrderOptions:
    """Every order the deadline would accept for one army, were the board as in ``state``.

    ``hold``: whether a Hold is accepted (an army on the map, not in a battle; R4).
    ``moves``: every accepted path, the one-province moves first, then a Unicorn's
    two-province moves (R5.4), each group sorted. ``reforms``: the provinces a Reform order
    may name now (R9); ``reform_from``: for a destroyed army, the first turn it may reform
    in. ``swap_choice``: whether the army's order carries the Scorpion's ``on_swap``
    (R5.3, R10): clan abilities on, a Scorpion army with a one-province move to give (only
    single moves meet head on). ``claim: false`` may go with any order (R6).
    """

    army: str
    clan: str
    province: str | None
    in_battle: bool
    hold: bool
    moves: tuple[tuple[str, ...], ...]
    reforms: tuple[str, ...]
    reform_from: int | None
    swap_choice: bool

    @property
    def any(self) -> bool:
        """Whether the army may be given any order at all this turn."""
        return self.hold or bool(self.moves) or bool(self.reforms)


def order_options(state: TurnState, army_id: str) -> OrderOptions:
    """The orders ``order_check`` accepts for ``army_id`` (R4, R5.4, R9): the site's list
    of choices (a paper slip, a drop-down), so it never offers what the turn would reject.

    Every candidate is put to ``order_check`` itself: a hold, a move to each neighbour, a
    two-province move through each neighbour's neighbours, a reform in each province. Any
    accepted order is among the candidates (a move must follow borders, a reform names a
    province of the map). Raises ``RulesInputError`` for an unknown army.
    """
    army = next((a for a in state.armies if a.id == army_id), None)
    if army is None:
        raise RulesInputError("army", f'unknown army "{army_id}"')
    neighbours = state.game_map.neighbours

    def accepted(order: Order) -> bool:
        return order_check(state, order) is None

    hold = accepted(Order(army=army_id))
    singles: list[tuple[str, ...]] = []
    doubles: list[tuple[str, ...]] = []
    if army.province is not None and not army.in_battle:
        for first in sorted(neighbours.get(army.province, ())):
            if accepted(Order(army=army_id, move=(first,))):
                singles.append((first,))
            for second in sorted(neighbours.get(first, ())):
                if accepted(Order(army=army_id, move=(first, second))):
                    doubles.append((first, second))
    reforms: tuple[str, ...] = ()
    if army.destroyed and not army.in_battle:
        reforms = tuple(
            pid for pid in sorted(state.game_map.provinces) if accepted(Order(army_id, reform=pid))
        )
    return OrderOptions(
        army=army_id,
        clan=army.clan,
        province=army.province,
        in_battle=army.in_battle,
        hold=hold,
        moves=(*singles, *doubles),
        reforms=reforms,
        reform_from=reform_first_turn(army) if army.destroyed else None,
        swap_choice=bool(singles) and army.clan == SCORPION and state.settings.clan_abilities,
    )


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
        checked = _validate(state, army, order, blocked, occupied)
        if isinstance(checked, _Plan):
            plans[order.army] = checked
        else:
            code, args = checked
            results[order.army] = OrderResult(army.id, Outcome.REJECTED, army.province, code, args)

    decided = _resolve_swaps(state, plans, given, rng, rng_label)
    _resolve_unicorn_stops(plans)

    # Where every army ends and who arrived where (R5, R9), in one pass over the armies.
    # R5.5, R8: whoever enters a province with a battle going on joins it.
    final: list[Army] = []
    arrived: set[str] = set()
    by_province: dict[str, list[Army]] = {}
    joining: dict[str, list[str]] = {}
    plan_of = plans.get
    for army in state.armies:
        plan = plan_of(army.id)
        end = army.province if plan is None else plan.end
        if end is None:
            final.append(army)
            continue
        if end != army.province:
            arrived.add(army.id)
            in_battle = end in battles
            army = Army(army.id, army.clan, end, in_battle)
            if in_battle:
                joining.setdefault(end, []).append(army.id)
        final.append(army)
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
        if len(present) > 1 and len({a.clan for a in present}) > 1:
            meetings.append(
                Meeting(
                    province=pid,
                    armies=tuple(sorted([a.id for a in present])),
                    new=not arrived.isdisjoint([a.id for a in present]),
                )
            )
        elif control.get(pid) != clan and _any_claims(present, plan_of):
            control[pid] = clan
    meetings.sort(key=lambda m: m.province)

    for aid, plan in plans.items():
        results[aid] = OrderResult(aid, plan.outcome, plan.end)
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


def _any_claims(present: list[Army], plan_of: Callable[[str], _Plan | None]) -> bool:
    # R6: an army claims unless the order carried out for it says claim: false.
    for army in present:
        plan = plan_of(army.id)
        if plan is None or plan.order.claim:
            return True
    return False


def _resolve_swaps(
    state: TurnState,
    plans: dict[str, _Plan],
    given: Mapping[str, str],
    rng: RandomSource,
    rng_label: str,
) -> list[Draw]:
    """Decide the swap conflicts of single moves (R5.2, R5.3); the losing side stays."""
    edges: dict[tuple[str, str], list[_Plan]] = {}
    opposed: list[tuple[str, str]] = []
    # Every plan already ends where its order leads (``_validate``); only single moves can
    # meet head on.
    for plan in plans.values():
        path = plan.path
        if len(path) == 1:
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
