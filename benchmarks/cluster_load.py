"""Load on the production shape: last-second orders, 1,000 viewers, a 4-hour game at speed.

A measurement, not a test: prints its figures and verdicts and exits 0 (2 when the cluster
could not be started or a part could not be run).

    .venv/bin/python benchmarks/cluster_load.py                      # all three parts, full size
    .venv/bin/python benchmarks/cluster_load.py --parts orders       # one part (or two)
    .venv/bin/python benchmarks/cluster_load.py --small              # every part, tiny sizes
    .venv/bin/python benchmarks/cluster_load.py --postgres URL --redis URL

The cluster is ``python -m sl5r.cluster`` (what ``make cluster`` runs): PostgreSQL, Redis,
two ASGI processes (Daphne) behind HAProxy, one Celery worker and one
beat, started on a scratch PostgreSQL database created beside ``--postgres``'s and dropped
afterwards, and on the Redis database of ``--redis`` (emptied before and after). The
benchmark process points ``DATABASE_URL`` at the same database and builds the tournaments
through the services, as judges would (``SL5R_CLOCK=celery`` here too, so the deadlines
it sets are sent to the worker). DEBUG is off, as in production.

1. **orders**: 480 Generals give their order in the last 5 seconds before their
   tournament's deadline, each at a random moment of that window (seeded), through the
   proxy, on a keep-alive connection opened when his page loaded. R1 allows at most four
   Generals per clan, so a 48-player tournament has 32 Generals (and 8 Daimyo, 8 Karo):
   480 Generals are 15 tournaments of 48. All deadlines fall at the same moment (the worst
   case: one league's turns in step). ``/healthz`` is sampled through the proxy at random
   moments of the same window. The Celery clock then resolves the turns, and each resolved
   turn's case file must hold every order that was answered 200.
2. **viewers**: 1,000 public pages of one 48-player tournament, each a websocket to one of
   the two ASGI processes in turn (direct, so that they are split evenly) and a keep-alive
   HTTP connection on which it fetched the state at load. Two rounds: the Celery clock
   resolves the turn at its deadline, then a judge resolves the next one (``resolve-now``
   through the proxy). Per page, the time until it holds the new turn, from the deadline
   (or the judge's POST) and from the start of the resolution (the turn's ``resolved_at``).
3. **replay**: a 4-hour tournament (16 turns of 15 minutes) with 1-second turns, on the
   Celery clock, its 32 Generals giving an order every turn as their phones do (an event
   says the turn was resolved: fetch the state, pick a destination, send it). Each turn's
   lateness after its deadline, and that each was resolved exactly once.

Everything runs on this machine: clients, cluster, PostgreSQL and Redis share its cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import secrets
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# ruff: noqa: E402 (these need ROOT on the path)
from benchmarks.clients import Http, WebSocket
from benchmarks.fanout import CONNECT_AT_ONCE, Client, fetch_state, open_client, raise_fd_limit
from benchmarks.order_burst import fmt, machine, percentile

DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
DEFAULT_REDIS = "redis://127.0.0.1:6379/11"
PARTS = ("orders", "viewers", "replay")
PLAYERS = 48  # R1: 4 Generals + Daimyo + Karo per clan, 32 Generals
WINDOW = 5.0  # the orders arrive in the last this many seconds before the deadline (--window)
LONG_TURN = 15 * 60  # turns that must not end during a part
EVENT_WAIT = 5.0  # a page without the new turn this long after the resolution fetches
GIVE_UP = 30.0  # ... and one without it this long after counts as left on the old turn
READY_SECONDS = 180.0  # the cluster migrates and loads the map before it is ready
REPLAY_ON_TIME = 1.0  # a turn resolved within this many seconds after deadline + settle is on time

T = TypeVar("T")


# --- The cluster ------------------------------------------------------------------------------


@dataclass
class Cluster:
    """``python -m sl5r.cluster`` as a subprocess in its own session, stopped by SIGTERM."""

    process: subprocess.Popen[bytes]
    workdir: Path
    log: Path
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def proxy_port(self) -> int:
        return port_of(self.info["balancer"])

    @property
    def asgi_ports(self) -> list[int]:
        return [port_of(url) for url in self.info["asgi"]]

    def tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no cluster log)"

    def stop(self) -> int | None:
        """SIGTERM, as ``make cluster`` is stopped; its exit status (None: it had to be killed)."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)  # its own session: only its children
                self.process.wait(timeout=30)
                return None
        return self.process.returncode


def port_of(url: str) -> int:
    port = urlsplit(url).port
    if port is None:
        raise ValueError(f"no port in {url!r}")
    return port


