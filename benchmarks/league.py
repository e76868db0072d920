"""A league on one deadline (issue 33): N tournaments of 48, every General's page open.

A measurement, not a test: prints its tables and a verdict per target and exits 0 (2 when
the cluster could not be started or a round could not be run).

    .venv/bin/python benchmarks/league.py                             # 10, 25, 100; both clients
    .venv/bin/python benchmarks/league.py --tournaments 2 --window 10 # a quick look
    .venv/bin/python benchmarks/league.py --tournaments 10 --clients lean
    .venv/bin/python benchmarks/league.py --tournaments 10 --daimyo      # the Daimyo's pages too
    .venv/bin/python benchmarks/league.py --postgres URL --redis URL --seed 7 --keep-logs

The cluster is ``python -m sl5r.cluster`` (what ``make cluster`` runs: HAProxy, two ASGI
processes, one Celery worker and one beat under supervisord), started once for the whole
run as ``cluster_load.py`` starts it (its machinery is imported from there): on a scratch
PostgreSQL database created beside ``--postgres``'s and dropped afterwards and on the Redis
database of ``--redis`` (emptied before and after), ``SL5R_CLOCK=celery``, DEBUG off.

A **round** is one league size (``--tournaments``) with one kind of client (``--clients``),
run in turn: for every round a fresh league is built in the same cluster, and the previous
league's games are ended first (``clock_end``), so that its pages and deadlines are gone.
A league is N tournaments of 48 players (R1: 4 Generals, a Daimyo and a Karo per clan, so
32 Generals each), built through the services as judges would, the players of each
tournament registered in one ``roster_register`` (the console's "Add many players"), by
``--build-jobs`` processes side by side (default: one per core); turn 1 opens at the same
instant in all of them, and a judge's ``clock_extend`` brings all their deadlines to the
same second, set once the pages are open.

Every General has his page open (``--daimyo``: every Daimyo too): a keep-alive HTTP
connection through the balancer (a second one opens while the first is busy, as a
browser's would) on which it fetched ``GET /api/tournaments/<id>/state`` with his join
token as a Bearer token, and a websocket ``ws/tournaments/<id>/?token=<join token>``
through the balancer. Each General sends one legal move (``PUT …/orders/mine``,
``{"kind": "move", "path": [province], "turn": 1}`` as ``general.js`` sends) at a random
moment (seeded) of the last ``--window`` seconds (60) before the deadline, a fifth of them
in the last 2 s. The Celery clock resolves the turns; each page then waits until it holds a
state of turn 2, at most ``--give-up`` seconds (120) after the deadline.

The pages follow the websocket protocol of docs/api.md, old and new server alike:
``hello`` on connect; an ``event`` whose ``state`` is there is that state (no fetch); one
whose ``since`` equals the version the page holds changes nothing it sees (the page takes
the new version, no fetch); any other newer event leads to ``GET …/state``, one fetch in
flight at a time, fetching again when a newer version was announced meanwhile (at most 5 in
a row, then again after 1 s); a socket silent too long is replaced (after 1 s), as live.js
does. The two kinds (``--clients``; the run prints what each does):

- **lean**: the protocol as above; a ping every 5 s, and a ``pong`` carrying a version newer
  than the page's leads to a fetch (an event it missed); no periodic fetch, and no fetch of
  its own after an order.
- **live**: what ``static/js/live.js`` in this checkout does, with ``general.js``: its ping
  interval, its watchdog and its safety net (a fetch every 30 s whatever happened) are read
  from the file, and so is whether it reads ``since`` (and whether only while no fetch is
  out) and a pong's version; after its order is answered 200 the page fetches its state
  once more (``general.js``'s ``refresh()``, beside live.js's own fetches).

An old server sends players no ``state`` and no ``since``, and pongs without a version: the
pages then fetch after every event.

Per round: the resolutions' start after the deadline (``Turn.resolved_at`` − its deadline:
the ``now`` the clock took once it held the tournament's lock; not before the settle window,
``SL5R_ORDER_SETTLE_SECONDS``), when the pages held turn 2 (from the deadline), pages that
never did, orders sent before the deadline but refused as late, the orders' latency, whether
every order answered 200 is in its turn's case file, and whether each turn was resolved once
(one ``turn_resolved`` log entry). CPU: utime + stime (``/proc/<pid>/stat``, through psutil)
of every process of the cluster, each counted with its whole process tree and the children
it reaped (the worker's pool, PostgreSQL's backends), from the start of the order window to
the moment the last page held turn 2, divided by N: the Celery worker (resolution), the two
ASGI processes (fan-out and reads), PostgreSQL (the whole server: other databases' work on
the same server counts too; the scratch database's own backends are shown apart), HAProxy,
Redis (the machine's server, shared likewise), beat and supervisord; the benchmark's own
clients (this process) apart. Channel-layer overflow: channels_redis's "over capacity" and
``ChannelFull`` in the ASGI and worker logs (the cluster logs at INFO for them); HAProxy's
answers by status from its log.

Targets (each a flag): every resolution starts within the settle window + 1 s of its
deadline (``--target-resolution``); every page holds turn 2 within 5 s of the deadline,
p99, and none never (``--target-pages``); no order sent before the deadline refused as
late; orders answered within 250 ms, p99 (``--target-order-p99``, as ``order_burst.py``);
every order answered 200 carried out; each turn resolved exactly once. Then, as an
estimate: the cores a league of N tournaments needs ≈ CPU-s per tournament-turn × N /
target seconds (``--target-seconds``, default the window + the pages' target), and the
part after the deadline alone within the pages' target.

Everything runs on one machine: clients, cluster, PostgreSQL and Redis share its cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import multiprocessing
import os
import random
import re
import resource
import secrets
import shlex
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# ruff: noqa: E402 (these need ROOT on the path)
from benchmarks.clients import Http, WebSocket
from benchmarks.cluster_load import (
    DEFAULT_POSTGRES,
    LONG_TURN,
    PLAYERS,
    Cluster,
    Db,
    Resolution,
    Sent,
    World,
    bearer,
    cluster_start,
    deadline_set,
    errors_in_logs,
    gathered,
    generals_of,
    redis_flush,
    resolutions_read,
    scratch_create,
    scratch_drop,
    send_at,
    tournaments_end,
    verdict,
    wait_resolved,
    world_make,
)
from benchmarks.fanout import CONNECT_AT_ONCE, raise_fd_limit
from benchmarks.order_burst import fmt, machine, percentile

DEFAULT_REDIS = "redis://127.0.0.1:6379/13"
SIZES = (10, 25, 100)
MODES = ("lean", "live")
WINDOW = 60.0  # the orders come in the last this many seconds before the deadline
LAST_SECONDS, LAST_SHARE = 2.0, 0.2  # ... a fifth of them in the last 2 s
GIVE_UP = 120.0  # a page without turn 2 this long after the deadline never got it
# From setting the deadlines to the start of the order window: a few seconds, the judge's
# clock_extend of each tournament, and as long again as the pages took to load, for the
# fetches that follow each change of the clock (an event) to be over before the window.
LEAD_SECONDS = 3.0
LEAD_PER_TOURNAMENT = 0.15

# As live.js (the live clients read their timings from it: live_js_read).
PING_SECONDS = 5.0
STALE_SECONDS = 12.0
SAFETY_NET_SECONDS = 30.0
REFETCH_LIMIT = 5
CATCH_UP_SECONDS = 1.0
RECONNECT_SECONDS = 1.0
LIVE_JS = ROOT / "static" / "js" / "live.js"
PLAYERS_JS = ROOT / "static" / "js" / "players.js"

# Targets (the verdicts); each can be changed on the command line.
TARGET_PAGES_P99 = 5.0  # every page holds the new turn: p99 from the deadline
TARGET_RESOLUTION_SLACK = 1.0  # resolution starts within settle window + this
TARGET_ORDER_P99 = 0.25  # order_burst.py's target for an order's answer

OVERFLOW = re.compile(r"over capacity|ChannelFull")
# HAProxy's httplog: "… frontend backend/server TR/Tw/Tc/Tr/Ta status bytes …".
HAPROXY_STATUS = re.compile(r" -?\d+/-?\d+/-?\d+/-?\d+/\+?-?\d+ (\d{3}) ")


# --- The league -------------------------------------------------------------------------------


@dataclass
class Seat:
    """A page to open: a General (with his legal moves) or a Daimyo."""

    tournament_id: int
    role: str
    code: str  # the army's code, or the Daimyo's clan
    token: str
    targets: list[str] = field(default_factory=list)


def tournament_bulk_build(world: World, *, name: str, opened_at: datetime) -> list[Seat]:
    """A 48-player tournament with turn 1 open at ``opened_at``, its players registered at
    once; the seats of its Generals and Daimyo."""
    from django.utils import timezone

    from referees.services import (
        Actor,
        player_token,
        start_positions_declare,
        tournament_advance,
        tournament_create,
        tournament_lineup,
        tournament_start,
    )
    from referees.services.roster import RosterLine, roster_register

    actor = Actor.of_user(world.judge)
    now = timezone.now()
    tournament = tournament_create(
        name=name,
        judge=world.judge,
        game_map=world.game_map,
        player_count=PLAYERS,
        now=now,
        turn_seconds=LONG_TURN,
        turns_total=None,
        negotiation_seconds=LONG_TURN,
    )
    lineup = tournament_lineup(
        player_count=PLAYERS,
        shortfall=tournament.shortfall,
        three_variant=tournament.three_variant,
    )
    people = [
        (clan, role, i) for clan, roles in lineup.clans.items() for i, role in enumerate(roles, 1)
    ]
    lines = [
        RosterLine(number=n, name=f"{clan.title()} {role.value} {i}", clan=clan, role=role.value)
        for n, (clan, role, i) in enumerate(people, 1)
    ]
    registered = roster_register(tournament_id=tournament.pk, lines=lines, actor=actor, now=now)
    tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
    graph = world.graph
    for clan in lineup.clans:
        codes = sorted(p.army.code for p in registered if p.clan == clan and p.army)
        homes = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))
        start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions=dict(zip(codes, homes, strict=False)),
            actor=actor,
            now=now,
        )
    tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    tournament = tournament_advance(tournament_id=tournament.pk, actor=actor, now=opened_at)
    tournament.refresh_from_db()
    seats = [
        Seat(g.tournament_id, "general", g.code, g.token, g.targets)
        for g in generals_of(tournament, registered)
    ]
    seats += [
        Seat(tournament.pk, "daimyo", p.clan, player_token(p))
        for p in registered
        if p.role == "daimyo"
    ]
    return seats


_builder_world: World | None = None


def _builder_start(judge_id: int, map_id: int) -> None:
    """A building process: Django set up from the environment the benchmark set."""
    global _builder_world
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from sl5r.rules.mapgraph import rokugan_map
    from strategic_map.models import Map

    judge = get_user_model().objects.get(pk=judge_id)
    _builder_world = World(judge, Map.objects.get(pk=map_id), rokugan_map(), "")


def _builder_build(name: str, opened_at: datetime) -> list[tuple[int, str, str, str, list[str]]]:
    assert _builder_world is not None
    seats = tournament_bulk_build(_builder_world, name=name, opened_at=opened_at)
    return [(s.tournament_id, s.role, s.code, s.token, s.targets) for s in seats]


def league_build(world: World, *, size: int, label: str, jobs: int) -> list[Seat]:
    """``size`` tournaments, built by ``jobs`` processes side by side (each tournament is
    locked on its own, so they do not wait for each other; most of a build is Python)."""
    from django.db import connections
    from django.utils import timezone

    # Turn 1 opens at the same instant everywhere, so that the judge's whole-second change
    # of the deadlines (clock_extend) brings them all to the same instant.
    opened_at = timezone.now()
    names = [f"{label} {n}" for n in range(1, size + 1)]
    if jobs <= 1 or size == 1:
        seats: list[Seat] = []
        for name in names:
            seats += tournament_bulk_build(world, name=name, opened_at=opened_at)
        return seats
    connections.close_all()
    with ProcessPoolExecutor(
        max_workers=min(jobs, size),
        mp_context=multiprocessing.get_context("spawn"),  # no threads or sockets inherited
        initializer=_builder_start,
        initargs=(world.judge.pk, world.game_map.pk),
    ) as pool:
        built = list(pool.map(_builder_build, names, [opened_at] * size))
    return [Seat(*row) for rows in built for row in rows]


# --- A page -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Behaviour:
    """What a kind of page does besides fetching after an event it cannot use."""

    ping: float  # seconds between pings
    stale: float  # a socket silent this long is replaced
    safety_net: float | None  # a fetch this often whatever happened
    reads_since: bool  # an event's ``since`` equal to its version: no fetch
    since_while_fetching: bool  # … even while a fetch is out
    reads_pong: bool  # a pong's newer version: fetch
    refresh_after_order: bool  # general.js's own fetch after its order is answered
    pong_grace: float = 0.0  # … after this long, if the event has not caught the page up
    reads_pong_since: bool = False  # a pong's ``since`` at most its version: no fetch (issue 42)
    heartbeat: float | None = None  # the server's pongs: pings only when they are late (issue 42)

    def describe(self) -> str:
        return (
            f"ping every {self.ping:g} s"
            + (
                f" once the server's pongs are late ({self.heartbeat:g} s)"
                if self.heartbeat
                else ""
            )
            + f", a silent socket replaced after {self.stale:g} s, "
            + (f"a fetch every {self.safety_net:g} s" if self.safety_net else "no periodic fetch")
            + ", `since` "
            + (
                ("read" + ("" if self.since_while_fetching else " (not while a fetch is out)"))
                if self.reads_since
                else "not read"
            )
            + ", a pong's version "
            + ("read" if self.reads_pong else "not read")
            + (" with its `since`" if self.reads_pong_since else "")
            + (f" (fetched {self.pong_grace:g} s later if still behind)" if self.pong_grace else "")
            + (", a fetch after its own order" if self.refresh_after_order else "")
        )


LEAN = Behaviour(
    ping=PING_SECONDS,
    stale=STALE_SECONDS,
    safety_net=None,
    reads_since=True,
    since_while_fetching=True,
    reads_pong=True,
    reads_pong_since=True,
    refresh_after_order=False,
)


def live_js_read(path: Path = LIVE_JS) -> Behaviour:
    """The live clients: what live.js in this checkout does (it is being changed, so its
    timings and what it reads of the frames are taken from its text)."""
    text = path.read_text(encoding="utf-8")

    def seconds(name: str, default: float) -> float:
        found = re.search(rf"const {name} = (\d+)", text)
        return int(found.group(1)) / 1000 if found else default

    pong_start = text.find('message.type === "pong"')
    event_start = text.find('message.type === "event"')
    pong_block = text[pong_start:event_start] if 0 <= pong_start < event_start else ""
    reads_since = "message.since" in text[event_start:] if event_start >= 0 else False
    # players.js: the page's own fetch after a change is skipped while the socket is live.
    players = PLAYERS_JS.read_text(encoding="utf-8") if PLAYERS_JS.exists() else ""
    return Behaviour(
        ping=seconds("PING_MS", PING_SECONDS),
        stale=seconds("STALE_MS", STALE_SECONDS),
        safety_net=seconds("SAFETY_NET_MS", SAFETY_NET_SECONDS),
        reads_since=reads_since,
        since_while_fetching=reads_since
        and re.search(r"message\.since[^\n]*!fetching", text) is None,
        reads_pong='message.type === "pong"' in text,
        reads_pong_since="message.since" in pong_block,
        refresh_after_order="if (live && !evenLive) return" not in players,
        pong_grace=seconds("CATCH_UP_MS", 1.0) if "catchUpTimer" in pong_block else 0.0,
        heartbeat=seconds("HEARTBEAT_MS", 4.0) if "HEARTBEAT_MS + 1000" in text else None,
    )


@dataclass
class Fetch:
    at: float  # time.time() when sent
    seconds: float
    status: int
    reason: str


class Page:
    """A player's page: its state over HTTP, kept fresh through its websocket.

    ``version`` is live.js's: the version of the last state the live connection handed on;
    ``turn`` is the turn of the state on screen (a fetch of the page's own also shows one).
    """

    def __init__(self, seat: Seat, behaviour: Behaviour, proxy: int, rng: random.Random) -> None:
        self.seat = seat
        self.behaviour = behaviour
        self.proxy = proxy
        self.rng = rng
        self.http = Http(proxy, connections=2)
        self.ws: WebSocket | None = None
        self.state_path = f"/api/tournaments/{seat.tournament_id}/state"
        self.ws_path = f"/ws/tournaments/{seat.tournament_id}/?token={quote(seat.token)}"
        self.headers = bearer(seat.token)
        self.version = -1
        self.heard = 0
        self.turn = 0
        self.fetching = False
        self.reconnected = False
        self.closed = False
        self.last_heard = 0.0  # time.monotonic() of the last message on the current socket
        self.catch_up: asyncio.TimerHandle | None = None
        self.tasks: set[asyncio.Future[Any]] = set()
        self.new_turn: int | None = None
        self.new_turn_at: float | None = None
        self.new_turn_how = ""
        self.has_new_turn = asyncio.Event()
        self.fetches: list[Fetch] = []
        self.frames: Counter[str] = Counter()
        self.problems: list[str] = []
        self.order: Sent | None = None
        self.target = ""

    # The state ---------------------------------------------------------------------------

    def show(self, state: dict[str, Any], how: str, *, live: bool = True) -> None:
        tournament = state["tournament"]
        if live:
            self.version = tournament["version"]
        self.turn = max(self.turn, tournament["turn"])
        if self.new_turn is not None and self.new_turn_at is None and self.turn >= self.new_turn:
            self.new_turn_at = time.time()
            self.new_turn_how = how
            self.has_new_turn.set()

    async def get_state(self, reason: str) -> dict[str, Any] | None:
        at = time.time()
        start = time.perf_counter()
        try:
            status, body = await self.http.request("GET", self.state_path, self.headers)
        except ConnectionError as error:
            self.fetches.append(Fetch(at, time.perf_counter() - start, 0, reason))
            self.problems.append(f"state: {error}")
            return None
        self.fetches.append(Fetch(at, time.perf_counter() - start, status, reason))
        if status != 200:
            self.problems.append(f"state: HTTP {status}")
            return None
        state: dict[str, Any] = json.loads(body)
        return state

    async def _pong_later(self, grace: float) -> None:
        """live.js: a pong's newer version is fetched only if no event caught up meanwhile."""
        await asyncio.sleep(grace)
        if self.version < self.heard:
            self.refresh("pong")

    def spawn(self, coroutine: Any) -> None:
        task = asyncio.ensure_future(coroutine)
        self.tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Future[Any]) -> None:
        self.tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            self.problems.append(f"{type(task.exception()).__name__}: {task.exception()}")

    def refresh(self, reason: str) -> None:
        """live.js's refresh: at most one fetch in flight; fetch again while behind."""
        if self.fetching or self.closed:
            return
        self.fetching = True
        self.spawn(self._refresh(reason))

    async def _refresh(self, reason: str) -> None:
        failed = False
        try:
            for n in range(REFETCH_LIMIT):
                if self.closed:
                    return
                state = await self.get_state(reason if n == 0 else "again (behind)")
                if state is None:
                    failed = True
                    break
                if state["tournament"]["version"] < self.version:
                    break  # an event brought a newer one meanwhile
                self.show(state, f"fetched ({reason})")
                if self.version >= self.heard:
                    break
        finally:
            self.fetching = False
        if not failed and not self.closed and self.version < self.heard and self.catch_up is None:
            self.catch_up = asyncio.get_running_loop().call_later(CATCH_UP_SECONDS, self._caught_up)

    def _caught_up(self) -> None:
        self.catch_up = None
        self.refresh("catch-up")

    # The socket ----------------------------------------------------------------------------

    def on_message(self, message: dict[str, Any]) -> None:
        self.last_heard = time.monotonic()
        kind = message.get("type")
        version = message.get("version")
        if kind == "hello":
            self.frames["hello"] += 1
            if isinstance(version, int):
                self.heard = version
                if version < self.version:
                    self.version = -1
            if version != self.version or self.reconnected:
                self.refresh("hello")
        elif kind == "event":
            self.frames["event"] += 1
            if not isinstance(version, int) or version <= self.version:
                return
            self.heard = max(self.heard, version)
            state = message.get("state")
            if isinstance(state, dict) and state["tournament"]["version"] >= self.version:
                self.frames["event with a state"] += 1
                self.show(state, "event's state")
                if self.version >= self.heard:
                    return
            elif "since" in message:
                self.frames["event with since"] += 1
                b = self.behaviour
                if (
                    b.reads_since
                    and message["since"] == self.version
                    and (b.since_while_fetching or not self.fetching)
                ):
                    self.frames["event with since: nothing changed"] += 1
                    self.version = version
                    return
            self.refresh("event")
        elif kind == "pong":
            self.frames["pong"] += 1
            if isinstance(version, int):
                self.frames["pong with a version"] += 1
                since = message.get("since")
                if (
                    self.behaviour.reads_pong_since
                    and isinstance(since, int)
                    and since <= self.version
                ):
                    self.frames["pong with since: nothing changed"] += 1
                    if version > self.version and not self.fetching:
                        self.version = version
                    return
                if self.behaviour.reads_pong and version > self.version:
                    self.frames["pong with a newer version"] += 1
                    self.heard = max(self.heard, version)
                    if self.behaviour.pong_grace:
                        self.spawn(self._pong_later(self.behaviour.pong_grace))
                    else:
                        self.refresh("pong")

    async def connect(self) -> None:
        self.ws = await WebSocket.connect(self.proxy, self.ws_path)
        self.last_heard = time.monotonic()

    async def load(self) -> None:
        state = await self.get_state("load")
        if state is None:
            raise RuntimeError(f"{self.seat.code}: the page did not load: {self.problems}")
        self.show(state, "load")
        await self.connect()
        assert self.ws is not None
        hello = await self.ws.receive()
        if hello is None or hello.get("type") != "hello":
            raise RuntimeError(f"{self.seat.code}: no hello ({hello})")
        self.on_message(hello)

    def start(self) -> None:
        self.spawn(self.read())
        self.spawn(self.ping())
        if self.behaviour.safety_net:
            self.spawn(self.safety_net(self.behaviour.safety_net))

    async def read(self) -> None:
        while True:  # until closed: checked after each wait
            ws = self.ws
            message = None if ws is None else await ws.receive()
            if self.closed:
                return
            if message is not None:
                self.on_message(message)
                continue
            if ws is self.ws:  # not one the watchdog replaced
                self.frames["socket lost"] += 1
                self.ws = None
            await asyncio.sleep(RECONNECT_SECONDS)
            if self.ws is None:
                await self.reconnect()

    async def reconnect(self) -> None:
        try:
            await self.connect()
        except (OSError, ConnectionError) as error:
            self.problems.append(f"reconnect: {error}")
            return
        self.frames["reconnected"] += 1
        self.reconnected = True

    async def ping(self) -> None:
        """Every 5 s; and, as live.js's watchdog, a socket silent for 12 s is replaced."""
        every = self.behaviour.ping
        await asyncio.sleep(self.rng.uniform(0, every))
        while not self.closed:
            ws = self.ws
            if ws is not None:
                if time.monotonic() - self.last_heard > self.behaviour.stale:
                    self.frames["watchdog: silent socket replaced"] += 1
                    self.ws = None
                    self.spawn(ws.close())
                    await asyncio.sleep(RECONNECT_SECONDS)
                    await self.reconnect()
                    continue
                quiet = time.monotonic() - self.last_heard
                if self.behaviour.heartbeat is None or quiet >= self.behaviour.heartbeat + 1:
                    await ws.send({"type": "ping"})
            await asyncio.sleep(every)

    async def safety_net(self, every: float) -> None:
        # The page was loaded at some moment of the last period.
        await asyncio.sleep(self.rng.uniform(0, every))
        while not self.closed:
            self.refresh("safety net")
            await asyncio.sleep(every)

    # The order -----------------------------------------------------------------------------

    async def give_order(self, when: float, turn: int) -> None:
        body = json.dumps({"kind": "move", "path": [self.target], "turn": turn}).encode()
        self.order = await send_at(
            self.http,
            when,
            "PUT",
            f"/api/tournaments/{self.seat.tournament_id}/orders/mine",
            {**self.headers, "Content-Type": "application/json"},
            body,
        )
        if self.behaviour.refresh_after_order and self.order.status == 200:
            # general.js: `await refresh()` after an order, the page's own fetch beside
            # live.js's (it does not move live.js's version on).
            state = await self.get_state("after its order")
            if state is not None:
                self.show(state, "fetched (after its order)", live=False)

    async def close(self) -> None:
        self.closed = True
        if self.catch_up is not None:
            self.catch_up.cancel()
        for task in list(self.tasks):
            task.cancel()
        if self.ws is not None:
            with contextlib.suppress(Exception):
                await self.ws.close()
        await self.http.close()


