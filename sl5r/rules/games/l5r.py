"""The Legend of the Five Rings card game as a battle-table tracker (R7, R8, R10, R13).

The table plays with real cards; this tracks what the referee must know: set-up, seating,
whose turn and phase it is, family honor, provinces, rings, reinforcements, and the end.
The decisions where rules.md leaves room are in docs/battles.md.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..turn import RandomSource
from .base import (
    JUDGE,
    SMALL,
    STATE_VERSION,
    Context,
    Entrant,
    GameError,
    Handler,
    State,
    TableGame,
    TableOutcome,
    draw_one,
    draw_order,
    entrants_check,
    given_draw,
    log,
    names,
    options_check,
    outcome_read,
    outcome_set,
    read_army,
    read_bool,
    read_choice,
    read_int,
    sit_down,
    state_check,
)

PHASES: Final = ("straighten", "events", "action", "attack", "dynasty", "end")
ELEMENTS: Final = ("air", "earth", "fire", "water", "void")
PROVINCES: Final = 4
HONOR_FLOOR: Final = -19  # R13: Legacy Sensei never take family honor below −19
DISHONOR: Final = -20  # R13: at or below at the end of one's own turn loses
HONOR_VICTORY: Final = 40  # R13: at or above at the start of one's turn wins
PRODUCTION_TURNS: Final = 2  # R8

# Player statuses kept in the state; "winner" is shown by summary() only.
SETUP, PLAYING, NEWCOMER, LOST = "setup", "playing", "newcomer", "lost"

FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "stronghold": ("army", "honor", "province_strength", "gold", "sensei"),
    "seating": ("order",),
    "begin": ("first",),
    "phase": ("phase",),
    "end_turn": (),
    "honor": ("army", "delta"),
    "province": ("army", "delta"),
    "ring": ("army", "element"),
    "declare": ("army", "kind"),
    "truce": ("army", "agree"),
    "production_done": (),
    "judge_result": ("kind", "winner"),
}


# --- reading the state -------------------------------------------------------------------


def _player(s: State, army: str) -> State:
    for p in s["players"]:
        if p["army"] == army:
            return p  # type: ignore[no-any-return]
    raise GameError("army", f"{army} is not at this table")


def _status(s: State, army: str) -> str:
    return _player(s, army)["status"]  # type: ignore[no-any-return]


def _armies(s: State) -> list[str]:
    return [p["army"] for p in s["players"]]


def _in_game(s: State) -> list[State]:
    """The players who have not lost, newcomers included (R8)."""
    return [p for p in s["players"] if p["status"] != LOST]


def _arriving(s: State) -> list[str]:
    """Newcomers not seated yet: they wait for the current player to end his turn (R8)."""
    seated = s["seating"] or []
    return [p["army"] for p in s["players"] if p["status"] == NEWCOMER and p["army"] not in seated]


def _producer(s: State) -> str:
    """The newcomer playing a production turn; only called in the production stage."""
    production = s["production"]
    return production["order"][production["index"]]  # type: ignore[no-any-return]


def _missing_strongholds(s: State, status: str) -> list[str]:
    return [p["army"] for p in s["players"] if p["status"] == status and p["honor"] is None]


# --- the set-up (R7, R10, R13) -----------------------------------------------------------


def _new_player(entrant: Entrant, status: str) -> State:
    return {
        "army": entrant.army,
        "clan": entrant.clan,
        "honor_bonus": entrant.honor_bonus,
        "hand_size": entrant.hand_size,
        "force_modifier": entrant.force_modifier,
        "small_farms": entrant.small_farms,
        "chooses_seating": entrant.chooses_seating,
        "stronghold": None,
        "honor": None,
        "province_strength": None,
        "gold": None,
        "provinces": PROVINCES,
        "rings": [],
        "bamboo_harvesters": False,
        "status": status,
        "lost_reason": None,
    }


def _seating_prepare(s: State, ctx: Context) -> None:
    """Who chooses the seating (R10), or a random seating (R7), for the players in set-up."""
    s["seating"] = None
    s["seating_by"] = None
    choosers = [p["army"] for p in s["players"] if p["chooses_seating"]]
    if choosers:
        if s["chooser"] not in choosers:
            if len(choosers) == 1:
                s["chooser"] = choosers[0]
            else:
                # Two Scorpions cannot both choose: a recorded draw says which one does.
                chooser, record = draw_one(
                    ctx.rng, choosers, what="seating_chooser", source=ctx.label
                )
                s["draws"].append(record)
                s["chooser"] = chooser
        return
    s["chooser"] = None
    order, record = draw_order(ctx.rng, _armies(s), what="seating", source=ctx.label)
    s["draws"].append(record)
    s["seating"] = order
    s["seating_by"] = "random"


def _stronghold(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    army = _self_or_judge(s, action, by, "stronghold")
    p = _player(s, army)
    if s["stage"] != SETUP and p["status"] != NEWCOMER:
        raise GameError("stronghold", f"{army} is not a newcomer; his stronghold is set")
    honor = read_int(action, "honor", -SMALL, SMALL)
    strength = read_int(action, "province_strength", 0, SMALL)
    gold = read_int(action, "gold", 0, SMALL)
    raw_sensei = action.get("sensei")
    sensei = {"honor": 0, "province_strength": 0, "gold": 0}
    if raw_sensei is not None:
        if not isinstance(raw_sensei, Mapping):
            raise GameError("sensei", "an object with honor, province_strength and gold")
        for key in raw_sensei:
            if key not in sensei:
                raise GameError("sensei", f'unknown field "{key}"')
        for key in sensei:
            if key in raw_sensei:
                sensei[key] = read_int(raw_sensei, key, -SMALL, SMALL)
    p["stronghold"] = {
        "honor": honor,
        "province_strength": strength,
        "gold": gold,
        "sensei": dict(sensei) if raw_sensei is not None else None,
    }
    # R13: the Sensei never take strength or gold below 0, nor honor below −19; the Crane
    # bonus (R10) is added after the clamp: it is the battle's bonus, not the Sensei's.
    p["province_strength"] = max(0, strength + sensei["province_strength"])
    p["gold"] = max(0, gold + sensei["gold"])
    p["honor"] = max(HONOR_FLOOR, honor + sensei["honor"]) + p["honor_bonus"]
    log(
        s,
        "stronghold",
        by,
        f"{army}: family honor {p['honor']}, province strength {p['province_strength']}, "
        f"gold {p['gold']}",
    )


def _seating(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    order = action.get("order")
    armies = _armies(s)
    if (
        not isinstance(order, list)
        or not all(isinstance(a, str) for a in order)
        or sorted(order) != sorted(armies)
    ):
        raise GameError("order", f"the seating lists every army at the table once: {armies}")
    s["seating"] = list(order)
    if by == JUDGE:
        s["seating_by"] = JUDGE
        s["draws"].append(given_draw("seating", armies, list(order), by))
    else:
        s["seating_by"] = "scorpion"
    log(s, "seating", by, f"seating: {', '.join(order)}")


def _begin(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    players = s["players"]
    top = max(p["honor"] for p in players)
    tied = [p["army"] for p in players if p["honor"] == top]
    if "first" in action:
        if by != JUDGE:
            raise GameError("first", "only a judge enters a tie-break drawn at the table")
        first = read_choice(action, "first", tied)
        if len(tied) > 1:
            s["draws"].append(given_draw("starting_player", tied, first, by))
    elif len(tied) == 1:
        first = tied[0]
    else:
        first, record = draw_one(ctx.rng, tied, what="starting_player", source=ctx.label)
        s["draws"].append(record)
    s["starting_player"] = first
    for p in players:
        p["status"] = PLAYING
        p["bamboo_harvesters"] = p["army"] != first  # R13 step: all but the starting player
    s["stage"] = PLAYING
    s["round"] = 1
    log(s, "begin", by, f"the battle begins; {first} starts with {top} family honor")
    _start_turn(s, first)


# --- turns (R8, R13) ---------------------------------------------------------------------


def _start_turn(s: State, army: str) -> None:
    s["current"] = army
    s["phase"] = PHASES[0]
    s["turn"] += 1
    if army in s["played"]:
        s["round"] += 1
        s["played"] = [army]
    else:
        s["played"].append(army)
    honor = _player(s, army)["honor"]
    if honor >= HONOR_VICTORY:
        _win(s, army, "honor", f"{army} starts his turn with {honor} family honor")


def _next_playing(s: State, after: str) -> str | None:
    """To the left: the next seat after ``after`` of a player still playing (R13)."""
    seating = s["seating"]
    start = seating.index(after)
    for step in range(1, len(seating) + 1):
        army = seating[(start + step) % len(seating)]
        if _player(s, army)["status"] == PLAYING:
            return army  # type: ignore[no-any-return]
    return None


def _pass_turn(s: State, ended: str, ctx: Context) -> None:
    """``ended``'s turn is over: seat waiting newcomers (R8) or go to the next player."""
    if s["outcome"] is not None:
        return
    arriving = _arriving(s)
    if arriving:
        order = _seat_newcomers(s, after=ended, newcomers=arriving, ctx=ctx)
        s["stage"] = "production"
        s["production"] = {"order": order, "index": 0, "turn": 1, "after": ended}
        s["current"] = order[0]
        s["phase"] = None
        log(s, "freeze", "table", "the game freezes: newcomers play their production turns (R8)")
        return
    following = _next_playing(s, ended)
    if following is None:  # pragma: no cover - _check_standing ends such a battle first
        raise GameError("state", "nobody is left to play")
    _start_turn(s, following)


