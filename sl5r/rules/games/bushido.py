"""Bushido (seed 002) as the battle game, when a tournament chooses it (R14, R8).

Sides are clans: all the armies of one clan at the table form one warband (R7: clan mates
never fight). Two sides play a game; further clans wait in a recorded random queue and the
winner of each game faces the next one. The decisions are in docs/battles.md.
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
    draw_order,
    entrants_check,
    log,
    names,
    options_check,
    outcome_read,
    outcome_set,
    read_army,
    read_bool,
    read_choice,
    read_int,
    state_check,
)

PHASES: Final = ("starting", "main", "end")
DEFAULT_TURNS: Final = 4
MAX_TURNS: Final = 10
MAX_MODELS: Final = 999

FIELDS: Final[Mapping[str, tuple[str, ...]]] = {
    "tactical_test": ("winner",),
    "models": ("army", "count"),
    "phase": ("phase",),
    "victory_points": ("army", "points"),
    "end_turn": (),
    "declare": ("kind",),
    "truce": ("army", "agree"),
    "judge_result": ("kind", "winner"),
}
# The actions of the two sides playing the current game (waiting sides only watch).
GAME_ACTIONS: Final = frozenset(
    {"tactical_test", "models", "phase", "victory_points", "end_turn", "declare"}
)


# --- reading the state -------------------------------------------------------------------


def _armies(s: Mapping[str, Any]) -> list[str]:
    return [p["army"] for p in s["players"]]


def _clan(s: Mapping[str, Any], army: str) -> str:
    return next(p["clan"] for p in s["players"] if p["army"] == army)  # type: ignore[no-any-return]


def _status(s: Mapping[str, Any], army: str) -> str:
    if army in s["losers"]:
        return "lost"
    clan = _clan(s, army)
    if clan in s["sides"]:
        return "fighting"
    return "waiting"


def _fighting(s: Mapping[str, Any]) -> list[str]:
    return [a for a in _armies(s) if _status(s, a) == "fighting"]


def _in_game(s: Mapping[str, Any]) -> list[str]:
    return [a for a in _armies(s) if a not in s["losers"]]


def _side_of(s: State, action: Mapping[str, Any], key: str) -> str:
    army = read_army(action, key, _armies(s))
    if _status(s, army) != "fighting":
        raise GameError(key, f"{army} is not in the game being played")
    return _clan(s, army)


def _game_reset(s: State, sides: Sequence[str]) -> None:
    """A fresh game between two sides (R14): turn 1, Starting phase, no points."""
    s["sides"] = list(sides)
    s["turn"] = 1
    s["phase"] = PHASES[0]
    s["tactical_test"] = None
    s["models"] = {side: None for side in sides}
    s["pass_tokens"] = None
    s["victory_points"] = {side: 0 for side in sides}
    s["turn_points"] = {side: 0 for side in sides}
    s["ending"] = None


# --- the Starting, Main and End phases (seed 002, R14) -------------------------------------


def _tactical_test(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    army = read_army(action, "winner", _fighting(s))
    s["tactical_test"] = army
    log(s, "tactical_test", by, f"{army} ({_clan(s, army)}) wins the tactical test")


def _pass_tokens(s: State) -> None:
    """Seed 002: the warband with fewer models gets the difference in pass tokens."""
    a, b = s["sides"]
    models = s["models"]
    if models[a] is None or models[b] is None:
        s["pass_tokens"] = None
        return
    count = abs(models[a] - models[b])
    side = None if count == 0 else (a if models[a] < models[b] else b)
    s["pass_tokens"] = {"side": side, "count": count}


def _models(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    side = _side_of(s, action, "army")
    count = read_int(action, "count", 0, MAX_MODELS)
    s["models"][side] = count
    if s["phase"] == PHASES[0]:
        _pass_tokens(s)
    log(s, "models", by, f"{side}: {count} models")
    if any(n == 0 for n in s["models"].values()):
        # Seed 002: a side with no models sends the game to the End phase, where victory
        # points are scored and the game ends.
        s["ending"] = "no_models"
        s["phase"] = PHASES[-1]
    else:
        s["ending"] = None


def _phase(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    later = PHASES[PHASES.index(s["phase"]) + 1 :]
    s["phase"] = read_choice(action, "phase", later)
    log(s, "phase", by, f"game {s['game_number']}, turn {s['turn']}: {s['phase']} phase")


def _victory_points(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    side = _side_of(s, action, "army")
    points = read_int(action, "points", -SMALL, SMALL)
    if points == 0:
        raise GameError("points", "a score of 0 changes nothing")
    if s["turn_points"][side] + points < 0:
        raise GameError("points", f"{side} scored {s['turn_points'][side]} this turn, not fewer")
    s["turn_points"][side] += points
    s["victory_points"][side] += points
    log(s, "victory_points", by, f"{side}: {points:+d} = {s['victory_points'][side]}")


def _end_turn(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    log(s, "end_turn", by, f"game {s['game_number']}: turn {s['turn']} ends")
    if s["ending"] is not None:
        _finish_game(s, "no_models")
    elif s["turn"] >= s["turns"]:
        _finish_game(s, "victory_points")
    else:
        s["turn"] += 1
        s["phase"] = PHASES[0]
        s["tactical_test"] = None
        s["pass_tokens"] = None
        s["turn_points"] = {side: 0 for side in s["sides"]}


def _declare(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    read_choice(action, "kind", ("all_scored",))
    log(s, "declare", by, "all victory points are scored")
    _finish_game(s, "victory_points")


def _finish_game(s: State, reason: str) -> None:
    """R14: more victory points wins; the loser's armies are destroyed as in R8."""
    a, b = s["sides"]
    points = s["victory_points"]
    winner = None if points[a] == points[b] else (a if points[a] > points[b] else b)
    s["results"].append(
        {
            "game": s["game_number"],
            "sides": [a, b],
            "victory_points": {a: points[a], b: points[b]},
            "winner": winner,
            "reason": reason,
        }
    )
    if winner is None:
        # A tie decides nothing: the battle ends in a truce, waiting sides included. They
        # are still in the province, so the next strategic turn holds a meeting again (R7).
        outcome_set(s, "truce", None, "tie")
        _close(s)
        log(s, "tie", "table", f"{a} and {b} tie at {points[a]}: the battle ends in a truce")
        return
    loser = b if winner == a else a
    s["losers"].extend(
        x for x in _armies(s) if _status(s, x) == "fighting" and _clan(s, x) == loser
    )
    log(s, "game", "table", f"{winner} beats {loser} {points[winner]}–{points[loser]} ({reason})")
    if s["queue"]:
        following = s["queue"].pop(0)
        s["game_number"] += 1
        _game_reset(s, [winner, following])
        log(s, "game", "table", f"game {s['game_number']}: {winner} faces {following}")
        return
    # The side wins; the army named is its first at the table (its clan mates survive, R7).
    army = next(a for a in _in_game(s) if _clan(s, a) == winner)
    outcome_set(s, "win", army, reason)
    _close(s)