# --- CPU time ---------------------------------------------------------------------------------


GROUPS = (
    ("worker", "resolution: the Celery worker (its pool)"),
    ("asgi", "fan-out and reads: the 2 ASGI processes"),
    ("postgres", "database: PostgreSQL (the whole server)"),
    ("balancer", "HAProxy"),
    ("redis", "Redis (the machine's server)"),
    ("beat", "Celery beat"),
    ("supervisord", "supervisord"),
)


class CpuMeter:
    """utime + stime of the cluster's processes, each with its tree and reaped children."""

    def __init__(self, cluster: Cluster, database: str, redis_url: str) -> None:
        import psutil

        self.psutil = psutil
        pids = cluster.info.get("pids") or {}
        self.roots: dict[str, list[int]] = {
            "worker": [pids["worker"]],
            "asgi": [pids["asgi-1"], pids["asgi-2"]],
            "balancer": [pids["balancer"]],
            "beat": [pids["beat"]],
        }
        self.supervisord = int(cluster.info["supervisord"])
        self.database = database
        redis_port = str(urlsplit(redis_url).port or 6379)
        self.postmaster: int | None = None
        self.redis: int | None = None
        for process in psutil.process_iter(["name", "ppid", "cmdline"]):
            name = process.info["name"] or ""
            if name == "postgres" and self.postmaster is None:
                with contextlib.suppress(psutil.Error):
                    if psutil.Process(process.info["ppid"]).name() != "postgres":
                        self.postmaster = process.pid
            args = " ".join(process.info["cmdline"] or [])
            if name == "redis-server" and self.redis is None and f":{redis_port}" in args:
                self.redis = process.pid
        if self.postmaster is not None:
            self.roots["postgres"] = [self.postmaster]
        if self.redis is not None:
            self.roots["redis"] = [self.redis]

    def _tree(self, pid: int) -> float:
        psutil = self.psutil
        total = 0.0
        try:
            root = psutil.Process(pid)
            family = [root, *root.children(recursive=True)]
        except psutil.Error:
            return 0.0
        for process in family:
            with contextlib.suppress(psutil.Error):
                t = process.cpu_times()
                total += t.user + t.system + t.children_user + t.children_system
        return total

    def _backends(self) -> dict[int, float]:
        """The scratch database's backends alive now (their own time)."""
        psutil = self.psutil
        out: dict[int, float] = {}
        if self.postmaster is None:
            return out
        with contextlib.suppress(psutil.Error):
            for process in psutil.Process(self.postmaster).children():
                with contextlib.suppress(psutil.Error):
                    if f" {self.database} " in " ".join(process.cmdline()):
                        t = process.cpu_times()
                        out[process.pid] = t.user + t.system
        return out

    def sample(self) -> dict[str, Any]:
        psutil = self.psutil
        groups = {name: sum(self._tree(pid) for pid in pids) for name, pids in self.roots.items()}
        with contextlib.suppress(psutil.Error):
            t = psutil.Process(self.supervisord).cpu_times()
            groups["supervisord"] = t.user + t.system
        own = resource.getrusage(resource.RUSAGE_SELF)
        return {
            "wall": time.time(),
            "groups": groups,
            "backends": self._backends(),
            "clients": own.ru_utime + own.ru_stime,
        }