def cluster_start(command: list[str], env: dict[str, str], workdir: Path) -> Cluster:
    log = workdir / "cluster.log"
    argv = [*command, "--dir", str(workdir / "cluster"), "--port", "0", "--asgi-ports", "0,0"]
    argv += ["--no-demo"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    cluster = Cluster(process, workdir, log)
    info_file = workdir / "cluster" / "cluster.json"
    deadline = time.monotonic() + READY_SECONDS
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the cluster exited with {process.returncode}:\n{cluster.tail()}")
        if "cluster ready:" in log.read_text(errors="replace") and info_file.exists():
            cluster.info = json.loads(info_file.read_text())
            return cluster
        time.sleep(0.2)
    cluster.stop()
    raise RuntimeError(f"the cluster was not ready within {READY_SECONDS:.0f} s:\n{cluster.tail()}")


# --- The scratch database and Redis -----------------------------------------------------------


def scratch_create(server_url: str, name: str) -> str:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return urlunsplit(urlsplit(server_url)._replace(path=f"/{name}"))


def scratch_drop(server_url: str, name: str) -> None:
    import psycopg

    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def redis_flush(url: str) -> None:
    import redis

    client = redis.Redis.from_url(url)
    try:
        client.flushdb()
    finally:
        client.close()


# --- Tournaments through the services ---------------------------------------------------------


@dataclass
class World:
    judge: Any
    game_map: Any
    graph: Any
    key: str  # the judge's API key, for resolve-now


@dataclass
class General:
    tournament_id: int
    code: str
    token: str
    targets: list[str]  # legal one-step moves from the starting province


def world_make() -> World:
    from django.contrib.auth import get_user_model

    from referees.kernel.access import judge_key_create
    from sl5r.rules.mapgraph import rokugan_map
    from strategic_map.services import map_import

    graph = rokugan_map()
    game_map = map_import(slug="rokugan", data=graph.to_dict())
    judge = get_user_model().objects.create_user(username="bench-judge", password=None)
    return World(judge, game_map, graph, judge_key_create(user=judge, label="cluster_load").key)


def tournament_build(
    world: World,
    *,
    name: str,
    players: int,
    turn_seconds: int,
    turns_total: int | None,
    open_turn: bool,
    opened_at: datetime | None = None,
) -> tuple[Any, list[Any]]:
    """A tournament with R1's line-up for ``players``, positions declared, up to negotiation
    (``open_turn`` False) or turn 1 open, at ``opened_at`` if given; its players."""
    from django.utils import timezone

    from referees.services import (
        Actor,
        player_register,
        start_positions_declare,
        tournament_advance,
        tournament_create,
        tournament_lineup,
        tournament_start,
    )

    actor = Actor.of_user(world.judge)
    now = timezone.now()
    tournament = tournament_create(
        name=name,
        judge=world.judge,
        game_map=world.game_map,
        player_count=players,
        now=now,
        turn_seconds=turn_seconds,
        turns_total=turns_total,
        negotiation_seconds=LONG_TURN,
    )
    lineup = tournament_lineup(
        player_count=players,
        shortfall=tournament.shortfall,
        three_variant=tournament.three_variant,
    )
    registered = []
    for clan, roles in lineup.clans.items():
        for i, role in enumerate(roles, 1):
            registered.append(
                player_register(
                    tournament=tournament,
                    name=f"{clan.title()} {role.value} {i}",
                    clan=clan,
                    role=role.value,
                    actor=actor,
                    now=now,
                )
            )
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
    tournament = tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    if open_turn:
        tournament = tournament_advance(
            tournament_id=tournament.pk, actor=actor, now=opened_at or now
        )
    tournament.refresh_from_db()
    return tournament, registered


def generals_of(tournament: Any, registered: list[Any]) -> list[General]:
    from referees.services import player_token
    from sl5r.rules.turn import Order as RulesOrder
    from sl5r.rules.turn import order_check
    from strategic_map.selectors import campaign_game_map, campaign_open_turn, campaign_turn_state

    campaign = tournament.campaign
    turn = campaign_open_turn(campaign)
    assert turn is not None
    state = campaign_turn_state(campaign, turn=turn.number)
    graph = campaign_game_map(campaign)
    generals = []
    for player in registered:
        if player.army is None:
            continue
        code = player.army.code
        here = campaign.board["armies"][code]["province"]
        targets = [
            p
            for p in sorted(graph.neighbours[here])
            if order_check(state, RulesOrder(army=code, move=(p,))) is None
        ]
        generals.append(General(tournament.pk, code, player_token(player), targets))
    return generals


def deadline_set(world: World, tournament_id: int, at: datetime) -> datetime:
    """A judge moves the deadline to about ``at`` (whole seconds); the deadline now."""
    from django.utils import timezone

    from referees.models import Tournament
    from referees.services import Actor, clock_extend

    tournament = Tournament.objects.get(pk=tournament_id)
    assert tournament.deadline is not None
    seconds = round((at - tournament.deadline).total_seconds())
    if seconds:
        tournament = clock_extend(
            tournament_id=tournament_id,
            seconds=seconds,
            actor=Actor.of_user(world.judge),
            now=timezone.now(),
        )
    assert tournament.deadline is not None
    deadline: datetime = tournament.deadline
    return deadline


def tournaments_end(world: World, tournament_ids: Sequence[int]) -> None:
    """The judge ends the games, so that their next deadlines do not fall into other parts."""
    from django.utils import timezone

    from referees.services import Actor, TournamentError, clock_end

    for pk in tournament_ids:
        with contextlib.suppress(TournamentError):  # already finished
            clock_end(tournament_id=pk, actor=Actor.of_user(world.judge), now=timezone.now())


@dataclass
class Resolution:
    tournament_id: int
    number: int
    deadline: datetime | None
    resolved_at: datetime | None
    resolved_by: str
    times_logged: int  # "turn_resolved" log entries for this turn: exactly once means 1
    case_orders: dict[str, list[str]]  # army → path, as carried out

    @property
    def lateness(self) -> float | None:
        if self.deadline is None or self.resolved_at is None:
            return None
        return (self.resolved_at - self.deadline).total_seconds()


def resolutions_read(tournament_id: int) -> dict[int, Resolution]:
    """Every resolved turn of the tournament, with how many times its resolution was logged."""
    from referees.models import LogEntry
    from strategic_map.models import Turn

    logged = Counter(
        LogEntry.objects.filter(tournament_id=tournament_id, action="turn_resolved").values_list(
            "turn", flat=True
        )
    )
    out = {}
    for turn in Turn.objects.filter(
        campaign__tournament=tournament_id, status=Turn.Status.RESOLVED
    ).order_by("number"):
        orders = {o["army"]: list(o.get("move", [])) for o in (turn.case or {}).get("orders", [])}
        out[turn.number] = Resolution(
            tournament_id,
            turn.number,
            turn.deadline,
            turn.resolved_at,
            turn.resolved_by,
            logged[turn.number],
            orders,
        )
    return out


def tournament_phase(tournament_id: int) -> str:
    from referees.models import Tournament

    phase: str = Tournament.objects.values_list("phase", flat=True).get(pk=tournament_id)
    return phase


def wait_resolved(tournament_ids: Sequence[int], number: int, timeout: float) -> bool:
    from strategic_map.models import Turn

    end = time.monotonic() + timeout
    while time.monotonic() < end:
        done = Turn.objects.filter(
            campaign__tournament__in=tournament_ids, number=number, status=Turn.Status.RESOLVED
        ).count()
        if done == len(tournament_ids):
            return True
        time.sleep(0.2)
    return False


# --- Shared helpers ---------------------------------------------------------------------------


class Db:
    """The ORM from inside the event loop: one thread of its own, one connection."""

    def __init__(self) -> None:
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="db")

    async def __call__(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.get_running_loop().run_in_executor(
            self.pool, lambda: fn(*args, **kwargs)
        )

    def close(self) -> None:
        from django.db import connections

        self.pool.submit(connections.close_all).result(timeout=30)
        self.pool.shutdown()


async def gathered(coroutines: Sequence[Awaitable[T]], at_once: int) -> list[T]:
    gate = asyncio.Semaphore(at_once)

    async def one(coroutine: Awaitable[T]) -> T:
        async with gate:
            return await coroutine

    return await asyncio.gather(*(one(c) for c in coroutines))


def pct_row(values: Sequence[float]) -> str:
    """p50 / p90 / p99 / max of seconds, in ms."""
    ordered = sorted(v * 1000 for v in values)
    if not ordered:
        return "— | — | — | —"
    return " | ".join(fmt(percentile(ordered, p)) for p in (50, 90, 99, 100))


def ms_or_dash(seconds: Sequence[float]) -> str:
    return fmt(seconds[0] * 1000) if seconds else "—"


def verdict(ok: bool, text: str) -> None:
    print(("PASS" if ok else "MISS") + "  " + text)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}", "Accept": "application/json"}


