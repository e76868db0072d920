"""Shared helpers for the battle-table tests: a scripted random source and short-hands."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sl5r.rules.games import BushidoGame, Entrant, L5RGame

L5R = L5RGame()
BUSHIDO = BushidoGame()


class Scripted:
    """A random source that answers from a script, then with the first choice it is offered.

    It records every question, so a test can say what was drawn from.
    """

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.asked: list[tuple[str, ...]] = []

    def choice(self, seq: Sequence[str], /) -> str:
        options = tuple(seq)
        self.asked.append(options)
        if self.answers:
            answer = self.answers.pop(0)
            assert answer in options, f"{answer} is not among {options}"
            return answer
        return options[0]


def entrant(army: str, **kwargs: Any) -> Entrant:
    """An entrant whose clan is the prefix of its code, as on the site ("crab-1")."""
    return Entrant(army=army, clan=army.rsplit("-", 1)[0], **kwargs)


def l5r_open(*armies: str | Entrant, rng: Scripted | None = None) -> dict[str, Any]:
    """A table in set-up; with the default source the seating is the sorted armies."""
    entrants = [a if isinstance(a, Entrant) else entrant(a) for a in armies]
    return L5R.open(entrants=entrants, options={}, rng=rng or Scripted(), rng_label="test")


def act(game: Any, state: dict[str, Any], rng: Scripted | None = None, **action: Any) -> Any:
    return game.act(state, action, rng=rng or Scripted(), rng_label="test")


def l5r(state: dict[str, Any], rng: Scripted | None = None, **action: Any) -> dict[str, Any]:
    """One L5R action; ``l5r(s, type="honor", by="judge", army="crab-1", delta=1)``."""
    result: dict[str, Any] = act(L5R, state, rng, **action)
    return result


def bushido(state: dict[str, Any], rng: Scripted | None = None, **action: Any) -> dict[str, Any]:
    result: dict[str, Any] = act(BUSHIDO, state, rng, **action)
    return result


def stronghold(state: dict[str, Any], army: str, honor: int = 5, **extra: Any) -> dict[str, Any]:
    fields: dict[str, Any] = {"province_strength": 6, "gold": 5, **extra}
    return l5r(state, type="stronghold", by=army, honor=honor, **fields)


def l5r_started(
    honors: dict[str, int], *entrants: Entrant, rng: Scripted | None = None
) -> dict[str, Any]:
    """A table past set-up: armies (sorted seating) with the given stronghold honor."""
    armies = [entrant(a) for a in honors if a not in {e.army for e in entrants}]
    s = l5r_open(*armies, *entrants)
    for army, honor in honors.items():
        s = stronghold(s, army, honor)
    return l5r(s, rng, type="begin", by="judge")


def player(state: dict[str, Any], army: str) -> dict[str, Any]:
    found: dict[str, Any] = next(p for p in state["players"] if p["army"] == army)
    return found


def end_turn(state: dict[str, Any], rng: Scripted | None = None) -> dict[str, Any]:
    return l5r(state, rng, type="end_turn", by=state["current"])


def honor(state: dict[str, Any], army: str, delta: int) -> dict[str, Any]:
    return l5r(state, type="honor", by="judge", army=army, delta=delta)


def lose_provinces(state: dict[str, Any], army: str, count: int = 4) -> dict[str, Any]:
    for _ in range(count):
        state = l5r(state, type="province", by="judge", army=army, delta=-1)
    return state