def cpu_delta(start: dict[str, Any], end: dict[str, Any]) -> dict[str, float]:
    out = {
        name: end["groups"].get(name, 0.0) - start["groups"].get(name, 0.0) for name, _ in GROUPS
    }
    out["cluster"] = sum(out.values())
    out["scratch backends"] = sum(
        seconds - start["backends"].get(pid, 0.0) for pid, seconds in end["backends"].items()
    )
    out["clients"] = end["clients"] - start["clients"]
    out["wall"] = end["wall"] - start["wall"]
    return out


# --- The logs ---------------------------------------------------------------------------------


def log_sizes(cluster: Cluster) -> dict[str, int]:
    sizes = {}
    for name, path in (cluster.info.get("logs") or {}).items():
        try:
            sizes[name] = Path(path).stat().st_size
        except OSError:
            sizes[name] = 0
    return sizes


def log_since(cluster: Cluster, sizes: dict[str, int]) -> dict[str, Any]:
    """What the logs gained since ``sizes``: channel-layer overflows, tracebacks, and the
    balancer's answers by status."""
    overflow = tracebacks = 0
    statuses: Counter[str] = Counter()
    refused_orders: list[str] = []  # the balancer's lines of orders refused (409)
    for name, path in (cluster.info.get("logs") or {}).items():
        try:
            with open(path, "rb") as log:
                log.seek(sizes.get(name, 0))
                text = log.read().decode(errors="replace")
        except OSError:
            continue
        tracebacks += text.count("Traceback")
        if name == "balancer":
            statuses.update(m.group(1) for m in HAPROXY_STATUS.finditer(text))
            refused_orders += [
                line for line in text.splitlines() if "/orders/mine" in line and " 409 " in line
            ]
        else:
            overflow += len(OVERFLOW.findall(text))
    return {
        "overflow": overflow,
        "tracebacks": tracebacks,
        "statuses": statuses,
        "refused_orders": refused_orders,
    }