# --- Part 1: the orders of 480 Generals in the last 5 seconds ---------------------------------


@dataclass
class Sent:
    """One request: when it left (wall clock), how long the answer took, what it was."""

    at: float
    seconds: float
    status: int
    body: bytes


async def send_at(
    http: Http, when: float, method: str, path: str, headers: dict[str, str], body: bytes = b""
) -> Sent:
    await asyncio.sleep(max(0.0, when - time.time()))
    at = time.time()
    start = time.perf_counter()
    try:
        status, answer = await http.request(method, path, headers, body)
    except OSError as error:  # the clients' ConnectionError: no answer
        status, answer = 0, repr(error).encode()
    return Sent(at, time.perf_counter() - start, status, answer)


async def orders_run(
    world: World,
    generals: list[General],
    warmup: list[General],
    proxy: int,
    healthz: int,
    seed: int,
    window: float,
) -> dict[str, Any]:
    db = Db()
    rng = random.Random(seed)
    try:
        # A server that has been up for a while: both ASGI processes have served orders
        # before (the first order in a process reads the map and warms its caches).
        warm = [Http(proxy) for _ in warmup]
        await gathered(
            [
                send_at(
                    http,
                    0.0,
                    "PUT",
                    f"/api/tournaments/{g.tournament_id}/orders/mine",
                    {**bearer(g.token), "Content-Type": "application/json"},
                    json.dumps({"kind": "move", "path": g.targets[:1]}).encode(),
                )
                for g, http in zip(warmup, warm, strict=True)
            ],
            8,
        )
        for http in warm:
            await http.close()
        phones = [Http(proxy) for _ in generals]
        probes = [Http(proxy) for _ in range(healthz)]

        async def page_load(general: General, http: Http) -> int:
            path = f"/api/tournaments/{general.tournament_id}/state"
            status, _ = await http.request("GET", path, bearer(general.token))
            return status

        started = time.perf_counter()
        loads = await gathered(
            [page_load(g, h) for g, h in zip(generals, phones, strict=True)], CONNECT_AT_ONCE
        )
        await gathered([p.connect() for p in probes], CONNECT_AT_ONCE)
        load_seconds = time.perf_counter() - started
        if any(s != 200 for s in loads):
            raise RuntimeError(f"page loads: {Counter(loads)}")

        # One deadline for all, far enough ahead for every send to be scheduled in time.
        from django.utils import timezone

        target = timezone.now() + timedelta(seconds=window + 3)
        tournament_ids = sorted({g.tournament_id for g in generals})
        deadlines = {}
        for pk in tournament_ids:
            deadlines[pk] = await db(deadline_set, world, pk, target)
        sends = []
        plan = []
        for general, http in zip(generals, phones, strict=True):
            due = deadlines[general.tournament_id].timestamp() - rng.uniform(0, window)
            target_province = rng.choice(general.targets)
            body = json.dumps({"kind": "move", "path": [target_province], "turn": 1}).encode()
            plan.append((general, target_province))
            sends.append(
                send_at(
                    http,
                    due,
                    "PUT",
                    f"/api/tournaments/{general.tournament_id}/orders/mine",
                    {**bearer(general.token), "Content-Type": "application/json"},
                    body,
                )
            )
        first = min(d.timestamp() for d in deadlines.values()) - window
        last = max(d.timestamp() for d in deadlines.values())
        checks = [send_at(p, rng.uniform(first, last), "GET", "/healthz", {}) for p in probes]
        results = await asyncio.gather(*sends, *checks)
        orders, healthz_results = results[: len(sends)], results[len(sends) :]
        for http in phones + probes:
            await http.close()
        await db(wait_resolved, tournament_ids, 1, 120.0)
        resolutions = {}
        for pk in tournament_ids:
            resolutions[pk] = (await db(resolutions_read, pk)).get(1)
        misplaced = await db(orders_in_turn, tournament_ids, 2)
        await db(tournaments_end, world, [*tournament_ids, *{g.tournament_id for g in warmup}])
    finally:
        db.close()
    return {
        "window": window,
        "plan": plan,
        "orders": orders,
        "healthz": healthz_results,
        "deadlines": deadlines,
        "resolutions": resolutions,
        "misplaced": misplaced,
        "load_seconds": load_seconds,
    }


