"""A short tournament played end to end through the JSON API, with Celery running the clock.

A judge (API key) imports the map, creates a 16-player tournament of three turns, registers
the players and starts it; the Crane declare their starting positions through their own
General, the judge declares the others'. From then on nobody advances anything by hand: a
real Celery worker and beat (subprocesses, ``SL5R_CLOCK=celery``) move the tournament from
planning to negotiation to turn 1 and resolve every turn, while the Generals give orders
with their join tokens.

Nothing races the clock. Every phase and turn is created an hour long (``HELD_SECONDS``) and
held open until the test has done what it does in it; then the judge sets its time left
(``POST …/clock/extend`` by the difference, as at his console): 2 s for planning and
negotiation, 3 s for turns 1 and 2, none for turn 3, which he ends at once so that an order
after its deadline can be sent without waiting for the wall clock. A loaded machine makes
a phase longer, never an order late or a phase missed. The clock then acts at the deadline
the judge set: the tick the server sends for it, or beat's sweep. What the test plays:

========  ===================================================================================
turn 1    Lion 1 and Dragon 1 swap (akodo <-> mirumoto: a swap conflict, decided by a draw);
          Crab 1 enters Shinomen Mori without claiming it; Phoenix 2 takes Toshi Ranbo;
          Unicorn 2 rides two provinces to Lion Kitsu; Scorpion 1's order is illegal (422);
          Crane 2 gives an order and withdraws it.
turn 2    Crab 1 holds without claiming; Phoenix 2 takes Seppun; Shadowlands 1 changes his
          order from the Wastes to Crab Hiruma (the last order counts).
turn 3    Phoenix 2 takes Scorpion Soshi; Unicorn 2 takes the Shadowlands Wastes; Crab 1,
          without an order, holds and claims Shinomen Mori. The judge ends the turn now;
          then Crab 2's order is refused (409).
========  ===================================================================================

Runs on PostgreSQL (the test database, committed: ``transaction=True``) with Redis as the
broker, in the PostgreSQL pass of ``make test``; skipped without them unless CI is set.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime, timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import call_command
from django.http import HttpResponse
from django.utils import timezone

from referees.kernel.access import judge_key_create
from referees.services import Actor
from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import GameMap, rokugan_map
from strategic_map.models import Turn
from tests.judge_clock import HELD_TURN_SECONDS, time_left_seconds
from tests.referees import celery_processes
from tests.referees.celery_processes import (
    LATENESS_MOST,
    Service,
    deadline_tick_send,
    service_tails,
)
from tests.referees.conftest import Api

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
]

CELERY_REDIS_DB = 13  # the broker's Redis database; test_tasks_celery uses 14
# The length every phase and turn is created with: each waits for the judge to set its time
# left once the test has done its part in it.
HELD_SECONDS = HELD_TURN_SECONDS
TURN_SECONDS = 3  # the time left the judge gives turns 1 and 2 once their orders are in
TURNS = 3
PHASE_SECONDS = 2  # the time left he gives planning and negotiation
# An upper bound: the game takes PHASE_SECONDS × 2 + TURN_SECONDS × 2 of clock time and a few
# dozen requests; a stuck clock never ends it.
GAME_SECONDS = 120.0
POLL_SECONDS = 0.1

celery_env = celery_processes.celery_env
celery_start = celery_processes.celery_start

# The Crane declare for themselves (their General, the clan has no Daimyo), not in the
# order the judge would use; the judge puts the other clans' armies in their castle homes.
CRANE_POSITIONS = {"crane-1": "crane-daidoji", "crane-2": "crane-kakita"}
SWAP = {"lion-1": "dragon-mirumoto", "dragon-1": "lion-akodo"}


def move(*path: str, claim: bool = True) -> dict[str, Any]:
    return {"kind": "move", "path": list(path), "claim": claim}


class Game:
    """One tournament seen through the API: the judge's key and the Generals' tokens."""

    def __init__(self, api: Api, judge_key: str, broker_url: str, *services: Service) -> None:
        self.api = api
        self.judge_key = judge_key
        self.broker_url = broker_url  # the worker's: the ticks a server would send
        self.services = services
        self.id = 0
        self.tokens: dict[str, str] = {}  # army code -> its General's join token
        self.started = time.monotonic()

    def judge(self, method: str, path: str, body: Any = None, status: int = 200) -> Any:
        response = self.api.call(
            method, f"/tournaments/{self.id}{path}", token=self.judge_key, json_body=body
        )
        assert response.status_code == status, (method, path, response.content)
        return response.json()

    def order(self, army: str, body: Mapping[str, Any] | None) -> HttpResponse:
        """``PUT orders/mine`` by the army's General (``DELETE`` when ``body`` is None)."""
        path = f"/tournaments/{self.id}/orders/mine"
        token = self.tokens[army]
        if body is None:
            return self.api.delete(path, token=token)
        return self.api.put(path, dict(body), token=token)

    def give(self, army: str, body: Mapping[str, Any] | None) -> dict[str, Any]:
        response = self.order(army, body)
        assert response.status_code == 200, (army, body, response.content)
        result: dict[str, Any] = response.json()
        return result

    def state(self, *, public: bool = False) -> dict[str, Any]:
        token = None if public else self.judge_key
        response = self.api.get(f"/tournaments/{self.id}/state", token=token)
        assert response.status_code == 200, response.content
        result: dict[str, Any] = response.json()
        return result

    def wait(self, what: str, done: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
        """Poll the judge's state until ``done(state)``; the whole game has GAME_SECONDS."""
        while True:
            state = self.state()
            if done(state):
                return state
            if time.monotonic() - self.started > GAME_SECONDS:
                clock = state["tournament"]["clock"]
                pytest.fail(
                    f"waited {GAME_SECONDS} s in all, still not {what} "
                    f"(phase {clock['phase']}, turn {state['tournament']['turn']})\n"
                    f"{service_tails(*self.services)}",
                    pytrace=False,
                )
            time.sleep(POLL_SECONDS)

    def wait_phase(self, phase: str) -> dict[str, Any]:
        return self.wait(f"in phase {phase}", lambda s: s["tournament"]["clock"]["phase"] == phase)

    def time_left_set(self, seconds: float, *, phase: str, turn: int | None = None) -> datetime:
        """The judge gives ``phase`` (``turn`` in a running game), held open until now, about
        ``seconds`` left (within half a second), as at his console: ``POST …/clock/extend``
        by the difference. Then the tick a server running the Celery clock sends for the new
        deadline, which is returned: the held one moved by the whole seconds asked."""
        before = self.deadline_of(phase, turn)
        asked = time_left_seconds(before, seconds, timezone.now())
        self.judge("POST", "/clock/extend", {"seconds": asked})
        deadline = before + timedelta(seconds=asked)
        deadline_tick_send(self.broker_url, self.id, deadline)
        return deadline

    def turn_end_now(self, turn: int) -> None:
        """The judge takes all the time left off the open turn ``turn``: its deadline is now
        (the server's ``now``: the clock takes no time off past it, so asking for a second
        more than is left is exact whatever the rounding). The caller sends the tick."""
        before = self.deadline_of("running", turn)
        asked = time_left_seconds(before, -1, timezone.now())
        self.judge("POST", "/clock/extend", {"seconds": asked})

    def tick_send(self, deadline: datetime) -> None:
        """The tick a server running the Celery clock sends for ``deadline``."""
        deadline_tick_send(self.broker_url, self.id, deadline)

    def deadline_of(self, phase: str, turn: int | None) -> datetime:
        """The deadline of the current phase, checked to be ``phase`` (and ``turn``)."""
        tournament = self.state()["tournament"]
        clock = tournament["clock"]
        assert clock["phase"] == phase and turn in (None, tournament["turn"]), (
            f"the judge sets the time left of {phase} {turn or ''}, but the clock is at "
            f"turn {tournament['turn']}: {clock}"
        )
        return datetime.fromisoformat(clock["deadline"])

    def wait_turn(self, number: int) -> None:
        """Wait until turn ``number`` is open, held open for its orders.

        ``GET state`` reads the tournament (its clock) before the turns, without one
        snapshot: a poll in the middle of a resolution can show the new turn with the old
        clock (0 s left). Such a reading is skipped; the next poll is whole.
        """

        def opened(state: dict[str, Any]) -> bool:
            tournament = state["tournament"]
            if tournament["clock"]["phase"] != "running":
                return bool(tournament["clock"]["phase"] == "finished")
            return bool(
                tournament["turn"] > number
                or (tournament["turn"] == number and tournament["clock"]["remaining"] > 0)
            )

        state = self.wait(f"in turn {number}", opened)
        clock = state["tournament"]["clock"]
        # Held open until the judge sets its time left: it cannot pass unseen, and its
        # orders cannot be late, however slow this process is.
        assert (state["tournament"]["turn"], clock["phase"]) == (number, "running"), (
            f"turn {number} was resolved while held open for its orders: {clock}"
        )
        assert clock["remaining"] > HELD_SECONDS - GAME_SECONDS, (
            f"turn {number} opened with {clock['remaining']} s left, not held for its orders"
        )


def positions_of(state: Mapping[str, Any]) -> dict[str, str | None]:
    return {a["id"]: a["province"] for a in state["armies"]}


def r12_scores(game_map: GameMap, control: Mapping[str, str | None]) -> dict[str, dict[str, int]]:
    """R12 recomputed here: 2 per home province, 1 per other, +1 per castle province."""
    scores = {c: {"home_provinces": 0, "other_provinces": 0, "castles": 0} for c in CLANS}
    for pid, clan in control.items():
        if clan is None:
            continue
        province = game_map.provinces[pid]
        scores[clan]["home_provinces" if province.home_clan == clan else "other_provinces"] += 1
        scores[clan]["castles"] += int(province.castle is not None)
    for score in scores.values():
        score["total"] = 2 * score["home_provinces"] + score["other_provinces"] + score["castles"]
    return scores


def check_case(case: dict[str, Any], path: Path) -> str:
    """``manage.py adjudicate --check`` on the case file; its output, or the test fails."""
    path.write_text(json.dumps(case, ensure_ascii=False, indent=2), encoding="utf-8")
    out, err = StringIO(), StringIO()
    try:
        call_command("adjudicate", "--check", str(path), stdout=out, stderr=err)
    except SystemExit as exit_:
        pytest.fail(
            f"adjudicate --check {path.name} exited {exit_.code}:\n{out.getvalue()}{err.getvalue()}"
        )
    return out.getvalue()


@pytest.fixture
def celery_clock(celery_start: Callable[[str], Service]) -> Iterator[tuple[Service, Service]]:
    """A worker and beat running (and stopped afterwards by ``celery_start``)."""
    worker = celery_start("worker")
    beat = celery_start("beat")
    worker.wait_for(" ready.")
    beat.wait_for("Sending due task")
    yield worker, beat


def test_a_tournament_is_played_through_the_api_while_celery_runs_the_clock(
    celery_clock: tuple[Service, Service],
    celery_env: dict[str, str],
    api: Api,
    django_user_model: Any,
    tmp_path: Path,
) -> None:
    worker, beat = celery_clock
    game_map = rokugan_map()
    user = django_user_model.objects.create_user(username="e2e-judge", password="e2e-pass-1")
    key = judge_key_create(user=user, label="e2e").key
    game = Game(api, key, celery_env["REDIS_URL"], worker, beat)

    # --- set-up: the map, the tournament, its 16 players ----------------------------------
    response = api.post("/maps", {"slug": "rokugan", "data": game_map.to_dict()}, token=key)
    assert response.status_code == 201, response.content
    response = api.post(
        "/tournaments",
        {
            "name": "End to end",
            "map": "rokugan",
            "player_count": 16,
            "turn_seconds": HELD_SECONDS,
            "turns_total": TURNS,
            "planning_seconds": HELD_SECONDS,
            "negotiation_seconds": HELD_SECONDS,
        },
        token=key,
    )
    assert response.status_code == 201, response.content
    game.id = response.json()["id"]
    lineup = api.get("/lineup?players=16").json()
    assert lineup["excluded_clans"] == []
    for clan, roles in lineup["clans"].items():
        assert roles == ["general", "general"], (clan, roles)
        for number, role in enumerate(roles, start=1):
            player = game.judge(
                "POST",
                "/players",
                {"name": f"{clan.title()} General {number}", "clan": clan, "role": role},
                status=201,
            )
            assert player["army"] == f"{clan}-{number}"
            game.tokens[player["army"]] = player["token"]
    assert len(game.tokens) == 16

    # --- the start: planning, the clans declare -------------------------------------------
    game.started = time.monotonic()
    assert game.judge("POST", "/start")["phase"] == "planning"
    response = api.put(
        f"/tournaments/{game.id}/positions/crane",
        {"positions": CRANE_POSITIONS},
        token=game.tokens["crane-1"],
    )
    assert response.status_code == 200, response.content
    start = dict(CRANE_POSITIONS)
    for clan in CLANS:
        if clan == "crane":
            continue
        castles = sorted(p for p in game_map.home_provinces[clan] if p in game_map.castles)
        positions = {f"{clan}-1": castles[0], f"{clan}-2": castles[1]}
        game.judge("PUT", f"/positions/{clan}", {"positions": positions})
        start.update(positions)
    assert positions_of(game.state()) == start

    # --- the clock moves on, at the deadlines the judge sets: negotiation, then turn 1 ----
    planning_deadline = game.time_left_set(PHASE_SECONDS, phase="planning")
    game.wait_phase("negotiation")
    negotiation_deadline = game.time_left_set(PHASE_SECONDS, phase="negotiation")
    game.wait_turn(1)
    deadlines: dict[int, datetime] = {}  # turn -> the deadline the judge set

    # --- turn 1 ----------------------------------------------------------------------------
    for army, province in SWAP.items():
        game.give(army, move(province))
    game.give("crab-1", move("shinomen-mori", claim=False))
    game.give("phoenix-2", move("toshi-ranbo"))
    game.give("unicorn-2", move("unicorn-iuchi", "lion-kitsu"))  # a Unicorn double move
    refused = game.order("scorpion-1", move("toshi-ranbo"))  # Bayushi is not next to it
    assert refused.status_code == 422, refused.content
    assert refused.json()["code"] == "not_adjacent"
    game.give("crane-2", move("seppun"))
    assert game.give("crane-2", None)["kind"] == "withdraw"
    orders = {o["army"]: o for o in game.state()["orders"]}
    assert sorted(orders) == ["crab-1", "dragon-1", "lion-1", "phoenix-2", "unicorn-2"]
    assert orders["crab-1"]["claim"] is False
    deadlines[1] = game.time_left_set(TURN_SECONDS, phase="running", turn=1)

    # --- turn 2 ----------------------------------------------------------------------------
    game.wait_turn(2)
    game.give("crab-1", {"kind": "hold", "claim": False})
    game.give("phoenix-2", move("seppun"))
    game.give("shadowlands-1", move("shadowlands-wastes"))
    game.give("shadowlands-1", move("crab-hiruma"))  # changed: the last order counts
    deadlines[2] = game.time_left_set(TURN_SECONDS, phase="running", turn=2)

    # --- turn 3, and an order after its deadline ------------------------------------------
    game.wait_turn(3)
    game.give("phoenix-2", move("scorpion-soshi"))
    game.give("unicorn-2", move("shadowlands-wastes"))
    game.turn_end_now(3)  # its deadline passed as he asked: no waiting for the wall clock
    late = game.order("crab-2", move("crab-yasuki"))
    # Only now the tick a server sends for the deadline: beat's sweep may still come first.
    game.tick_send(timezone.now())
    assert late.status_code == 409, late.content
    # "late" while the turn waits for the clock, "not_running" once it is resolved
    assert late.json()["code"] in ("late", "not_running"), late.content

    final = game.wait_phase("finished")
    after_end = game.order("crab-2", move("crab-yasuki"))
    assert after_end.status_code == 409, after_end.content
    assert after_end.json()["code"] == "not_running"

    # === then: the log, each turn once and on time ========================================
    # Each turn's deadline as the clock acted on it: the one the judge set (turn 3's is the
    # server's ``now`` when he ended it).
    stored = dict(
        Turn.objects.filter(campaign__tournament=game.id).values_list("number", "deadline")
    )
    assert {1: stored[1], 2: stored[2]} == deadlines and stored[3] is not None, stored
    deadlines[3] = stored[3]
    log = api.get(f"/tournaments/{game.id}/log?limit=1000", token=key).json()
    assert log["more"] is False
    entries = log["entries"]
    by_action: dict[str, list[dict[str, Any]]] = {}
    for entry in entries:
        by_action.setdefault(entry["action"], []).append(entry)
    resolved = by_action["turn_resolved"]
    lateness: dict[str, timedelta] = {}  # printed: how late the clock acted, on this machine
    assert Counter(e["turn"] for e in resolved) == dict.fromkeys(range(1, TURNS + 1), 1)
    for entry in resolved:
        assert entry["by"] == "clock"
        late_by = datetime.fromisoformat(entry["at"]) - deadlines[entry["turn"]]
        assert timedelta(0) <= late_by <= LATENESS_MOST, f"turn {entry['turn']} {late_by} late"
        lateness[f"turn {entry['turn']}"] = late_by
    assert "deployment_started" not in by_action, "the clans declared after planning ended"
    [negotiation] = by_action["negotiation_started"]
    [opened] = by_action["turn_opened"]
    [ended] = by_action["game_ended"]
    assert (negotiation["by"], opened["by"], opened["turn"]) == ("clock", "clock", 1)
    assert (ended["by"], ended["turn"]) == ("clock", TURNS)
    for entry, deadline in ((negotiation, planning_deadline), (opened, negotiation_deadline)):
        late_by = datetime.fromisoformat(entry["at"]) - deadline
        assert timedelta(0) <= late_by <= LATENESS_MOST, f"{entry['action']} {late_by} late"
        lateness[entry["action"]] = late_by
    given = by_action["order_given"]
    for entry in given:
        assert datetime.fromisoformat(entry["at"]) < deadlines[entry["turn"]], entry
    assert "crab-2" not in {e["data"]["army"] for e in given}
    assert "scorpion-1" not in {e["data"]["army"] for e in given}
    assert [e["data"]["army"] for e in by_action["order_withdrawn"]] == ["crane-2"]
    # The judge's settings: one a phase and one a turn, and nothing else moved a deadline.
    settings = by_action["clock_extended"]
    assert [e["by"] for e in settings] == [Actor.of_user(user).label] * (2 + TURNS), settings
    print(
        "\nthe clock acted "
        + ", ".join(f"{what} {by.total_seconds():.3f} s" for what, by in lateness.items())
        + f" after the deadline; the late order: {late.json()['code']}"
    )

    # === the turns as played: the swap, the claims, and their case files =================
    cases = {}
    for number in range(1, TURNS + 1):
        cases[number] = game.judge("GET", f"/turns/{number}/case")
        output = check_case(cases[number], tmp_path / f"turn-{number}.json")
        assert output.startswith("ok "), output
    [draw] = resolved[0]["data"]["draws"]
    assert draw["provinces"] == ["dragon-mirumoto", "lion-akodo"]
    assert draw["method"] == "random"
    # The side drawn moves into the other's province; the other side stays there, blocked.
    together = next(p for p in draw["provinces"] if p != draw["moving_from"])
    mover = "lion-1" if draw["moving_from"] == "lion-akodo" else "dragon-1"
    outcomes = {o["army"]: o["outcome"] for o in cases[1]["expect"]["orders"]}
    blocked = "dragon-1" if mover == "lion-1" else "lion-1"
    assert (outcomes[mover], outcomes[blocked]) == ("moved", "blocked")
    assert "scorpion-1" not in outcomes and "crane-2" not in outcomes
    meeting = {"province": together, "armies": ["dragon-1", "lion-1"]}
    for entry in resolved:
        assert entry["data"]["meetings"] == [{**meeting, "new": entry["turn"] == 1}]
    assert {o["army"] for o in cases[1]["orders"]} == {
        "crab-1",
        "dragon-1",
        "lion-1",
        "phoenix-2",
        "unicorn-2",
    }
    [changed] = [o for o in cases[2]["orders"] if o["army"] == "shadowlands-1"]
    assert changed["move"] == ["crab-hiruma"]
    assert {"army": "crab-1", "claim": False} in cases[2]["orders"]
    # Shinomen Mori: entered without a claim, held without one, then claimed by default.
    assert [cases[n]["expect"]["control"].get("shinomen-mori") for n in (1, 2, 3)] == [
        None,
        None,
        "crab",
    ]

    # === the final public state: positions, control, scores (R12) ========================
    public = game.state(public=True)
    assert public["tournament"]["clock"]["phase"] == "finished"
    assert public["tournament"]["turn"] == TURNS
    assert positions_of(public) == positions_of(final)
    expected_positions = {
        **start,
        "lion-1": together,
        "dragon-1": together,
        "crab-1": "shinomen-mori",
        "phoenix-2": "scorpion-soshi",
        "unicorn-2": "shadowlands-wastes",
        "shadowlands-1": "crab-hiruma",
    }  # Scorpion 1 (refused), Crane 2 (withdrawn) and Crab 2 (late) did not move
    assert positions_of(public) == expected_positions
    expected_control = {
        **game_map.initial_control(),
        "toshi-ranbo": "phoenix",
        "seppun": "phoenix",
        "scorpion-soshi": "phoenix",
        "lion-kitsu": "unicorn",
        "shadowlands-wastes": "unicorn",
        "crab-hiruma": "shadowlands",
        "shinomen-mori": "crab",
    }
    control = {pid: public["control"].get(pid) for pid in game_map.provinces}
    assert control == expected_control
    assert set(public["scores"]) == set(CLANS)
    assert public["scores"] == r12_scores(game_map, control)
    assert {clan: s["total"] for clan, s in public["scores"].items()} == {
        "crab": 9,  # lost Hiruma (-2), took Shinomen Mori (+1)
        "crane": 13,
        "dragon": 10,
        "lion": 8,  # lost Kitsu
        "phoenix": 14,  # took Toshi Ranbo (a castle), Seppun and Scorpion Soshi
        "scorpion": 8,  # lost Soshi
        "shadowlands": 9,  # lost the Wastes, took Hiruma
        "unicorn": 12,  # took Kitsu and the Wastes
    }
    assert "Traceback" not in worker.output(), worker.tail()
