"""Properties of the battle tables over random action sequences (R8, R11, R13, R14).

Whatever a table is sent (legal, illegal or malformed actions, reinforcements, any seed),
the games raise nothing but ``GameError``, refuse every action ``actions()`` does not offer,
and always hand back a JSON value that satisfies the invariants checked here.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from sl5r.rules.games import BushidoGame, Entrant, GameError, L5RGame

MAX_EXAMPLES = int(os.environ.get("SL5R_PROPERTY_EXAMPLES", "80"))
properties = settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

L5R = L5RGame()
BUSHIDO = BushidoGame()
ELEMENTS = ("air", "earth", "fire", "water", "void")
L5R_PHASES = ("straighten", "events", "action", "attack", "dynasty", "end")
STARTERS = ("crab-1", "crab-2", "lion-1", "scorpion-1", "crane-1")
ARRIVALS = ("dragon-1", "unicorn-1", "lion-2", "crab-1")


def entrant(army: str, scorpions_choose: bool) -> Entrant:
    clan = army.rsplit("-", 1)[0]
    return Entrant(army=army, clan=clan, chooses_seating=scorpions_choose and clan == "scorpion")


def armies_of(state: dict[str, Any]) -> list[str]:
    return [p["army"] for p in state["players"]]


def l5r_candidates(s: dict[str, Any]) -> list[dict[str, Any]]:
    armies = armies_of(s)
    who = [*armies, "judge"]
    found: list[dict[str, Any]] = [
        {"type": "begin", "by": "judge"},
        {"type": "production_done", "by": "judge"},
        {"type": "judge_result", "by": "judge", "kind": "win", "winner": armies[0]},
        {"type": "judge_result", "by": "judge", "kind": "truce"},
        {"type": "seating", "by": "judge", "order": sorted(armies)},
        {"type": "honor", "by": "judge", "army": armies[0], "delta": "5"},
        {"type": "unknown", "by": "judge"},
        {"by": "judge"},
        {"type": "end_turn", "by": "nobody"},
        {"type": "phase", "by": "judge", "phase": "end", "extra": 1},
    ]
    for by in who:
        found += [
            {"type": "begin", "by": by},
            {"type": "end_turn", "by": by},
            {"type": "production_done", "by": by},
            {"type": "seating", "by": by, "order": list(reversed(armies))},
            {"type": "truce", "by": by, "agree": True, "army": by},
        ]
        found += [{"type": "phase", "by": by, "phase": p} for p in L5R_PHASES]
    for army in armies:
        found += [
            {"type": "stronghold", "by": army, "honor": 6, "province_strength": 5, "gold": 5},
            {
                "type": "stronghold",
                "by": "judge",
                "army": army,
                "honor": 4,
                "province_strength": 3,
                "gold": 2,
                "sensei": {"honor": -30, "gold": -5},
            },
            {"type": "honor", "by": "judge", "army": army, "delta": 20},
            {"type": "honor", "by": army, "army": army, "delta": -15},
            {"type": "province", "by": "judge", "army": army, "delta": -1},
            {"type": "province", "by": army, "army": army, "delta": 1},
            {"type": "declare", "by": army, "kind": "enlightenment", "army": army},
            {"type": "truce", "by": army, "agree": False},
        ]
        found += [{"type": "ring", "by": "judge", "army": army, "element": e} for e in ELEMENTS]
    return found


def check_l5r(s: dict[str, Any]) -> None:
    assert json.loads(json.dumps(s)) == s
    players = {p["army"]: p for p in s["players"]}
    assert len(players) == len(s["players"])
    stage = s["stage"]
    assert stage in ("setup", "playing", "production", "over")
    assert (stage == "over") == (s["outcome"] is not None)
    lost = [a for a, p in players.items() if p["status"] == "lost"]
    assert sorted(s["losers"]) == sorted(lost) and len(set(s["losers"])) == len(s["losers"])
    for p in players.values():
        assert 0 <= p["provinces"] <= 4
        assert (p["provinces"] == 0) <= (p["status"] == "lost")
        assert len(set(p["rings"])) == len(p["rings"]) and set(p["rings"]) <= set(ELEMENTS)
        assert len(p["rings"]) < 5 or stage == "over"
        assert p["status"] in ("setup", "playing", "newcomer", "lost")
    assert len(s["history"]) <= 50
    assert set(s["truce"]) <= set(players) - set(lost)
    seating = s["seating"] or []
    assert len(set(seating)) == len(seating) and set(seating) <= set(players)
    if stage == "over":
        outcome = s["outcome"]
        assert outcome["losers"] == s["losers"] or outcome["reason"] == "judge"
        if outcome["kind"] == "win":
            assert players[outcome["winner"]]["status"] != "lost"
        return
    left = [p for p in players.values() if p["status"] != "lost"]
    assert len({p["clan"] for p in left}) >= 2
    unseated = [a for a, p in players.items() if p["status"] == "newcomer" and a not in seating]
    if stage == "setup":
        assert all(p["status"] == "setup" for p in players.values())
        assert s["seating"] is not None or s["chooser"] is not None
    elif stage == "playing":
        assert players[s["current"]]["status"] == "playing"
        assert s["phase"] in L5R_PHASES
        assert s["frozen"] == bool(unseated)
        assert s["production"] is None
        assert set(seating) == set(players) - set(unseated)
    else:
        production = s["production"]
        assert s["current"] == production["order"][production["index"]]
        assert players[s["current"]]["status"] == "newcomer"
        assert production["turn"] in (1, 2)
        assert not unseated


def bushido_candidates(s: dict[str, Any]) -> list[dict[str, Any]]:
    armies = armies_of(s)
    found: list[dict[str, Any]] = [
        {"type": "judge_result", "by": "judge", "kind": "win", "winner": armies[-1]},
        {"type": "judge_result", "by": "judge", "kind": "truce"},
        {"type": "models", "by": "judge", "army": armies[0], "count": "3"},
        {"type": "whatever", "by": "judge"},
    ]
    for by in [*armies, "judge"]:
        found += [
            {"type": "phase", "by": by, "phase": "main"},
            {"type": "phase", "by": by, "phase": "end"},
            {"type": "end_turn", "by": by},
            {"type": "end_turn", "by": by},
            {"type": "declare", "by": by, "kind": "all_scored"},
            {"type": "truce", "by": by, "agree": True, "army": by},
        ]
    for army in armies:
        found += [
            {"type": "tactical_test", "by": "judge", "winner": army},
            {"type": "models", "by": army, "army": army, "count": 4},
            {"type": "models", "by": "judge", "army": army, "count": 6},
            {"type": "models", "by": "judge", "army": army, "count": 0},
            {"type": "victory_points", "by": "judge", "army": army, "points": 2},
            {"type": "victory_points", "by": army, "army": army, "points": -1},
        ]
    return found


def check_bushido(s: dict[str, Any]) -> None:
    assert json.loads(json.dumps(s)) == s
    clans = {p["army"]: p["clan"] for p in s["players"]}
    assert len(clans) == len(s["players"])
    assert (s["stage"] == "over") == (s["outcome"] is not None)
    assert len(set(s["losers"])) == len(s["losers"]) and set(s["losers"]) <= set(clans)
    assert 1 <= s["turn"] <= s["turns"]
    if s["stage"] == "over":
        return
    a, b = s["sides"]
    assert a != b and a not in s["queue"] and b not in s["queue"]
    assert len(set(s["queue"])) == len(s["queue"])
    assert s["phase"] in ("starting", "main", "end")
    assert set(s["victory_points"]) == {a, b}
    assert all(v >= 0 for v in s["turn_points"].values())
    for side in (a, b, *s["queue"]):
        assert any(c == side and army not in s["losers"] for army, c in clans.items())


def ending(action: dict[str, Any]) -> bool:
    kind = action.get("type")
    return kind in ("judge_result", "declare") or (kind == "truce" and action.get("agree"))


def run(
    game: Any, state: dict[str, Any], data: st.DataObject, rng: random.Random, steps: int
) -> dict[str, Any]:
    candidates = l5r_candidates if game is L5R else bushido_candidates
    check = check_l5r if game is L5R else check_bushido
    check(state)
    for _ in range(steps):
        if data.draw(st.integers(0, 15)) == 0:
            arriving = data.draw(st.sampled_from(ARRIVALS))
            with contextlib.suppress(GameError):
                state = game.reinforce(state, entrants=[entrant(arriving, True)], rng=rng)
            check(state)
            continue
        pool = candidates(state)
        if data.draw(st.integers(0, 30)) > 0:
            # Results, declarations and truces end a battle at once; keep them rare so that
            # the sequences also reach the ends by honor, provinces and victory points.
            pool = [c for c in pool if not ending(c)]
        if data.draw(st.integers(0, 3)) > 0:
            # Mostly actions the table offers, so that the sequences get far into a battle.
            someone = data.draw(st.sampled_from([*armies_of(state), "judge"]))
            offered = game.actions(state, by=someone)
            pool = [c for c in pool if c.get("by") == someone and c.get("type") in offered] or pool
        action = data.draw(st.sampled_from(pool))
        by = action.get("by")
        offered = game.actions(state, by=by) if isinstance(by, str) else []
        try:
            state = game.act(state, action, rng=rng, rng_label="property")
        except GameError:
            pass
        else:
            assert action["type"] in offered, f"{action} was done but not offered"
        check(state)
    event(f"ended in stage {state['stage']}")
    if state["stage"] == "over":
        event(f"outcome {state['outcome']['reason']}")
    return state


@properties
@given(
    data=st.data(),
    seed=st.integers(0, 2**16),
    count=st.integers(2, 5),
    scorpions_choose=st.booleans(),
)
def test_random_l5r_tables_raise_only_game_errors_and_stay_valid(
    data: st.DataObject, seed: int, count: int, scorpions_choose: bool
) -> None:
    rng = random.Random(seed)
    entrants = [entrant(a, scorpions_choose) for a in STARTERS[:count]]
    if len({e.clan for e in entrants}) < 2:
        return
    state = L5R.open(entrants=entrants, options={}, rng=rng)
    run(L5R, state, data, rng, steps=60)


@properties
@given(data=st.data(), seed=st.integers(0, 2**16), count=st.integers(2, 5))
def test_random_bushido_tables_raise_only_game_errors_and_stay_valid(
    data: st.DataObject, seed: int, count: int
) -> None:
    rng = random.Random(seed)
    entrants = [entrant(a, False) for a in STARTERS[:count]]
    if len({e.clan for e in entrants}) < 2:
        return
    state = BUSHIDO.open(entrants=entrants, options={"turns": 2}, rng=rng)
    run(BUSHIDO, state, data, rng, steps=40)