def orders_in_turn(tournament_ids: Sequence[int], number: int) -> int:
    from strategic_map.models import Order

    count: int = Order.objects.filter(
        turn__campaign__tournament__in=tournament_ids, turn__number=number
    ).count()
    return count


def orders_report(generals: list[General], result: dict[str, Any]) -> None:
    plan: list[tuple[General, str]] = result["plan"]
    orders: list[Sent] = result["orders"]
    checks: list[Sent] = result["healthz"]
    deadlines: dict[int, datetime] = result["deadlines"]
    resolutions: dict[int, Resolution | None] = result["resolutions"]
    tournaments = len(deadlines)
    spread = (max(deadlines.values()) - min(deadlines.values())).total_seconds()
    print(
        f"{len(generals)} Generals: {tournaments} tournaments of {PLAYERS} players (R1: "
        f"4 Generals, a Daimyo and a Karo per clan); their pages loaded (GET state) and "
        f"connections opened in {result['load_seconds']:.1f} s; the {tournaments} deadlines "
        f"within {fmt(spread * 1000)} of each other"
    )
    print(
        f"each order sent at a random moment of the last {result['window']:g} s before its "
        f"deadline (seeded), through the proxy; {len(checks)} GET /healthz at random moments "
        "of the same window\n"
    )
    print("| requests | sent | p50 | p90 | p99 | max | non-200 |")
    print("|---|---|---|---|---|---|---|")
    for label, series in (("`PUT …/orders/mine`", orders), ("`GET /healthz`", checks)):
        bad = Counter(s.status for s in series if s.status != 200)
        print(
            f"| {label} | {len(series)} | {pct_row([s.seconds for s in series])} "
            f"| {dict(bad) or 0} |"
        )
    o50 = statistics.median(s.seconds for s in orders)
    h50 = statistics.median(s.seconds for s in checks)
    o99 = percentile(sorted(s.seconds for s in orders), 99)
    h99 = percentile(sorted(s.seconds for s in checks), 99)
    print(
        f"\nratio orders / healthz in the same window: p50 ×{o50 / h50:.1f}, p99 ×{o99 / h99:.1f}"
    )
    every = orders + checks
    span = max(s.at + s.seconds for s in every) - min(s.at for s in every)
    print(
        f"throughput: {len(every)} requests answered in {span:.2f} s from the first sent to the "
        f"last answered, {len(every) / span:.0f} a second (offered: "
        f"{len(every) / result['window']:.0f} a second)"
    )

    # An order answered 200 must be in the case file its turn was resolved from; one refused
    # as late must not be.
    stored = missing = late = refused = sent_early = 0
    late_margins: list[float] = []
    problems: list[str] = []
    for (general, target), sent in zip(plan, orders, strict=True):
        resolution = resolutions.get(general.tournament_id)
        carried = {} if resolution is None else resolution.case_orders
        margin = deadlines[general.tournament_id].timestamp() - sent.at
        sent_early += margin > 0
        where = f"{general.code} of tournament {general.tournament_id}"
        if sent.status == 200:
            if carried.get(general.code) == [target]:
                stored += 1
            else:
                missing += 1
                problems.append(f"{where}: answered 200, not carried out")
        elif sent.status == 409 and b'"late"' in sent.body:
            late += 1
            late_margins.append(margin)
            if general.code in carried:
                problems.append(f"{where}: refused as late, yet carried out")
        else:
            refused += 1
            problems.append(f"{where}: {sent.status} {sent.body[:160].decode(errors='replace')}")
    print(
        f"sent before the deadline: {sent_early} of {len(orders)}; answered 200 and carried "
        f"out: {stored}; answered 200 but not carried out: {missing}; refused as late (409, "
        f"reached the server after the deadline): {late}"
        + (
            f", sent {fmt(min(late_margins) * 1000)} to {fmt(max(late_margins) * 1000)} before it"
            if late_margins
            else ""
        )
        + f"; other refusals: {refused}; orders stored into turn 2: {result['misplaced']}"
    )
    for problem in problems[:10]:
        print(f"  {problem}")
    if len(problems) > 10:
        print(f"  … and {len(problems) - 10} more")
    done = [r for r in resolutions.values() if r is not None]
    lateness = sorted(r.lateness for r in done if r.lateness is not None)
    once = len(done) == tournaments and all(r.times_logged == 1 for r in done)
    print(
        f"turn 1 resolved in {len(done)} of {tournaments} tournaments (by "
        f"{dict(Counter(r.resolved_by for r in done))}); each resolution's start after its "
        "deadline: "
        + (
            f"median {fmt(statistics.median(lateness) * 1000)}, max {fmt(lateness[-1] * 1000)}"
            if lateness
            else "—"
        )
    )
    print()
    verdict(
        missing == 0 and not problems and result["misplaced"] == 0,
        f"every order answered 200 was carried out, none other: {stored} of {stored + missing}",
    )
    verdict(
        stored == sent_early,
        f"every order sent before the deadline was stored: {stored} of {sent_early} "
        f"({late} refused as late, {refused} otherwise)",
    )
    verdict(once, f"each turn resolved exactly once: {len(done)} of {tournaments} turns")
    print(
        f"INFO  orders p50 {fmt(o50 * 1000)}, p99 {fmt(o99 * 1000)}; /healthz p50 "
        f"{fmt(h50 * 1000)}, p99 {fmt(h99 * 1000)}; ratio p50 ×{o50 / h50:.1f}, "
        f"p99 ×{o99 / h99:.1f} (no target set)"
    )