# --- A round ----------------------------------------------------------------------------------


@dataclass
class Round:
    size: int
    mode: str
    seats: int
    build_seconds: float
    load_seconds: float = 0.0
    deadlines: dict[int, datetime] = field(default_factory=dict)
    pages: list[Page] = field(default_factory=list)
    resolutions: dict[int, Resolution | None] = field(default_factory=dict)
    cpu: dict[str, float] = field(default_factory=dict)
    cpu_orders: dict[str, float] = field(default_factory=dict)  # window start → deadline
    cpu_after: dict[str, float] = field(default_factory=dict)  # deadline → last page
    logs: dict[str, Any] = field(default_factory=dict)
    window: float = WINDOW
    settle: float = 0.0
    busy_at_start: int = 0  # pages still fetching or behind when the window started


async def sample_at(meter: CpuMeter, when: float) -> dict[str, Any]:
    await asyncio.sleep(max(0.0, when - time.time()))
    return meter.sample()


async def round_run(
    world: World,
    cluster: Cluster,
    meter: CpuMeter,
    seats: list[Seat],
    result: Round,
    args: argparse.Namespace,
    seed: int,
) -> None:
    from django.utils import timezone

    db = Db()
    rng = random.Random(seed)
    proxy = cluster.proxy_port
    behaviour = LEAN if result.mode == "lean" else live_js_read()
    pages = [
        Page(s, behaviour, proxy, random.Random(seed * 100_003 + i)) for i, s in enumerate(seats)
    ]
    result.pages = pages
    try:
        started = time.perf_counter()
        await gathered([p.load() for p in pages], CONNECT_AT_ONCE)
        result.load_seconds = time.perf_counter() - started
        for page in pages:
            page.start()
        turns = Counter(p.turn for p in pages)
        if set(turns) != {1}:
            raise RuntimeError(f"pages loaded on turns {dict(turns)}, expected turn 1")

        tournament_ids = sorted({s.tournament_id for s in seats})
        lead = LEAD_SECONDS + LEAD_PER_TOURNAMENT * len(tournament_ids) + result.load_seconds
        target = timezone.now() + timedelta(seconds=args.window + lead)
        for pk in tournament_ids:
            result.deadlines[pk] = await db(deadline_set, world, pk, target)
        deadline = max(d.timestamp() for d in result.deadlines.values())
        window_start = min(d.timestamp() for d in result.deadlines.values()) - args.window
        if window_start < time.time():
            raise RuntimeError("the deadlines were set too late for the order window")
        for page in pages:
            page.new_turn = 2

        # The orders: a fifth in the last 2 s, the rest over the window before them.
        generals = [p for p in pages if p.seat.role == "general" and p.seat.targets]
        last = min(LAST_SECONDS, args.window)
        closing = set(rng.sample(range(len(generals)), round(len(generals) * LAST_SHARE)))
        plan = []
        for i, page in enumerate(generals):
            own = result.deadlines[page.seat.tournament_id].timestamp()
            early, late = (own - last, own) if i in closing else (own - args.window, own - last)
            page.target = rng.choice(page.seat.targets)
            plan.append((page, rng.uniform(early, late)))

        # The clients' collector would stop the loop for 100 ms and more over thousands of
        # pages: what exists now is kept out of its way.
        gc.collect()
        gc.freeze()
        first_sample = asyncio.ensure_future(sample_at(meter, window_start))
        deadline_sample = asyncio.ensure_future(sample_at(meter, deadline))
        reset = asyncio.ensure_future(asyncio.sleep(max(0.0, window_start - time.time())))
        sends = asyncio.ensure_future(
            asyncio.gather(*(page.give_order(when, 1) for page, when in plan))
        )
        await reset
        result.busy_at_start = sum(1 for p in pages if p.fetching or p.version < p.heard)
        for page in pages:  # the traffic of the window only
            page.fetches.clear()
            page.frames.clear()
        give_up_at = deadline + args.give_up
        waiting = [asyncio.ensure_future(p.has_new_turn.wait()) for p in pages]
        await asyncio.wait(waiting, timeout=max(0.0, give_up_at - time.time()))
        await asyncio.sleep(max(0.0, deadline - time.time()))  # nobody had it before
        end = meter.sample()
        for task in waiting:
            task.cancel()
        start, at_deadline = await first_sample, await deadline_sample
        result.cpu = cpu_delta(start, end)
        result.cpu_orders = cpu_delta(start, at_deadline)
        result.cpu_after = cpu_delta(at_deadline, end)
        await sends
        gc.unfreeze()
    finally:
        for page in pages:
            await page.close()
    await db(wait_resolved, sorted(result.deadlines), 1, 30.0)
    for pk in sorted(result.deadlines):
        result.resolutions[pk] = (await db(resolutions_read, pk)).get(1)
    await db(tournaments_end, world, sorted(result.deadlines))
    db.close()