def _close(s: State) -> None:
    s["phase"] = None


# --- truce and judges (R8) -----------------------------------------------------------------


def _truce(s: State, action: Mapping[str, Any], by: str, ctx: Context) -> None:
    army = read_army(action, "army", _armies(s), default=by if by != JUDGE else None)
    if by != JUDGE and army != by:
        raise GameError("truce", f"{by} may only do this for himself, not for {army}")
    if army in s["losers"]:
        raise GameError("army", f"{army} has lost and left the table")
    agree = read_bool(action, "agree")
    if agree and army not in s["truce"]:
        s["truce"].append(army)
    if not agree and army in s["truce"]:
        s["truce"].remove(army)
    log(s, "truce", by, f"{army} {'agrees to' if agree else 'refuses'} a truce")
    if all(a in s["truce"] for a in _in_game(s)):
        outcome_set(s, "truce", None, "truce")
        _close(s)


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
        if winner in s["losers"]:
            raise GameError("winner", f"{winner} has lost and left the table")
        outcome_set(s, "win", winner, "judge")
        text = f"the judge gives the battle to {winner}"
    _close(s)
    log(s, "judge_result", by, text)


def _refusal(s: Mapping[str, Any], kind: str, by: str) -> str | None:
    judge = by == JUDGE
    if kind == "judge_result":
        return None if judge else "only a judge gives a result"
    if s["stage"] == "over":
        return "the battle is over; only a judge may change its result"
    status = None if judge else _status(s, by)
    if status == "lost":
        return f"{by} has lost and left the table"
    if kind == "truce":
        return None
    if status == "waiting":
        return f"the {_clan(s, by)} side waits for its turn to fight"
    phase = s["phase"]
    if kind == "tactical_test" and phase != PHASES[0]:
        return "the tactical test is made in the Starting phase"
    if kind == "phase":
        if phase == PHASES[-1]:
            return "the End phase is the last one; end the turn"
        if phase == PHASES[0] and (
            s["tactical_test"] is None or any(n is None for n in s["models"].values())
        ):
            return "first enter the tactical test and the models of both sides"
    if kind in ("victory_points", "end_turn", "declare") and phase != PHASES[-1]:
        return "victory points are scored, and a game ends, in the End phase (seed 002)"
    return None


HANDLERS: Final[Mapping[str, Handler]] = {
    "tactical_test": _tactical_test,
    "models": _models,
    "phase": _phase,
    "victory_points": _victory_points,
    "end_turn": _end_turn,
    "declare": _declare,
    "truce": _truce,
    "judge_result": _judge_result,
}


# --- the game ------------------------------------------------------------------------------