def _seat_newcomers(s: State, *, after: str, newcomers: Sequence[str], ctx: Context) -> list[str]:
    """R8: newcomers sit at random between ``after`` and the player who was next."""
    order = list(newcomers)
    if len(order) > 1:
        order, record = draw_order(ctx.rng, order, what="newcomer_seating", source=ctx.label)
        s["draws"].append(record)
    seating = s["seating"]
    at = seating.index(after) + 1
    seating[at:at] = order
    log(s, "seating", "table", f"{sit_down(order)} after {after}")
    return order


def _end_turn(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    ended = s["current"]
    p = _player(s, ended)
    log(s, "end_turn", by, f"{ended} ends his turn in the {s['phase'].capitalize()} phase")
    if p["honor"] <= DISHONOR:
        _lose(s, ended, "dishonor", f"{ended} ends his turn at {p['honor']} family honor")
    if s["outcome"] is None:
        _pass_turn(s, ended, ctx)


def _phase(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    later = PHASES[PHASES.index(s["phase"]) + 1 :]
    phase = read_choice(action, "phase", later)
    s["phase"] = phase
    log(s, "phase", by, f"{s['current']}: {phase.capitalize()} phase")


# --- production turns (R8) ---------------------------------------------------------------


def _production_done(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    production = s["production"]
    army = production["order"][production["index"]]
    log(s, "production_done", by, f"{army} ends production turn {production['turn']}")
    if production["turn"] < PRODUCTION_TURNS:
        production["turn"] += 1
    else:
        production["index"] += 1
        production["turn"] = 1
    _production_settle(s)


def _production_settle(s: State) -> None:
    """Skip newcomers who lost; after the last production turn the game unfreezes (R8)."""
    production = s["production"]
    order = production["order"]
    while production["index"] < len(order) and _status(s, order[production["index"]]) == LOST:
        production["index"] += 1
        production["turn"] = 1
    if production["index"] < len(order):
        s["current"] = order[production["index"]]
        return
    for army in order:
        p = _player(s, army)
        if p["status"] == NEWCOMER:
            p["status"] = PLAYING
    s["stage"] = PLAYING
    s["frozen"] = False
    s["production"] = None
    first = next((a for a in order if _status(s, a) == PLAYING), None)
    if first is None:
        first = _next_playing(s, production["after"])
    if first is None:  # pragma: no cover - _check_standing ends such a battle first
        raise GameError("state", "nobody is left to play")
    log(s, "unfreeze", "table", "production is over; the game goes on")
    _start_turn(s, first)


# --- family honor, provinces, rings (R13) --------------------------------------------------


def _ready_player(s: State, action: Mapping[str, Any]) -> State:
    army = read_army(action, "army", _armies(s))
    p = _player(s, army)
    if p["status"] == LOST:
        raise GameError("army", f"{army} has lost and left the table")
    if p["honor"] is None:
        raise GameError("army", f"{army} has not entered his stronghold yet")
    return p


def _honor(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    p = _ready_player(s, action)
    delta = read_int(action, "delta", -SMALL, SMALL)
    if delta == 0:
        raise GameError("delta", "a change of family honor is not 0")
    p["honor"] += delta
    log(s, "honor", by, f"{p['army']}: family honor {delta:+d} = {p['honor']}")


def _province(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    p = _ready_player(s, action)
    delta = action.get("delta")
    if type(delta) is not int or delta not in (-1, 1):
        raise GameError("delta", f"a province is lost (-1) or regained (+1), not {delta!r}")
    army = p["army"]
    if delta > 0 and p["provinces"] >= PROVINCES:
        raise GameError("delta", f"{army} already has his {PROVINCES} provinces")
    p["provinces"] += delta
    log(s, "province", by, f"{army}: {p['provinces']} provinces left")
    if p["provinces"] == 0:
        _lose(s, army, "no_provinces", f"{army} has no provinces left")
        if s["outcome"] is None and s["current"] == army:
            if s["stage"] == PLAYING:
                _pass_turn(s, army, ctx)
            else:
                _production_settle(s)


def _ring(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    p = _ready_player(s, action)
    element = read_choice(action, "element", ELEMENTS)
    army = p["army"]
    if element in p["rings"]:
        raise GameError("element", f"{army} has already claimed the {element} ring")
    p["rings"].append(element)
    log(s, "ring", by, f"{army} claims the {element} ring ({len(p['rings'])} of 5)")
    if len(p["rings"]) == len(ELEMENTS):
        _win(s, army, "enlightenment", f"{army} holds the five rings")


def _declare(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    read_choice(action, "kind", ("enlightenment",))
    army = _self_or_judge(s, action, by, "declare", default=False)
    p = _player(s, army)
    if p["status"] == LOST:
        raise GameError("army", f"{army} has lost and left the table")
    _win(s, army, "enlightenment", f"{by} declares {army}'s enlightenment")


# --- the end (R8, R13) ---------------------------------------------------------------------


def _lose(s: State, army: str, reason: str, text: str) -> None:
    p = _player(s, army)
    p["status"] = LOST
    p["lost_reason"] = reason
    s["losers"].append(army)
    if army in s["truce"]:
        s["truce"].remove(army)
    log(s, "lose", "table", f"{text}: he loses (R8)")
    _check_standing(s)


def _check_standing(s: State) -> None:
    """R13: the last one standing wins; R7: so do clan mates left alone at the table."""
    left = _in_game(s)
    if len({p["clan"] for p in left}) != 1:
        return
    if len(left) == 1:
        _win(s, left[0]["army"], "last_standing", f"{left[0]['army']} is the last one standing")
        return
    # Clan mates never fight (R7): the one with most family honor is named the winner, ties
    # to the earliest seat, so that the name never depends on a draw.
    seating = s["seating"] or []
    armies = _armies(s)

    def rank(p: State) -> tuple[int, int]:
        honor = p["honor"] if p["honor"] is not None else -(10**6)
        seat = seating.index(p["army"]) if p["army"] in seating else len(seating)
        return (-honor, seat * len(armies) + armies.index(p["army"]))

    winner = min(left, key=rank)["army"]
    _win(s, winner, "last_standing", f"only the {left[0]['clan']} clan is left")


def _win(s: State, army: str, reason: str, text: str) -> None:
    outcome_set(s, "win", army, reason)
    _close(s)
    log(s, "win", "table", f"{text}: {army} wins ({reason})")


def _close(s: State) -> None:
    s["current"] = None
    s["phase"] = None
    s["frozen"] = False
    s["production"] = None


def _truce(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    army = _self_or_judge(s, action, by, "truce")
    if _player(s, army)["status"] == LOST:
        raise GameError("army", f"{army} has lost and left the table")
    agree = read_bool(action, "agree")
    if agree and army not in s["truce"]:
        s["truce"].append(army)
    if not agree and army in s["truce"]:
        s["truce"].remove(army)
    log(s, "truce", by, f"{army} {'agrees to' if agree else 'refuses'} a truce")
    if all(p["army"] in s["truce"] for p in _in_game(s)):
        outcome_set(s, "truce", None, "truce")
        _close(s)
        log(s, "truce", "table", "every player agrees: the battle ends in a truce (R8)")


def _judge_result(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    kind = read_choice(action, "kind", ("win", "truce"))
    winner = action.get("winner")
    if kind == "truce":
        if winner is not None:
            raise GameError("winner", "a truce has no winner")
        outcome_set(s, "truce", None, "judge")
        text = "the judge ends the battle in a truce"
    else:
        winner = read_army(action, "winner", _armies(s))
        if _status(s, winner) == LOST:
            raise GameError("winner", f"{winner} has lost and left the table")
        outcome_set(s, "win", winner, "judge")
        text = f"the judge gives the battle to {winner}"
    _close(s)
    log(s, "judge_result", by, text)


# --- who may do what -----------------------------------------------------------------------


def _self_or_judge(
    s: State, action: Mapping[str, Any], by: str, kind: str, *, default: bool = True
) -> str:
    """The army an action is for: a player acts for himself; a judge names the army."""
    army = read_army(action, "army", _armies(s), default=by if by != JUDGE and default else None)
    if by != JUDGE and army != by:
        raise GameError(kind, f"{by} may only do this for himself, not for {army}")
    return army


def _refusal(s: State, kind: str, by: str) -> str | None:
    """Why ``by`` may not send an action of ``kind`` now, or None."""
    judge = by == JUDGE
    stage = s["stage"]
    if kind == "judge_result":
        return None if judge else "only a judge gives a result"
    if stage == "over":
        return "the battle is over; only a judge may change its result"
    me = None if judge else _player(s, by)
    if me is not None and me["status"] == LOST:
        return f"{by} has lost and left the table"
    if kind == "truce":
        return None
    if kind in ("stronghold", "seating", "begin"):
        return _refusal_setup(s, kind, by, me)
    if stage == SETUP:
        return "the battle has not begun"
    if kind in ("honor", "province", "ring", "declare"):
        return None
    if kind == "production_done":
        if stage != "production":
            return "nobody is playing a production turn"
        producer = _producer(s)
        if not judge and by != producer:
            return f"it is {producer}'s production turn"
        if _get(s, producer)["honor"] is None:
            return f"{producer} must enter a stronghold first"
        return None
    if stage == "production":
        return f"the game is frozen: {_producer(s)} is playing a production turn (R8)"
    current = s["current"]
    if not judge and by != current:
        return f"it is {current}'s turn"
    if kind == "phase" and s["phase"] == PHASES[-1]:
        return "the End phase is the last one; end the turn"
    return None


def _refusal_setup(s: State, kind: str, by: str, me: State | None) -> str | None:
    if kind == "stronghold":
        if s["stage"] == SETUP:
            return None
        if me is None:
            newcomers = any(p["status"] == NEWCOMER for p in s["players"])
            return None if newcomers else "only newcomers enter a stronghold once it has begun"
        if me["status"] == NEWCOMER:
            return None
        return "only newcomers enter a stronghold once the battle has begun"
    if s["stage"] != SETUP:
        return "the battle has already begun"
    if kind == "seating":
        chooser = s["chooser"]
        if me is None or by == chooser:
            return None
        if chooser is None:
            return "the seating is drawn at random (R7); only a judge may change it"
        return f"{chooser} chooses the seating (R10)"
    missing = _missing_strongholds(s, SETUP)
    if missing:
        return f"{names(missing)} must enter a stronghold first"
    if s["seating"] is None:
        return f"{s['chooser']} must choose the seating first (R10)"
    return None


HANDLERS: Final[Mapping[str, Handler]] = {
    "stronghold": _stronghold,
    "seating": _seating,
    "begin": _begin,
    "phase": _phase,
    "end_turn": _end_turn,
    "honor": _honor,
    "province": _province,
    "ring": _ring,
    "declare": _declare,
    "truce": _truce,
    "production_done": _production_done,
    "judge_result": _judge_result,
}


# --- the game ------------------------------------------------------------------------------


class L5RGame(TableGame):
    """The L5R card game at a battle table (R13); every method is pure."""

    name: str = "l5r"
    title: str = "Legend of the Five Rings"
    handlers = HANDLERS
    fields = FIELDS

    def open(
        self,
        *,
        entrants: Sequence[Entrant],
        options: Mapping[str, Any],
        rng: RandomSource,
        rng_label: str = "system",
    ) -> dict[str, Any]:
        checked = entrants_check(entrants)
        options_check(options, ())
        if len({e.clan for e in checked}) < 2:
            raise GameError("entrants", "a battle needs armies of two clans or more (R7)")
        s: State = {
            "game": self.name,
            "version": STATE_VERSION,
            "stage": SETUP,
            "players": [_new_player(e, SETUP) for e in checked],
            "seating": None,
            "seating_by": None,
            "chooser": None,
            "starting_player": None,
            "current": None,
            "phase": None,
            "round": 0,
            "turn": 0,
            "played": [],
            "frozen": False,
            "production": None,
            "truce": [],
            "losers": [],
            "outcome": None,
            "draws": [],
            "history": [],
            "actions": 0,
        }
        _seating_prepare(s, Context(rng, rng_label))
        log(s, "open", "table", f"{sit_down(_armies(s))} at the table")
        return s

    def table_armies(self, s: State) -> list[str]:
        return _armies(s)

    def action_refusal(self, s: State, kind: str, by: str) -> str | None:
        return _refusal(s, kind, by)

    def newcomers_seat(self, s: State, newcomers: Sequence[Entrant], ctx: Context) -> None:
        arrived = names([e.army for e in newcomers])
        if s["stage"] == SETUP:
            # Nobody has played yet: the newcomers are ordinary players and the seating is
            # drawn (or chosen) again for everyone.
            s["players"].extend(_new_player(e, SETUP) for e in newcomers)
            _seating_prepare(s, ctx)
            log(s, "reinforce", "table", f"{arrived} join the battle before it begins")
            return
        for e in newcomers:
            newcomer = _new_player(e, NEWCOMER)
            newcomer["bamboo_harvesters"] = True  # R13: a newcomer is never the starting player
            s["players"].append(newcomer)
        if s["stage"] == "production":
            # The game is already frozen: they sit after the newcomers of this freeze, still
            # between the player who ended his turn and the one who was next (R8).
            production = s["production"]
            codes = [e.army for e in newcomers]
            order = _seat_newcomers(s, after=production["order"][-1], newcomers=codes, ctx=ctx)
            production["order"].extend(order)
            log(s, "reinforce", "table", f"{arrived} arrive during production (R8)")
            return
        s["frozen"] = True
        log(
            s,
            "reinforce",
            "table",
            f"{arrived} arrive; {s['current']} finishes his turn, then the game freezes (R8)",
        )

    def outcome(self, state: Mapping[str, Any]) -> TableOutcome | None:
        return outcome_read(state_check(state, self.name))

    def summary(self, state: Mapping[str, Any]) -> dict[str, Any]:
        s = state_check(state, self.name)
        outcome = s["outcome"]
        winner = outcome["winner"] if outcome else None
        seating = s["seating"] or []
        ordered = sorted(
            s["players"],
            key=lambda p: seating.index(p["army"]) if p["army"] in seating else len(seating),
        )
        players = [
            {
                "army": p["army"],
                "clan": p["clan"],
                "honor": p["honor"],
                "provinces": p["provinces"],
                "rings": list(p["rings"]),
                "status": "winner" if p["army"] == winner else p["status"],
            }
            for p in ordered
        ]
        return {
            "game": self.name,
            "stage": s["stage"],
            "current": s["current"],
            "phase": s["phase"],
            "round": s["round"],
            "turn": s["turn"],
            "players": players,
            "frozen": s["frozen"],
            "waiting_for": _waiting_for(s),
            "outcome": dict(outcome) if outcome else None,
        }

    def actions(self, state: Mapping[str, Any], *, by: str) -> list[str]:
        s = dict(state_check(state, self.name))
        if by != JUDGE and by not in _armies(s):
            return []
        return [kind for kind in HANDLERS if _refusal(s, kind, by) is None]


def _waiting_for(s: Mapping[str, Any]) -> str:
    stage = s["stage"]
    outcome = s["outcome"]
    if outcome is not None:
        if outcome["kind"] == "truce":
            return "nothing: the battle ended in a truce"
        return f"nothing: {outcome['winner']} won the battle ({outcome['reason']})"
    if stage == SETUP:
        missing = [p["army"] for p in s["players"] if p["honor"] is None]
        needs: list[str] = []
        if missing:
            needs.append(f"{names(missing)} to enter a stronghold")
        if s["seating"] is None:
            needs.append(f"{s['chooser']} to choose the seating")
        if needs:
            return " and ".join(needs)
        return "the table to begin the battle"
    if stage == "production":
        production = s["production"]
        army = production["order"][production["index"]]
        text = (
            f"{army} to play production turn {production['turn']} of {PRODUCTION_TURNS}: he may "
            "only bring cards into play (Events are discarded without effect, no actions, no "
            "attacks)"
        )
        missing = [a for a in production["order"] if _get(s, a)["honor"] is None]
        if missing:
            text += f"; {names(missing)} must enter a stronghold"
        return text
    current = s["current"]
    text = f"{current} to play his turn ({s['phase'].capitalize()} phase)"
    if s["frozen"]:
        arriving = [
            p["army"]
            for p in s["players"]
            if p["status"] == NEWCOMER and p["army"] not in (s["seating"] or [])
        ]
        text += f"; then the game freezes and {sit_down(arriving)} for their production turns (R8)"
    return text


def _get(s: Mapping[str, Any], army: str) -> Mapping[str, Any]:
    return next(p for p in s["players"] if p["army"] == army)