# --- The report -------------------------------------------------------------------------------


def ms_pair(values: Sequence[float], ps: Sequence[float]) -> str:
    ordered = sorted(v * 1000 for v in values)
    if not ordered:
        return "—"
    return " / ".join(fmt(percentile(ordered, p)) for p in ps)


@dataclass
class Figures:
    """What a round's verdicts are made of."""

    lateness: list[float]
    new_state: list[float]
    never: int
    late_refused: list[float]  # how long before the deadline each was sent
    late_refused_detail: list[str]
    order_seconds: list[float]
    order_seconds_last: list[float]  # those sent in the last 2 s
    acknowledged: int
    carried: int
    not_carried: list[str]
    other_refusals: Counter[int]
    once: int
    resolved: int
    sent_before: int
    sent_after: list[float]  # how late the client's loop sent these, after the deadline
    no_move: int  # Generals with no legal move (no order)


def figures_of(r: Round) -> Figures:
    lateness = sorted(
        x.lateness for x in r.resolutions.values() if x is not None and x.lateness is not None
    )
    new_state = []
    never = 0
    for page in r.pages:
        own = r.deadlines[page.seat.tournament_id].timestamp()
        if page.new_turn_at is None:
            never += 1
        else:
            new_state.append(page.new_turn_at - own)
    late_refused: list[float] = []
    late_refused_detail: list[str] = []
    order_seconds: list[float] = []
    order_seconds_last: list[float] = []
    acknowledged = carried = sent_before = 0
    sent_after: list[float] = []
    not_carried: list[str] = []
    other: Counter[int] = Counter()
    for page in r.pages:
        sent = page.order
        if sent is None:
            continue
        own = r.deadlines[page.seat.tournament_id].timestamp()
        margin = own - sent.at
        sent_before += margin > 0
        if margin <= 0:
            sent_after.append(-margin)
        order_seconds.append(sent.seconds)
        if margin <= LAST_SECONDS:
            order_seconds_last.append(sent.seconds)
        resolution = r.resolutions.get(page.seat.tournament_id)
        case = {} if resolution is None else resolution.case_orders
        if sent.status == 200:
            acknowledged += 1
            if case.get(page.seat.code) == [page.target]:
                carried += 1
            else:
                not_carried.append(f"{page.seat.code} of {page.seat.tournament_id}")
        elif sent.status == 409 and b'"late"' in sent.body:
            if margin > 0:
                late_refused.append(margin)
                late_refused_detail.append(
                    f"{page.seat.code} of tournament {page.seat.tournament_id}: sent "
                    f"{fmt(margin * 1000)} before the deadline, answered "
                    f"{fmt(sent.seconds * 1000)} later: "
                    f"{sent.body[:200].decode(errors='replace')}"
                )
        else:
            other[sent.status] += 1
    done = [x for x in r.resolutions.values() if x is not None]
    return Figures(
        lateness=lateness,
        new_state=new_state,
        never=never,
        late_refused=late_refused,
        late_refused_detail=late_refused_detail,
        order_seconds=order_seconds,
        order_seconds_last=order_seconds_last,
        acknowledged=acknowledged,
        carried=carried,
        not_carried=not_carried,
        other_refusals=other,
        once=sum(1 for x in done if x.times_logged == 1),
        resolved=len(done),
        sent_before=sent_before,
        sent_after=sent_after,
        no_move=sum(1 for p in r.pages if p.seat.role == "general" and not p.seat.targets),
    )