class BushidoGame(TableGame):
    """Bushido at a battle table (R14); every method is pure."""

    name: str = "bushido"
    title: str = "Bushido"
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
        options_check(options, ("turns",))
        turns = DEFAULT_TURNS
        if "turns" in options:
            turns = read_int(options, "turns", 1, MAX_TURNS)
        clans = list(dict.fromkeys(e.clan for e in checked))
        if len(clans) < 2:
            raise GameError("entrants", "a battle needs armies of two clans or more (R7)")
        s: State = {
            "game": self.name,
            "version": STATE_VERSION,
            "stage": "playing",
            "turns": turns,
            "players": [{"army": e.army, "clan": e.clan} for e in checked],
            "queue": [],
            "game_number": 1,
            "results": [],
            "truce": [],
            "losers": [],
            "outcome": None,
            "draws": [],
            "history": [],
            "actions": 0,
        }
        if len(clans) > 2:
            clans, record = draw_order(rng, clans, what="ladder", source=rng_label)
            s["draws"].append(record)
        _game_reset(s, clans[:2])
        s["queue"] = clans[2:]
        log(s, "open", "table", f"{clans[0]} faces {clans[1]}; waiting: {names(clans[2:])}")
        return s

    def table_armies(self, s: State) -> list[str]:
        return _armies(s)

    def action_refusal(self, s: State, kind: str, by: str) -> str | None:
        return _refusal(s, kind, by)

    def newcomers_seat(self, s: State, newcomers: Sequence[Entrant], ctx: Context) -> None:
        s["players"].extend({"army": e.army, "clan": e.clan} for e in newcomers)
        # A clan already fighting or waiting joins its own side; a new clan (or one whose
        # side has lost) queues behind the waiting sides, in a recorded random order.
        present = set(s["sides"]) | set(s["queue"])
        new = list(dict.fromkeys(e.clan for e in newcomers if e.clan not in present))
        if len(new) > 1:
            new, record = draw_order(ctx.rng, new, what="ladder", source=ctx.label)
            s["draws"].append(record)
        s["queue"].extend(new)
        log(s, "reinforce", "table", f"{names([e.army for e in newcomers])} arrive (R8)")

    def outcome(self, state: Mapping[str, Any]) -> TableOutcome | None:
        return outcome_read(state_check(state, self.name))

    def summary(self, state: Mapping[str, Any]) -> dict[str, Any]:
        s = state_check(state, self.name)
        outcome = s["outcome"]
        winner_clan = _clan(s, outcome["winner"]) if outcome and outcome["winner"] else None
        players = []
        for p in s["players"]:
            status = _status(s, p["army"])
            if p["clan"] == winner_clan and status != "lost":
                status = "winner"
            players.append(
                {
                    "army": p["army"],
                    "clan": p["clan"],
                    "victory_points": s["victory_points"].get(p["clan"], 0)
                    if status != "lost"
                    else 0,
                    "status": status,
                }
            )
        return {
            "game": self.name,
            "stage": s["stage"],
            "current": None,
            "phase": s["phase"],
            "turn": s["turn"],
            "turns": s["turns"],
            "game_number": s["game_number"],
            "sides": list(s["sides"]),
            "queue": list(s["queue"]),
            "pass_tokens": dict(s["pass_tokens"]) if s["pass_tokens"] else None,
            "players": players,
            "frozen": False,
            "waiting_for": _waiting_for(s),
            "outcome": dict(outcome) if outcome else None,
        }

    def actions(self, state: Mapping[str, Any], *, by: str) -> list[str]:
        s = state_check(state, self.name)
        if by != JUDGE and by not in _armies(s):
            return []
        return [kind for kind in HANDLERS if _refusal(s, kind, by) is None]


def _waiting_for(s: Mapping[str, Any]) -> str:
    outcome = s["outcome"]
    if outcome is not None:
        if outcome["kind"] == "truce":
            return "nothing: the battle ended in a truce"
        return f"nothing: {outcome['winner']} won the battle ({outcome['reason']})"
    a, b = s["sides"]
    where = f"game {s['game_number']} ({a} against {b}), turn {s['turn']} of {s['turns']}"
    phase = s["phase"]
    if phase == "starting":
        needs = []
        if s["tactical_test"] is None:
            needs.append("the tactical test winner")
        missing = [side for side in (a, b) if s["models"][side] is None]
        if missing:
            needs.append(f"the models of {names(missing)}")
        if needs:
            return f"{where}, Starting phase: enter {' and '.join(needs)}"
        tokens = s["pass_tokens"]
        given = (
            f"{tokens['side']} gets {tokens['count']} pass tokens"
            if tokens and tokens["side"]
            else "no pass tokens"
        )
        return f"{where}, Starting phase ({given}): move on to the Main phase"
    if phase == "main":
        return f"{where}, Main phase: alternate activations, then move on to the End phase"
    last = s["ending"] is not None or s["turn"] >= s["turns"]
    then = "end the game" if last else "end the turn"
    return f"{where}, End phase: enter the victory points scored, then {then}"
