"""What every battle-table game shares (R7, R8, R9, R11): entrants, outcomes, casualties.

A table's state is a plain JSON-able dict that the web layer stores and passes back; the
games never keep anything between calls. Every random draw goes through the ``RandomSource``
the caller passes and is written into the state (R11). The decisions are in docs/battles.md.
"""

from __future__ import annotations

import copy
from abc import ABC, abstractmethod
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from ..clans import is_clan
from ..errors import RulesInputError
from ..turn import REFORM_DELAY, DestroyedBy, RandomSource

State = dict[str, Any]
JUDGE = "judge"
STATE_VERSION = 1
HISTORY_LIMIT = 50
# What a person types at a table stays within a few digits; a bound keeps the state sane.
SMALL = 99
ARMY_CODE_MAX = 64


class GameError(RulesInputError):
    """An action, state or set-up a battle table refuses; ``str()`` is ``"<place>: <problem>"``."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """An army sitting down at the table, with its modifiers from ``battle_modifiers``."""

    army: str
    clan: str
    honor_bonus: int = 0
    hand_size: int = 5
    force_modifier: int = 0
    small_farms: int = 0
    chooses_seating: bool = False


@dataclass(frozen=True, slots=True)
class TableOutcome:
    kind: Literal["win", "truce"]
    winner: str | None
    losers: tuple[str, ...]
    reason: str


class BattleGame(Protocol):
    name: str
    title: str

    def open(
        self,
        *,
        entrants: Sequence[Entrant],
        options: Mapping[str, Any],
        rng: RandomSource,
        rng_label: str = "system",
    ) -> dict[str, Any]: ...

    def act(
        self,
        state: Mapping[str, Any],
        action: Mapping[str, Any],
        *,
        rng: RandomSource,
        rng_label: str = "system",
    ) -> dict[str, Any]: ...

    def reinforce(
        self,
        state: Mapping[str, Any],
        *,
        entrants: Sequence[Entrant],
        rng: RandomSource,
        rng_label: str = "system",
    ) -> dict[str, Any]: ...

    def outcome(self, state: Mapping[str, Any]) -> TableOutcome | None: ...

    def summary(self, state: Mapping[str, Any]) -> dict[str, Any]: ...

    def actions(self, state: Mapping[str, Any], *, by: str) -> list[str]: ...


@dataclass(frozen=True, slots=True)
class Casualty:
    army: str
    destroyed_by: DestroyedBy
    reform_from: int


def battle_casualties(
    *,
    armies: Sequence[str],
    outcome: TableOutcome,
    survivors: Collection[str],
    turn: int,
    clans: Mapping[str, str] | None = None,
) -> tuple[Casualty, ...]:
    """Which armies a finished battle destroys, and from which turn each may reform (R8, R9).

    ``armies`` are all the armies still at the table when it ended, losers included.
    ``clans`` maps armies to clans; without it an army's clan is read from its code
    (``"crab-1"``), the site's convention. The result follows the order of ``armies``.
    """
    if isinstance(armies, str) or isinstance(survivors, str):
        raise GameError("armies", "armies and survivors are lists of army codes")
    present = list(armies)
    if len(set(present)) != len(present):
        raise GameError("armies", "an army is listed twice")
    known = set(present)
    if type(turn) is not int or turn < 1:
        raise GameError("turn", f"the turn is a whole number from 1 on, not {turn!r}")
    for army in survivors:
        if army not in known:
            raise GameError("survivors", f'"{army}" was not at the table')
    losers = set(outcome.losers)
    for army in outcome.losers:
        if army not in known:
            raise GameError("outcome.losers", f'"{army}" was not at the table')
    for army in survivors:
        if army in losers:
            raise GameError("survivors", f"{army} lost the battle; a loser is destroyed (R8)")
    spared: set[str] = set()
    if outcome.kind == "win":
        winner = outcome.winner
        if winner is None or winner not in known:
            raise GameError("outcome.winner", f'the winner "{winner}" was not at the table')
        if winner in losers:
            raise GameError("outcome.winner", f"{winner} cannot both win and lose")
        winner_clan = _clan_of(winner, clans)
        # R7: armies of one clan never fight, so the winner cannot destroy his clan mates.
        spared = {
            a for a in present if winner_clan is not None and _clan_of(a, clans) == winner_clan
        }
        spared |= set(survivors) | {winner}
    elif outcome.kind == "truce":
        spared = known  # R8: a truce leaves every army that did not lose alive.
    else:
        raise GameError("outcome.kind", f'an outcome is "win" or "truce", not "{outcome.kind}"')
    result: list[Casualty] = []
    for army in present:
        how: DestroyedBy | None = None
        if army in losers:
            how = "loss"
        elif army not in spared:
            how = "winner"
        if how is not None:
            result.append(
                Casualty(army=army, destroyed_by=how, reform_from=turn + REFORM_DELAY[how])
            )
    return tuple(result)


def _clan_of(army: str, clans: Mapping[str, str] | None) -> str | None:
    if clans is not None and army in clans:
        return clans[army]
    prefix = army.rsplit("-", 1)[0]
    return prefix if is_clan(prefix) else None


# --- helpers shared by the games --------------------------------------------------------


def entrants_check(entrants: Sequence[Entrant], *, taken: Collection[str] = ()) -> list[Entrant]:
    """The entrants as a list, each checked; ``taken`` are the armies already at the table."""
    if not isinstance(entrants, Sequence):
        raise GameError("entrants", "a list of armies is expected")
    seen = set(taken)
    checked: list[Entrant] = []
    for index, entrant in enumerate(entrants):
        place = f"entrants[{index}]"
        if not isinstance(entrant, Entrant):
            raise GameError(place, "not an Entrant")
        army = entrant.army
        if not isinstance(army, str) or not army or len(army) > ARMY_CODE_MAX or army == JUDGE:
            raise GameError(f"{place}.army", f"{army!r} is not an army code")
        if army in seen:
            raise GameError(f"{place}.army", f"{army} is already at the table")
        seen.add(army)
        if not is_clan(entrant.clan):
            raise GameError(f"{place}.clan", f'unknown clan "{entrant.clan}"')
        for name, low in (
            ("honor_bonus", -SMALL),
            ("hand_size", 0),
            ("force_modifier", -SMALL),
            ("small_farms", 0),
        ):
            value = getattr(entrant, name)
            if type(value) is not int or not low <= value <= SMALL:
                raise GameError(f"{place}.{name}", f"a whole number from {low} to {SMALL}")
        if type(entrant.chooses_seating) is not bool:
            raise GameError(f"{place}.chooses_seating", "true or false")
        checked.append(entrant)
    if not checked:
        raise GameError("entrants", "no army sits down at the table")
    return checked


class Context:
    """The random source of one call and the label its draws are recorded with (R11)."""

    __slots__ = ("label", "rng")

    def __init__(self, rng: RandomSource, label: str) -> None:
        self.rng = rng
        self.label = label


Handler = Callable[[State, Mapping[str, Any], str, Context], None]


def action_apply(
    state: Mapping[str, Any],
    action: Mapping[str, Any],
    *,
    game: str,
    handlers: Mapping[str, Handler],
    fields: Mapping[str, Collection[str]],
    armies: Callable[[State], list[str]],
    refusal: Callable[[State, str, str], str | None],
    context: Context,
) -> State:
    """One table action, as every game takes it: read and check it, then apply it to a copy.

    The checks come in the same order in every game (the type, who acts, the fields, then
    whether the game allows it now), so a malformed action is refused for the same reason
    whatever the game.
    """
    s = state_copy(state, game)
    kind = action_type(action, handlers)
    by = read_by(action, armies(s))
    fields_check(action, kind, fields[kind])
    problem = refusal(s, kind, by)
    if problem is not None:
        raise GameError(kind, problem)
    s["actions"] += 1
    handlers[kind](s, action, by, context)
    return s


class TableGame(ABC):
    """What every game at a battle table does alike: take an action (``action_apply``) and
    take in reinforcements (R8) as far as checking and counting them. A game says the rest:
    its actions, who sits at its table, what it refuses and where newcomers sit."""

    name: str
    handlers: ClassVar[Mapping[str, Handler]]
    fields: ClassVar[Mapping[str, Collection[str]]]

    @abstractmethod
    def table_armies(self, s: State) -> list[str]:
        """The armies at the table, in seating order."""

    @abstractmethod
    def action_refusal(self, s: State, kind: str, by: str) -> str | None:
        """Why ``by`` may not take an action of ``kind`` now; None when he may."""

    @abstractmethod
    def newcomers_seat(self, s: State, newcomers: Sequence[Entrant], ctx: Context) -> None:
        """Seat checked reinforcements in ``s``, a copy already counting the call (R8)."""

    def act(
        self,
        state: Mapping[str, Any],
        action: Mapping[str, Any],
        *,
        rng: RandomSource,
        rng_label: str = "system",
    ) -> dict[str, Any]:
        return action_apply(
            state,
            action,
            game=self.name,
            handlers=self.handlers,
            fields=self.fields,
            armies=self.table_armies,
            refusal=self.action_refusal,
            context=Context(rng, rng_label),
        )

    def reinforce(
        self,
        state: Mapping[str, Any],
        *,
        entrants: Sequence[Entrant],
        rng: RandomSource,
        rng_label: str = "system",
    ) -> dict[str, Any]:
        s = state_copy(state, self.name)
        if s["stage"] == "over":
            raise GameError("reinforce", "the battle is over")
        checked = entrants_check(entrants, taken=self.table_armies(s))
        s["actions"] += 1
        self.newcomers_seat(s, checked, Context(rng, rng_label))
        return s


def state_check(state: Mapping[str, Any], game: str) -> Mapping[str, Any]:
    """``state`` if it is a state of a ``game`` table that this engine wrote."""
    if not isinstance(state, Mapping) or state.get("game") != game:
        raise GameError("state", f"not the state of a {game} table")
    if state.get("version") != STATE_VERSION:
        raise GameError("state", f"state version {state.get('version')!r} is not supported")
    return state


def state_copy(state: Mapping[str, Any], game: str) -> State:
    """A deep copy of a table state of ``game``; the input is never changed."""
    return copy.deepcopy(dict(state_check(state, game)))


def options_check(options: Mapping[str, Any], known: Collection[str]) -> None:
    if not isinstance(options, Mapping):
        raise GameError("options", "an object of options is expected")
    for key in options:
        if key not in known:
            raise GameError("options", f'unknown option "{key}"')


def action_type(action: Mapping[str, Any], known: Collection[str]) -> str:
    if not isinstance(action, Mapping):
        raise GameError("action", "an action is an object with a type")
    kind = action.get("type")
    if not isinstance(kind, str):
        raise GameError("type", "every action has a type")
    if kind not in known:
        raise GameError("type", f'unknown action "{kind}"')
    return kind


def fields_check(action: Mapping[str, Any], kind: str, allowed: Collection[str]) -> None:
    # A mistyped field must not be silently ignored (as for case files, docs/adjudication.md).
    for key in action:
        if key not in allowed and key not in ("type", "by"):
            raise GameError(kind, f'unknown field "{key}"')


def read_by(action: Mapping[str, Any], armies: Collection[str]) -> str:
    by = action.get("by")
    if not isinstance(by, str):
        raise GameError("by", "every action says who does it: an army code or judge")
    if by != JUDGE and by not in armies:
        raise GameError("by", f"{by} is not at this table")
    return by


def read_int(action: Mapping[str, Any], key: str, low: int, high: int) -> int:
    value = action.get(key)
    # JSON true/false are bools, which Python also counts as ints.
    if type(value) is not int:
        raise GameError(key, f"a whole number is expected, not {value!r}")
    if not low <= value <= high:
        raise GameError(key, f"{value} is not between {low} and {high}")
    return value


def read_bool(action: Mapping[str, Any], key: str) -> bool:
    value = action.get(key)
    if type(value) is not bool:
        raise GameError(key, f"true or false is expected, not {value!r}")
    return value


def read_choice(action: Mapping[str, Any], key: str, choices: Sequence[str]) -> str:
    value = action.get(key)
    if not isinstance(value, str) or value not in choices:
        raise GameError(key, f"one of {', '.join(choices)} is expected, not {value!r}")
    return value


def read_army(
    action: Mapping[str, Any], key: str, armies: Collection[str], *, default: str | None = None
) -> str:
    value = action.get(key, default)
    if value is None:
        raise GameError(key, "an army code is expected")
    if not isinstance(value, str) or value not in armies:
        raise GameError(key, f"{value!r} is not an army at this table")
    return value


def draw_one(
    rng: RandomSource, choices: Sequence[str], *, what: str, source: str
) -> tuple[str, State]:
    """One recorded random choice (R11) among ``choices``, asked in sorted order."""
    pool = sorted(choices)
    pick = rng.choice(pool)
    if pick not in pool:
        raise GameError("rng", f"the random source answered {pick!r}, not one of {pool}")
    return pick, {"what": what, "from": pool, "method": "random", "source": source, "result": pick}


def draw_order(
    rng: RandomSource, items: Sequence[str], *, what: str, source: str
) -> tuple[list[str], State]:
    """A recorded random order (R11) of ``items``: one ``choice`` per place but the last."""
    pool = sorted(items)
    remaining = list(pool)
    order: list[str] = []
    while len(remaining) > 1:
        pick = rng.choice(list(remaining))
        if pick not in remaining:
            raise GameError("rng", f"the random source answered {pick!r}, not one of {remaining}")
        order.append(pick)
        remaining.remove(pick)
    order.extend(remaining)
    return order, {
        "what": what,
        "from": pool,
        "method": "random",
        "source": source,
        "result": list(order),  # a copy: the caller goes on changing ``order``
    }


def given_draw(what: str, choices: Sequence[str], result: str | list[str], by: str) -> State:
    """A draw made away from the engine (at the table) and entered by ``by`` (R11)."""
    return {
        "what": what,
        "from": sorted(choices),
        "method": "given",
        "source": by,
        "result": list(result) if isinstance(result, list) else result,
    }


def log(s: State, kind: str, by: str, text: str) -> None:
    """One line for the judge's history, bounded so that the state stays small."""
    s["history"].append({"n": s["actions"], "type": kind, "by": by, "summary": text})
    del s["history"][:-HISTORY_LIMIT]


def outcome_set(s: State, kind: Literal["win", "truce"], winner: str | None, reason: str) -> None:
    s["outcome"] = {"kind": kind, "winner": winner, "losers": list(s["losers"]), "reason": reason}
    s["stage"] = "over"


def outcome_read(state: Mapping[str, Any]) -> TableOutcome | None:
    raw = state.get("outcome")
    if raw is None:
        return None
    return TableOutcome(
        kind=raw["kind"],
        winner=raw["winner"],
        losers=tuple(raw["losers"]),
        reason=raw["reason"],
    )


def sit_down(armies: Sequence[str]) -> str:
    """``a sits down``, ``a and b sit down``: the verb agrees with how many arrive."""
    return f"{names(armies)} {'sits' if len(armies) == 1 else 'sit'} down"


def names(armies: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``: for the English ``waiting_for`` texts."""
    if len(armies) <= 1:
        return "".join(armies)
    return ", ".join(armies[:-1]) + " and " + armies[-1]