def round_header(r: Round) -> None:
    generals = sum(1 for p in r.pages if p.seat.role == "general")
    others = len(r.pages) - generals
    spread = (max(r.deadlines.values()) - min(r.deadlines.values())).total_seconds()
    print(
        f"\n### {r.size} tournaments, {r.mode} clients\n\n"
        f"set-up through the services: {r.build_seconds:.1f} s ({r.build_seconds / r.size:.2f} s "
        f"a tournament of {PLAYERS}); {len(r.pages)} pages ({generals} Generals"
        + (f", {others} Daimyo" if others else "")
        + f") loaded and connected through the balancer in {r.load_seconds:.1f} s; the "
        f"{len(r.deadlines)} deadlines within {fmt(spread * 1000)} of each other; pages still "
        f"fetching or behind the announced version when the window started: {r.busy_at_start}"
    )


def round_report(r: Round, args: argparse.Namespace) -> Figures:
    f = figures_of(r)
    round_header(r)
    fetches = [x for p in r.pages for x in p.fetches]
    reasons = Counter(x.reason for x in fetches)
    frames: Counter[str] = Counter()
    for p in r.pages:
        frames.update(p.frames)
    how = Counter(p.new_turn_how for p in r.pages if p.new_turn_at is not None)
    problems = [f"{p.seat.code}@{p.seat.tournament_id}: {x}" for p in r.pages for x in p.problems]
    statuses = r.logs.get("statuses", Counter())
    fetch_bad = Counter(x.status for x in fetches if x.status != 200)
    print(
        f"window: {r.cpu.get('wall', 0):.1f} s from the start of the orders ({r.window:g} s "
        "before the deadline) to the last page holding turn 2 (or giving up)\n"
        f"fetches of the state in it: {len(fetches)} ({dict(reasons) or 0}), "
        f"p50 / p99 / max {ms_pair([x.seconds for x in fetches], (50, 99, 100))}, "
        f"non-200 {dict(fetch_bad) or 0}\n"
        f"frames the pages received: {dict(frames) or 0}\n"
        f"how the pages got turn 2: {dict(how) or 0}\n"
        f"balancer answers by status: {dict(sorted(statuses.items())) or 0}; "
        f"503: {statuses.get('503', 0)}; channel layer over capacity / ChannelFull: "
        f"{r.logs.get('overflow', 0)}; tracebacks in the cluster's logs: "
        f"{r.logs.get('tracebacks', 0)}; page problems: {len(problems)}"
    )
    print(
        f"orders: {len(f.order_seconds)} sent, {f.sent_before} of them before the deadline"
        + (
            f", {len(f.sent_after)} after it (the clients' loop was late, by up to "
            f"{fmt(max(f.sent_after) * 1000)})"
            if f.sent_after
            else ""
        )
        + f"; Generals with no legal move (no order): {f.no_move}; answered in, p50 / p99 / "
        f"max: {ms_pair(f.order_seconds, (50, 99, 100))} (the {len(f.order_seconds_last)} "
        f"sent in the last {LAST_SECONDS:g} s: {ms_pair(f.order_seconds_last, (50, 99, 100))})"
    )
    for line in f.late_refused_detail[:5]:
        print(f"  refused as late: {line}")
    for line in r.logs.get("refused_orders", [])[:5]:
        print(f"  balancer: {line}")
    done = [x for x in r.resolutions.values() if x is not None]
    print(
        f"turn 1 resolved in {len(done)} of {r.size} tournaments, by "
        f"{dict(Counter(x.resolved_by for x in done)) or '—'}; how often each was logged: "
        f"{dict(Counter(x.times_logged for x in done)) or '—'}"
    )
    busy = r.cpu["clients"] / r.cpu["wall"] if r.cpu.get("wall") else 0.0
    if busy > 0.8:
        print(
            f"NOTE  the clients used {busy:.0%} of a core over the window: their own loop may "
            "have delayed the times measured"
        )
    for problem in problems[:8]:
        print(f"  {problem}")
    if len(problems) > 8:
        print(f"  … and {len(problems) - 8} more")
    return f