# --- Part 2: 1,000 viewers learn of the new turn ------------------------------------------------


@dataclass
class Held:
    """When a page held the new turn (wall clock), and how it got it."""

    at: float | None  # None: still on the old turn when it gave up
    how: str  # "event" (the state came in the event), "fetched" (an event, then GET),
    # "resynced" (no usable event: the safety net or a reopened socket, then GET), "stale"
    port: int


async def hold_new_turn(
    client: Client, tournament_id: int, old_turn: int, safety_at: float
) -> Held:
    """What live.js does until the page shows a turn after ``old_turn``.

    An event with a newer version: take the state it carries, else fetch; events about
    other changes (a clock change, a battle table) only move the version on. Nothing by
    ``safety_at``: fetch anyway (the page's safety net). A socket the server drops is
    reopened after 1 s and the state fetched.
    """
    give_up_at = safety_at + GIVE_UP
    netted = False

    async def fetched(how: str) -> Held | None:
        state = await fetch_state(client.http, tournament_id)
        client.version = max(client.version, state["tournament"]["version"])
        if state["tournament"]["turn"] > old_turn:
            return Held(time.time(), how, client.port)
        return None

    receiving = asyncio.ensure_future(client.ws.receive())
    try:
        while time.time() < give_up_at:
            wait = (give_up_at if netted else safety_at) - time.time()
            done, _ = await asyncio.wait({receiving}, timeout=max(0.0, wait))
            if not done:
                netted = True
                if held := await fetched("resynced"):
                    return held
                continue
            message = receiving.result()
            if message is None:
                await asyncio.sleep(1)
                try:
                    client.ws = await WebSocket.connect(
                        client.port, f"/ws/tournaments/{tournament_id}/"
                    )
                except (OSError, ConnectionError):
                    receiving = asyncio.ensure_future(asyncio.sleep(1, result=None))
                    continue
                receiving = asyncio.ensure_future(client.ws.receive())
                if held := await fetched("resynced"):
                    return held
                continue
            receiving = asyncio.ensure_future(client.ws.receive())
            if message.get("version", 0) <= client.version:
                continue
            if message["type"] == "event":
                state = message.get("state")
                if isinstance(state, dict) and state["tournament"]["version"] >= message["version"]:
                    client.version = state["tournament"]["version"]
                    if state["tournament"]["turn"] > old_turn:
                        return Held(time.time(), "event", client.port)
                    continue
                if held := await fetched("fetched"):
                    return held
            elif message["type"] == "hello" and (held := await fetched("resynced")):
                return held
        return Held(None, "stale", client.port)
    finally:
        receiving.cancel()


async def viewers_run(
    world: World, tournament_id: int, ports: list[int], proxy: int, count: int
) -> dict[str, Any]:
    from django.utils import timezone

    db = Db()
    try:
        gate = asyncio.Semaphore(CONNECT_AT_ONCE)
        started = time.perf_counter()
        clients = await asyncio.gather(
            *(open_client(ports[i % len(ports)], tournament_id, gate) for i in range(count))
        )
        connect_seconds = time.perf_counter() - started
        # (how it was resolved, the reference time, the turn, each page, the POST's time)
        rounds: list[tuple[str, float, Resolution | None, list[Held], float | None]] = []

        # Round 1: the Celery clock resolves the turn at its deadline.
        old_turn = max(c.turn for c in clients)
        deadline = await db(
            deadline_set, world, tournament_id, timezone.now() + timedelta(seconds=3)
        )
        reference = deadline.timestamp()
        held = await asyncio.gather(
            *(hold_new_turn(c, tournament_id, old_turn, reference + EVENT_WAIT) for c in clients)
        )
        resolution = (await db(resolutions_read, tournament_id)).get(old_turn)
        rounds.append(("the Celery clock, at the deadline", reference, resolution, held, None))

        # Round 2: a judge resolves the next turn now, through the proxy.
        await asyncio.sleep(1)
        old_turn += 1
        judge = Http(proxy)
        reference = time.time()
        watchers = [
            asyncio.ensure_future(hold_new_turn(c, tournament_id, old_turn, reference + EVENT_WAIT))
            for c in clients
        ]
        start = time.perf_counter()
        status, body = await judge.request(
            "POST",
            f"/api/tournaments/{tournament_id}/clock/resolve-now?turn={old_turn}",
            bearer(world.key),
        )
        posted = time.perf_counter() - start
        await judge.close()
        if status != 200:
            raise RuntimeError(f"resolve-now: HTTP {status}: {body[:300]!r}")
        held = await asyncio.gather(*watchers)
        resolution = (await db(resolutions_read, tournament_id)).get(old_turn)
        rounds.append(("a judge's resolve-now", reference, resolution, held, posted))

        for client in clients:
            await client.ws.close()
            await client.http.close()
        await db(tournaments_end, world, [tournament_id])
    finally:
        db.close()
    return {"clients": count, "ports": ports, "connect_seconds": connect_seconds, "rounds": rounds}


def viewers_report(result: dict[str, Any]) -> None:
    count, ports = result["clients"], result["ports"]
    per_port = Counter(i % len(ports) for i in range(count))
    print(
        f"{count:,} public pages of one {PLAYERS}-player tournament, websockets split "
        f"{' / '.join(str(per_port[i]) for i in range(len(ports)))} over the {len(ports)} ASGI "
        f"processes (direct); all connected and loaded in {result['connect_seconds']:.1f} s\n"
    )
    print(
        "| resolved by | from | p50 | p90 | p99 | max (all have it) | by the event | fetched "
        "| resynced | on the old turn |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    stale_total = 0
    notes = []
    for label, reference, resolution, held, posted in result["rounds"]:
        got = [h for h in held if h.at is not None]
        how = Counter(h.how for h in held)
        stale_total += how["stale"]
        rows = [("deadline" if posted is None else "the POST", reference)]
        if resolution is not None and resolution.resolved_at is not None:
            rows.append(("start of the resolution", resolution.resolved_at.timestamp()))
        for name, start in rows:
            print(
                f"| {label} | {name} | {pct_row([h.at - start for h in got if h.at])} "
                f"| {how['event']} | {how['fetched']} | {how['resynced']} | {how['stale']} |"
            )
        if resolution is not None:
            notes.append(
                f"{label}: turn {resolution.number} resolved by {resolution.resolved_by!r}, "
                f"{resolution.times_logged}× in the log"
                + (
                    f", its resolution started {fmt(resolution.lateness * 1000)} after the deadline"
                    if posted is None and resolution.lateness is not None
                    else ""
                )
                + (f"; the POST was answered in {fmt(posted * 1000)}" if posted else "")
            )
        for i, port in enumerate(ports):
            mine = [h.at - reference for h in got if h.port == port and h.at]
            if mine:
                notes.append(
                    f"  ASGI process {i + 1} (:{port}), from the {rows[0][0]}: "
                    f"p99 {fmt(percentile(sorted(mine), 99) * 1000)}, max {fmt(max(mine) * 1000)}"
                )
    print()
    for note in notes:
        print(note)
    print()
    verdict(stale_total == 0, f"every page held the new turn in every round: {stale_total} did not")


# --- Part 3: a 4-hour tournament with 1-second turns --------------------------------------------


@dataclass
class Given:
    turn: int
    code: str
    path: list[str]
    sent: Sent


@dataclass
class Phone:
    """A General's phone in the replay: what it sent, and when it heard of each new turn."""

    code: str = ""
    orders: list[Given] = field(default_factory=list)
    heard: dict[int, float] = field(default_factory=dict)  # turn resolved → wall clock
    fetches: int = 0
    problems: list[str] = field(default_factory=list)


async def general_play(
    general: General,
    ws_port: int,
    proxy: int,
    graph: Any,
    rng: random.Random,
    connected: asyncio.Event,
    until: float,
    quiet: float,
) -> Phone:
    """A General's phone: on each new turn, fetch the state and give a move order.

    As live.js, it fetches when an event announces a version newer than its state's, one
    fetch at a time (events heard meanwhile lead to one more fetch, not one each), and
    without any event for ``quiet`` seconds (the safety net). Unlike live.js it wakes only
    for the events that open a turn (``phase``, ``turn_resolved``) and not for the other
    Generals' ``order`` events: at 15-minute turns those cost a few requests a minute, at
    1-second turns 900 times the real rate.
    """
    phone = Phone(code=general.code)
    tid = general.tournament_id
    path = f"/ws/tournaments/{tid}/?token={quote(general.token)}"
    blocked = graph.blocked_provinces(())
    ws = await WebSocket.connect(ws_port, path)
    hello = await ws.receive()
    if hello is None or hello.get("type") != "hello":
        raise RuntimeError(f"{general.code}: no hello ({hello})")
    http = Http(proxy)
    await http.connect()
    heard = 0  # the newest version announced by an event that opens a turn
    wake = asyncio.Event()

    async def listen() -> None:
        """Read the socket all the time, so that arrivals are timed when they happen."""
        nonlocal ws, heard
        while True:
            message = await ws.receive()
            if message is None:
                phone.problems.append("socket dropped")
                await asyncio.sleep(1)
                with contextlib.suppress(OSError, ConnectionError):
                    ws = await WebSocket.connect(ws_port, path)
                continue
            if message.get("kind") == "turn_resolved" and "turn" in message:
                phone.heard.setdefault(message["turn"], time.time())
            if message.get("type") == "hello" or message.get("kind") in ("turn_resolved", "phase"):
                heard = max(heard, message.get("version", 0))
                wake.set()

    listener = asyncio.ensure_future(listen())
    connected.set()
    version = -1  # the version of the state last fetched
    ordered: set[int] = set()
    try:
        while time.time() < until:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(wake.wait(), quiet)
            woken = wake.is_set()
            wake.clear()
            if woken and heard <= version:
                continue
            status, body = await http.request(
                "GET", f"/api/tournaments/{tid}/state", bearer(general.token)
            )
            phone.fetches += 1
            if status != 200:
                phone.problems.append(f"state: {status}")
                continue
            state = json.loads(body)
            version = state["tournament"]["version"]
            phase, turn = state["tournament"]["clock"]["phase"], state["tournament"]["turn"]
            if phase == "finished":
                break
            if phase != "running" or turn in ordered:
                continue
            army = next((a for a in state["armies"] if a["id"] == general.code), None)
            if army is None or army["in_battle"] or army["destroyed"]:
                continue
            move = [rng.choice(sorted(set(graph.neighbours[army["province"]]) - blocked))]
            ordered.add(turn)
            sent = await send_at(
                http,
                0.0,
                "PUT",
                f"/api/tournaments/{tid}/orders/mine",
                {**bearer(general.token), "Content-Type": "application/json"},
                json.dumps({"kind": "move", "path": move, "turn": turn}).encode(),
            )
            phone.orders.append(Given(turn, general.code, move, sent))
    finally:
        listener.cancel()
        await ws.close()
        await http.close()
    return phone


async def replay_run(
    world: World,
    tournament_id: int,
    generals: list[General],
    ports: list[int],
    proxy: int,
    turns: int,
    turn_seconds: int,
    seed: int,
) -> dict[str, Any]:
    from django.utils import timezone

    from referees.services import Actor, tournament_advance

    db = Db()
    try:
        until = time.time() + 120 + turns * turn_seconds * 4
        events = [asyncio.Event() for _ in generals]
        players = [
            asyncio.ensure_future(
                general_play(
                    g,
                    ports[i % len(ports)],
                    proxy,
                    world.graph,
                    random.Random(seed * 1000 + i),
                    events[i],
                    until,
                    quiet=max(3.0, 3 * turn_seconds),
                )
            )
            for i, g in enumerate(generals)
        ]
        await asyncio.wait_for(asyncio.gather(*(e.wait() for e in events)), 60)
        started = time.time()
        await db(
            lambda: tournament_advance(
                tournament_id=tournament_id, actor=Actor.of_user(world.judge), now=timezone.now()
            )
        )  # negotiation → turn 1 open: the clock runs from here
        phones = await asyncio.gather(*players)
        finished = time.time()
        resolutions = await db(resolutions_read, tournament_id)
        final = await db(tournament_phase, tournament_id)
    finally:
        db.close()
    return {
        "phones": phones,
        "resolutions": resolutions,
        "phase": final,
        "seconds": finished - started,
        "turns": turns,
        "turn_seconds": turn_seconds,
    }


def replay_report(result: dict[str, Any], generals: int) -> None:
    from django.conf import settings

    settle: float = settings.SL5R_ORDER_SETTLE_SECONDS
    resolutions: dict[int, Resolution] = result["resolutions"]
    phones: list[Phone] = result["phones"]
    turns, turn_seconds = result["turns"], result["turn_seconds"]
    print(
        f"one {PLAYERS}-player tournament, {generals} Generals ordering every turn, "
        f"{turns} turns of {turn_seconds} s (a {turns * 15 // 60}-hour game of 15-minute "
        f"turns at ×{900 // turn_seconds}); played in {result['seconds']:.1f} s; final phase "
        f"{result['phase']!r}\n"
    )
    given: dict[int, list[Given]] = {}
    for phone in phones:
        for g in phone.orders:
            given.setdefault(g.turn, []).append(g)
    print(
        f"| turn | resolution started after the deadline + {settle:g} s settle window "
        "| by | logged | orders 200 "
        "| carried out | late (409) | other | phones heard it, after the deadline: first / last |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    lateness = []
    not_once = []
    lost = 0
    for number in range(1, turns + 1):
        r = resolutions.get(number)
        mine = given.get(number, [])
        ok = [g for g in mine if g.sent.status == 200]
        late = sum(1 for g in mine if g.sent.status == 409 and b'"late"' in g.sent.body)
        other = len(mine) - len(ok) - late
        if r is None:
            print(f"| {number} | not resolved | | | {len(ok)} | | {late} | {other} | |")
            not_once.append(number)
            continue
        carried = sum(1 for g in ok if r.case_orders.get(g.code) == g.path)
        lost += len(ok) - carried
        if r.times_logged != 1:
            not_once.append(number)
        deadline = r.deadline.timestamp() if r.deadline else 0.0
        heard = sorted(p.heard[number] - deadline for p in phones if number in p.heard)
        # The clock may not resolve before the settle window has passed (R4: orders that
        # reached the server before the deadline are still being stored), so a turn is on
        # time when its resolution starts soon after deadline + window.
        late_s = r.lateness - settle if r.lateness is not None else None
        if late_s is not None:
            lateness.append(late_s)
        print(
            f"| {number} | {fmt(late_s * 1000) if late_s is not None else '—'} | {r.resolved_by} "
            f"| {r.times_logged}× | {len(ok)} | {carried} | {late} | {other} "
            f"| {ms_or_dash(heard[:1])} / {ms_or_dash(heard[-1:])} |"
        )
    problems = [f"{p.code}: {x}" for p in phones for x in p.problems]
    print()
    if lateness:
        ordered = sorted(s * 1000 for s in lateness)
        print(
            f"lateness of the resolutions after deadline + {settle:g} s: median "
            f"{fmt(statistics.median(ordered))}, p99 {fmt(percentile(ordered, 99))}, "
            f"max {fmt(ordered[-1])}"
        )
    print(
        f"phones: {sum(p.fetches for p in phones)} state fetches, "
        f"{sum(len(p.orders) for p in phones)} orders; problems: {len(problems)}"
    )
    for problem in problems[:10]:
        print(f"  {problem}")
    print()
    on_time = len(lateness) == turns and all(s < REPLAY_ON_TIME for s in lateness)
    verdict(
        on_time,
        f"every turn resolved within {REPLAY_ON_TIME:g} s of deadline + {settle:g} s: "
        + (f"max {fmt(max(lateness) * 1000)}" if lateness else "none resolved"),
    )
    verdict(
        not not_once and len(resolutions) == turns,
        f"each of the {turns} turns resolved exactly once"
        + (f" (not: turns {not_once})" if not_once else ""),
    )
    verdict(lost == 0, f"every order answered 200 was carried out in its turn: {lost} missing")
    verdict(result["phase"] == "finished", f"the game ended after turn {turns}")


# --- Main ---------------------------------------------------------------------------------------


def errors_in_logs(info: dict[str, Any]) -> dict[str, int]:
    """Tracebacks each process of the cluster logged (``cluster.json``'s ``logs``)."""
    logs = info.get("logs") or {}
    named = logs.items() if isinstance(logs, dict) else ((Path(p).stem, p) for p in logs)
    counts = {}
    for name, path in named:
        try:
            counts[str(name)] = Path(path).read_text(errors="replace").count("Traceback")
        except OSError:
            counts[str(name)] = -1
    return counts


def part_orders(world: World, cluster: Cluster, args: argparse.Namespace) -> None:
    from django.utils import timezone

    started = time.perf_counter()
    # Turn 1 opens at the same moment everywhere, so that a judge's whole-second change of
    # the deadlines (clock_extend) brings them all to the same instant.
    opened_at = timezone.now()
    generals = []
    for n in range(1, args.tournaments + 1):
        tournament, registered = tournament_build(
            world,
            name=f"Orders {n}",
            players=PLAYERS,
            turn_seconds=LONG_TURN,
            turns_total=None,
            open_turn=True,
            opened_at=opened_at,
        )
        generals += generals_of(tournament, registered)
    warmup = generals_of(
        *tournament_build(
            world,
            name="Orders warm-up",
            players=PLAYERS,
            turn_seconds=LONG_TURN,
            turns_total=None,
            open_turn=True,
        )
    )
    print(f"set-up through the services: {time.perf_counter() - started:.1f} s")
    result = asyncio.run(
        orders_run(
            world, generals, warmup, cluster.proxy_port, args.healthz, args.seed, args.window
        )
    )
    orders_report(generals, result)


def part_viewers(world: World, cluster: Cluster, args: argparse.Namespace) -> None:
    tournament, _ = tournament_build(
        world,
        name="Viewers",
        players=PLAYERS,
        turn_seconds=LONG_TURN,
        turns_total=None,
        open_turn=True,
    )
    result = asyncio.run(
        viewers_run(world, tournament.pk, cluster.asgi_ports, cluster.proxy_port, args.viewers)
    )
    viewers_report(result)


def part_replay(world: World, cluster: Cluster, args: argparse.Namespace) -> None:
    from referees.services import player_token

    tournament, registered = tournament_build(
        world,
        name="Replay",
        players=PLAYERS,
        turn_seconds=args.turn_seconds,
        turns_total=args.turns,
        open_turn=False,
    )
    generals = [
        General(tournament.pk, p.army.code, player_token(p), []) for p in registered if p.army
    ]
    result = asyncio.run(
        replay_run(
            world,
            tournament.pk,
            generals,
            cluster.asgi_ports,
            cluster.proxy_port,
            args.turns,
            args.turn_seconds,
            args.seed,
        )
    )
    replay_report(result, len(generals))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    parser.add_argument(
        "--small",
        action="store_true",
        help="tiny sizes for a quick look: 1 tournament (32 Generals), 20 /healthz samples, "
        "50 viewers, 4 turns",
    )
    parser.add_argument(
        "--tournaments",
        type=int,
        help=f"{PLAYERS}-player tournaments whose Generals give orders (default 15: 480)",
    )
    parser.add_argument("--healthz", type=int, help="/healthz samples in the window (100)")
    parser.add_argument(
        "--window",
        type=float,
        default=WINDOW,
        help=f"the orders come in the last this many seconds before the deadline ({WINDOW:g})",
    )
    parser.add_argument("--viewers", type=int, help="websocket viewers (default 1,000)")
    parser.add_argument("--turns", type=int, help="turns of the replayed game (default 16)")
    parser.add_argument("--turn-seconds", type=int, default=1, help="its turn length (1)")
    parser.add_argument(
        "--postgres",
        default=DEFAULT_POSTGRES,
        metavar="URL",
        help=f"a PostgreSQL server; the scratch database is made beside URL's ({DEFAULT_POSTGRES})",
    )
    parser.add_argument(
        "--scratch",
        default=f"sl5r_bench_cluster_{os.getpid()}",
        metavar="NAME",
        help="the scratch database's name (dropped afterwards)",
    )
    parser.add_argument(
        "--redis",
        default=DEFAULT_REDIS,
        metavar="URL",
        help=f"the cluster's Redis database, emptied before and after ({DEFAULT_REDIS})",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--cluster-command",
        default=f"{sys.executable} -m sl5r.cluster",
        help="a launcher with the interface of python -m sl5r.cluster",
    )
    args = parser.parse_args(argv)
    small = args.small
    args.tournaments = args.tournaments or (1 if small else 15)
    args.healthz = args.healthz or (20 if small else 100)
    args.viewers = args.viewers or (50 if small else 1_000)
    args.turns = args.turns or (4 if small else 16)
    if min(args.tournaments, args.healthz, args.viewers, args.turns, args.turn_seconds) < 1:
        parser.error("sizes: at least 1")

    print(f"machine: {machine()}")
    fds = raise_fd_limit()  # the cluster inherits it: two sockets per viewer on each side
    workdir = Path(tempfile.mkdtemp(prefix="sl5r-cluster-load-"))
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
        "LOG_LEVEL": "WARNING",
        "DJANGO_LOG_LEVEL": "WARNING",
        "PYTHONUNBUFFERED": "1",
    }
    os.environ.update(env)
    cluster: Cluster | None = None
    status = 0
    try:
        started = time.perf_counter()
        cluster = cluster_start(shlex.split(args.cluster_command), env, workdir)
        print(
            f"cluster: {args.cluster_command} ready in {time.perf_counter() - started:.1f} s; "
            f"balancer {cluster.info['balancer']}, ASGI {', '.join(cluster.info['asgi'])}; "
            f"database {args.scratch} (scratch) on {urlsplit(args.postgres).netloc}, "
            f"Redis {args.redis}; DEBUG off; file descriptors {fds}"
        )
        import django

        django.setup()
        world = world_make()
        runs = {"orders": part_orders, "viewers": part_viewers, "replay": part_replay}
        for part in args.parts:
            load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
            print(f"\n## {part} (load average {load} at the start)\n")
            runs[part](world, cluster, args)
    except RuntimeError as error:
        print(f"\nstopped: {error}")
        status = 2
    finally:
        keep = status != 0
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