def summary_tables(rounds: list[Round], figures: list[Figures], args: argparse.Namespace) -> None:
    print("\n## Results\n")
    settle = rounds[0].settle if rounds else 0.0
    print(
        f"| tournaments | clients | resolution started after the deadline (settle window "
        f"{settle:g} s): p50 / max | every page has turn 2, from the deadline: p50 / p99 / max "
        "| pages that never got it | sent before the deadline, refused as late "
        "| orders: p50 / p99 / max | answered 200, carried out | turns resolved exactly once |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r, f in zip(rounds, figures, strict=True):
        late = (
            f"{len(f.late_refused)} (sent {fmt(min(f.late_refused) * 1000)} to "
            f"{fmt(max(f.late_refused) * 1000)} before it)"
            if f.late_refused
            else "0"
        )
        print(
            f"| {r.size} | {r.mode} | {ms_pair(f.lateness, (50, 100))} "
            f"| {ms_pair(f.new_state, (50, 99, 100))} | {f.never} of {len(r.pages)} | {late} "
            f"| {ms_pair(f.order_seconds, (50, 99, 100))} | {f.carried} of {f.acknowledged} "
            f"| {f.once} of {r.size} |"
        )

    print(
        "\nCPU-seconds per tournament-turn (utime + stime over the window, ÷ tournaments); "
        "the clients share this machine's cores and are not in the total"
    )
    names = [name for name, _ in GROUPS]
    print(
        "\n| tournaments | clients | window | cluster total | "
        + " | ".join(label for _, label in GROUPS)
        + " | of which the scratch database's backends | the benchmark's clients "
        "| cluster before the deadline / after it |"
    )
    print("|---|---|---|---|" + "---|" * len(GROUPS) + "---|---|---|")
    for r in rounds:
        n = r.size
        c = r.cpu
        print(
            f"| {n} | {r.mode} | {c['wall']:.1f} s | {c['cluster'] / n:.3f} | "
            + " | ".join(f"{c[name] / n:.3f}" for name in names)
            + f" | {c['scratch backends'] / n:.3f} | {c['clients'] / n:.3f} "
            f"(busy {c['clients'] / c['wall']:.0%}) "
            f"| {r.cpu_orders['cluster'] / n:.3f} / {r.cpu_after['cluster'] / n:.3f} |"
        )
    cores = os.cpu_count() or 1
    target_seconds = args.target_seconds or (args.window + args.target_pages)
    print()
    for r in rounds:
        per_turn = r.cpu["cluster"] / r.size
        after = r.cpu_after["cluster"] / r.size
        line = (
            f"{r.size} tournaments, {r.mode}: cores a league of N tournaments needs ≈ "
            f"CPU-s per tournament-turn × N / {target_seconds:g} s = {per_turn:.3f} × N / "
            f"{target_seconds:g}"
        )
        for n in sorted({r.size, *SIZES}):
            line += f"; N={n}: {per_turn * n / target_seconds:.2f}"
        print(line)
        print(
            f"  of which after the deadline: {after:.3f} CPU-s per tournament-turn within "
            f"{args.target_pages:g} s → N=100: {after * 100 / args.target_pages:.2f} cores "
            f"(this machine has {cores})"
        )


def verdicts(rounds: list[Round], figures: list[Figures], args: argparse.Namespace) -> None:
    print()
    for r, f in zip(rounds, figures, strict=True):
        tag = f"{r.size} tournaments, {r.mode}:"
        slack = r.settle + args.target_resolution
        verdict(
            len(f.lateness) == r.size and max(f.lateness, default=0) <= slack,
            f"{tag} every resolution started within {slack:g} s of its deadline (settle window "
            f"{r.settle:g} s + {args.target_resolution:g} s): "
            + (f"max {fmt(max(f.lateness) * 1000)}" if f.lateness else "none resolved"),
        )
        p99 = percentile(sorted(f.new_state), 99) if f.new_state else None
        verdict(
            p99 is not None and p99 <= args.target_pages and f.never == 0,
            f"{tag} every page holds turn 2 within {args.target_pages:g} s of the deadline "
            f"(p99), none without it: p99 "
            + (fmt(p99 * 1000) if p99 is not None else "—")
            + f", {f.never} never",
        )
        verdict(
            not f.late_refused,
            f"{tag} no order sent before the deadline refused as late: {len(f.late_refused)} "
            f"of {f.sent_before}",
        )
        o99 = percentile(sorted(f.order_seconds), 99) if f.order_seconds else None
        verdict(
            o99 is not None and o99 <= args.target_order_p99,
            f"{tag} orders answered within {fmt(args.target_order_p99 * 1000)} (p99): "
            + (fmt(o99 * 1000) if o99 is not None else "—"),
        )
        verdict(
            not f.not_carried and f.acknowledged > 0,
            f"{tag} every order answered 200 carried out: {f.carried} of {f.acknowledged}"
            + (f" (not: {', '.join(f.not_carried[:5])})" if f.not_carried else "")
            + (f"; other refusals {dict(f.other_refusals)}" if f.other_refusals else ""),
        )
        verdict(
            f.once == r.size == f.resolved,
            f"{tag} each turn resolved exactly once: {f.once} of {r.size}",
        )


# --- Main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--tournaments",
        type=int,
        nargs="+",
        default=list(SIZES),
        metavar="N",
        help=f"league sizes, each a fresh league of {PLAYERS}-player tournaments "
        f"(default {' '.join(map(str, SIZES))})",
    )
    parser.add_argument(
        "--clients",
        nargs="+",
        choices=MODES,
        default=list(MODES),
        help="the pages' behaviour, each size run with each in turn (default: both)",
    )
    parser.add_argument("--daimyo", action="store_true", help="open every Daimyo's page too")
    parser.add_argument(
        "--window",
        type=float,
        default=WINDOW,
        help=f"the orders come in the last this many seconds before the deadline ({WINDOW:g})",
    )
    parser.add_argument(
        "--give-up",
        type=float,
        default=GIVE_UP,
        help=f"a page without turn 2 this long after the deadline never got it ({GIVE_UP:g})",
    )
    parser.add_argument(
        "--target-pages",
        type=float,
        default=TARGET_PAGES_P99,
        metavar="S",
        help=f"target: every page holds turn 2 within S seconds of the deadline, p99 "
        f"({TARGET_PAGES_P99:g})",
    )
    parser.add_argument(
        "--target-resolution",
        type=float,
        default=TARGET_RESOLUTION_SLACK,
        metavar="S",
        help="target: every resolution starts within settle window + S seconds of the deadline "
        f"({TARGET_RESOLUTION_SLACK:g})",
    )
    parser.add_argument(
        "--target-order-p99",
        type=float,
        default=TARGET_ORDER_P99,
        metavar="S",
        help=f"target: orders answered within S seconds, p99 ({TARGET_ORDER_P99:g})",
    )
    parser.add_argument(
        "--target-seconds",
        type=float,
        default=None,
        metavar="S",
        help="the seconds a league's turn may take in the cores estimate (default: the window "
        "+ the pages' target)",
    )
    parser.add_argument(
        "--postgres",
        default=DEFAULT_POSTGRES,
        metavar="URL",
        help=f"a PostgreSQL server; the scratch database is made beside URL's ({DEFAULT_POSTGRES})",
    )
    parser.add_argument(
        "--scratch",
        default=f"sl5r_bench_league_{os.getpid()}",
        metavar="NAME",
        help="the scratch database's name (dropped afterwards)",
    )
    parser.add_argument(
        "--redis",
        default=DEFAULT_REDIS,
        metavar="URL",
        help=f"the cluster's Redis database, emptied before and after ({DEFAULT_REDIS})",
    )
    parser.add_argument(
        "--build-jobs",
        type=int,
        default=os.cpu_count() or 1,
        metavar="J",
        help="processes building a league's tournaments side by side (default: the cores)",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--keep-logs", action="store_true", help="keep the cluster's logs (kept anyway on trouble)"
    )
    parser.add_argument(
        "--cluster-command",
        default=f"{sys.executable} -m sl5r.cluster",
        help="a launcher with the interface of python -m sl5r.cluster",
    )
    args = parser.parse_args(argv)
    if min(args.tournaments) < 1:
        parser.error("--tournaments: at least 1")
    if args.window <= 0 or args.give_up <= 0:
        parser.error("--window and --give-up: more than 0 seconds")

    print(f"machine: {machine()}")
    fds = raise_fd_limit()
    workdir = Path(tempfile.mkdtemp(prefix="sl5r-league-"))
    database_url = scratch_create(args.postgres, args.scratch)
    redis_flush(args.redis)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "sl5r.settings",
        "DATABASE_URL": database_url,
        "REDIS_URL": args.redis,
        "SL5R_CLOCK": "celery",
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        # channels_redis says "over capacity" at INFO; Django's own loggers stay at WARNING.
        "LOG_LEVEL": "INFO",
        "DJANGO_LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    os.environ.update(env)
    cluster: Cluster | None = None
    status = 0
    rounds: list[Round] = []
    try:
        started = time.perf_counter()
        cluster = cluster_start(shlex.split(args.cluster_command), env, workdir)
        print(
            f"cluster: {args.cluster_command} ready in {time.perf_counter() - started:.1f} s; "
            f"balancer {cluster.info['balancer']}, ASGI {', '.join(cluster.info['asgi'])}; "
            f"database {args.scratch} (scratch) on {urlsplit(args.postgres).netloc}, "
            f"Redis {args.redis}; DEBUG off; file descriptors {fds}"
        )
        print(
            "one cluster for the whole run; each round a fresh league in it (the previous "
            "league's games ended first); clients, cluster, PostgreSQL and Redis share this "
            f"machine's {os.cpu_count()} cores"
        )
        for mode in args.clients:
            behaviour = LEAN if mode == "lean" else live_js_read()
            source = "" if mode == "lean" else " (static/js/live.js as it is now)"
            print(f"{mode} clients{source}: {behaviour.describe()}")
        import django

        django.setup()
        # The cluster logs at INFO (above); this process's own clients need not.
        logging.getLogger("httpx").setLevel(logging.WARNING)
        from django.conf import settings

        world = world_make()
        meter = CpuMeter(cluster, args.scratch, args.redis)
        missing = [name for name, _ in GROUPS if name not in meter.roots and name != "supervisord"]
        if missing:
            print(f"CPU: not found, counted as 0: {', '.join(missing)}")
        number = 0
        for size in args.tournaments:
            for mode in args.clients:
                number += 1
                load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
                print(f"\nround {number}: {size} tournaments, {mode} clients (load average {load})")
                built = time.perf_counter()
                seats = league_build(
                    world, size=size, label=f"League {number}", jobs=args.build_jobs
                )
                if not args.daimyo:
                    seats = [s for s in seats if s.role == "general"]
                result = Round(
                    size=size,
                    mode=mode,
                    seats=len(seats),
                    build_seconds=time.perf_counter() - built,
                    window=args.window,
                    settle=float(settings.SL5R_ORDER_SETTLE_SECONDS),
                )
                from django.db import connections

                connections.close_all()  # the rounds' own thread (Db) has its own
                sizes = log_sizes(cluster)
                asyncio.run(
                    round_run(world, cluster, meter, seats, result, args, args.seed + number)
                )
                result.logs = log_since(cluster, sizes)
                rounds.append(result)
                round_report(result, args)
        figures = [figures_of(r) for r in rounds]
        summary_tables(rounds, figures, args)
        verdicts(rounds, figures, args)
    except RuntimeError as error:
        print(f"\nstopped: {error}")
        status = 2
    finally:
        keep = status != 0 or args.keep_logs
        if cluster is not None:
            errors = errors_in_logs(cluster.info)
            code = cluster.stop()
            keep = keep or code != 0 or any(errors.values())
            print(
                f"\ncluster: stopped with SIGTERM, exit status {code}; tracebacks in its logs: "
                f"{errors or 'no logs listed'}"
            )
        if "django.db" in sys.modules:
            from django.db import connections

            connections.close_all()
        scratch_drop(args.postgres, args.scratch)
        redis_flush(args.redis)
        if keep:
            print(f"logs kept in {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
