"""48 Generals giving their orders in the same second, against one server process.

A measurement, not a test: prints the latencies and the verdicts against the targets (every
order stored; p99 under 250 ms; the orders' p99 at most ×1.5 the p99 of /healthz in an
equal burst) and exits 0.

    .venv/bin/python benchmarks/order_burst.py                 # SQLite in a temporary file
    .venv/bin/python benchmarks/order_burst.py --postgres URL  # e.g. postgres://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/order_burst.py --bursts 20     # more bursts (at most 25)
    .venv/bin/python benchmarks/order_burst.py --modes threads,django,uvicorn --repeat 1
    .venv/bin/python benchmarks/order_burst.py --postgres URL --modes cluster --repeat 1

Each mode is a way of serving HTTP, measured in the same run on the same data, the server
started afresh for each (``MODES``): ``threads`` and ``django`` are ``manage.py serve``
(Daphne) with ``SL5R_HTTP`` set so; ``uvicorn`` is uvicorn with Django's ASGI handler
(``SL5R_HTTP=django``); ``cluster`` is ``python -m sl5r.cluster``, what ``make cluster`` runs
(HAProxy in front of two Daphne processes, Celery, Redis database 9, emptied first), on the
run's PostgreSQL database, the bursts sent to the proxy. With ``--repeat 2`` (the default)
the modes run forwards then backwards (threads, django, django, threads), so that a machine
getting busier or a database growing favours neither; each mode's figures are over all its
runs, and the last table gives each mode's against the first's.

The database is a fresh one made for the run (a temporary SQLite file, or a scratch
database created beside URL's and dropped afterwards). R1 allows at most four Generals per
clan, so the 48 Generals come from two 24-player tournaments with three Generals per clan
(``three_variant="three_generals"``), built through the services as judges would, with
15-minute turns and turn 1 open. Then ``manage.py serve --no-clock`` runs as a subprocess
on that database, and each burst sends 48 requests at once: 48 threads, each with its own
keep-alive connection opened beforehand, wait on a ``threading.Barrier`` and send. An
orders burst is one ``PUT /api/tournaments/{id}/orders/mine`` per General (bearer join
token, a legal move to a neighbouring province, another one each burst); a healthz burst
is 48 ``GET /healthz`` on the same connections. The bursts alternate (orders, healthz,
orders, ...), after one warm-up burst of each that is not counted. Last, the same requests
are sent one at a time on one connection: each one's time with nothing queued before it.

The order rate limit (``SL5R_RATE_LIMITS``, 30 a minute per player by default) is counted in
the server's cache (its own memory: the run sets no ``REDIS_URL``), so the run stays under it: one
warm-up order, at most 25 counted ones and one sent alone per player.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import types
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

GENERALS_PER_CLAN = 3  # three_variant="three_generals", 24 players
TOURNAMENTS = 2
TURN_SECONDS = 15 * 60
MAX_BURSTS = 25  # + a warm-up and a lone order per player: under the default 30 a minute
# mode: (server, SL5R_HTTP). Each server process has its own rate-limit counts (the cache is
# in memory without REDIS_URL), so every run may send up to MAX_BURSTS + 2 orders a player.
MODES = {
    "threads": ("daphne", "threads"),
    "django": ("daphne", "django"),
    "uvicorn": ("uvicorn", "django"),
    "cluster": ("cluster", "threads"),
}
CLUSTER_REDIS = "redis://127.0.0.1:6379/9"  # the cluster mode's Redis database, emptied
TARGET_P99_MS = 250.0
TARGET_RATIO = 1.5  # issue 17: orders p99 / /healthz p99, same server, same run
PAUSE_SECONDS = 0.5  # between bursts, so one does not run into the next
HOST = "127.0.0.1"

# method, path, body, headers
Request = tuple[str, str, bytes | None, dict[str, str]]


@dataclass
class General:
    tournament_id: int
    army_id: int
    code: str
    token: str
    province: str
    targets: list[str]  # legal one-step moves (order_check on the open turn)

    def target(self, burst: int) -> str:
        return self.targets[burst % len(self.targets)]


@dataclass
class Sample:
    start: float
    end: float
    status: int
    body: bytes
    reconnected: bool

    @property
    def ms(self) -> float:
        return (self.end - self.start) * 1000


@dataclass
class Series:
    name: str
    samples: list[Sample] = field(default_factory=list)
    walls: list[float] = field(default_factory=list)  # first send to last answer, per burst
    spreads: list[float] = field(default_factory=list)  # first send to last send, per burst

    def add(self, burst: list[Sample]) -> None:
        self.samples.extend(burst)
        self.walls.append(max(s.end for s in burst) - min(s.start for s in burst))
        self.spreads.append(max(s.start for s in burst) - min(s.start for s in burst))

    def latencies(self) -> list[float]:
        return sorted(s.ms for s in self.samples)


# --- The scratch database --------------------------------------------------------------------


def urlconf_with(route: str, view: Any) -> types.ModuleType:
    """The site's URLs with one of a benchmark's own in front (``order_cost.py``'s minimal
    insert, ``state_read.py``'s empty view): the two measured on the same stack."""
    from django.urls import path

    from sl5r import urls

    module = types.ModuleType("bench_urls")
    module.urlpatterns = [path(route, view), *urls.urlpatterns]  # type: ignore[attr-defined]
    return module


def configure(postgres: str | None, workdir: Path) -> tuple[str, str | None]:
    """Point DATABASE_URL at a scratch database; its description and the one to drop."""
    # This process only builds and checks; plain connections, whatever the servers use.
    os.environ["SL5R_HTTP"] = "threads"
    if postgres:
        parts = urlsplit(postgres)
        scratch = f"sl5r_bench_burst_{os.getpid()}"
        import psycopg

        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{scratch}"')
        os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{scratch}"))
        where = f"PostgreSQL ({parts.hostname}:{parts.port or 5432}, scratch database)"
        return where, scratch
    os.environ["DATABASE_URL"] = f"sqlite:///{workdir / 'bench.sqlite3'}"
    return "SQLite (WAL, temporary file)", None


def drop_scratch(postgres: str, scratch: str) -> None:
    from django.db import connections

    connections.close_all()
    import psycopg

    with psycopg.connect(postgres, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{scratch}" WITH (FORCE)')


# --- The tournaments -------------------------------------------------------------------------


def build() -> list[General]:
    """Two 24-player tournaments, three Generals per clan, turn 1 open: 48 Generals."""
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")
    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone

    from referees.services import (
        Actor,
        player_register,
        player_token,
        start_positions_declare,
        tournament_advance,
        tournament_clans,
        tournament_create,
        tournament_start,
    )
    from sl5r.rules.mapgraph import rokugan_map
    from sl5r.rules.turn import Order as RulesOrder
    from sl5r.rules.turn import order_check
    from strategic_map.selectors import campaign_open_turn, campaign_turn_state
    from strategic_map.services import map_import

    call_command("migrate", verbosity=0)
    graph = rokugan_map()
    game_map = map_import(slug="rokugan", data=graph.to_dict())
    judge = get_user_model().objects.create_user(username="bench-judge", password=None)
    actor = Actor.of_user(judge)
    generals: list[General] = []
    for n in range(1, TOURNAMENTS + 1):
        now = timezone.now()
        tournament = tournament_create(
            name=f"Order burst {n}",
            judge=judge,
            game_map=game_map,
            player_count=8 * GENERALS_PER_CLAN,
            now=now,
            turn_seconds=TURN_SECONDS,
            three_variant="three_generals",
        )
        players = []
        for clan in tournament_clans(tournament):
            for i in range(1, GENERALS_PER_CLAN + 1):
                players.append(
                    player_register(
                        tournament=tournament,
                        name=f"{clan.title()} General {i}",
                        clan=clan,
                        role="general",
                        actor=actor,
                        now=now,
                    )
                )
        tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
        for clan in tournament_clans(tournament):
            codes = sorted(p.army.code for p in players if p.clan == clan and p.army)
            homes = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))
            start_positions_declare(
                tournament_id=tournament.pk,
                clan=clan,
                positions=dict(zip(codes, homes, strict=False)),
                actor=actor,
                now=now,
            )
        tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)  # negotiation
        tournament = tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
        tournament.refresh_from_db()
        campaign = tournament.campaign
        turn = campaign_open_turn(campaign)
        assert turn is not None and tournament.phase == "running"
        state = campaign_turn_state(campaign, turn=turn.number)
        for player in players:
            assert player.army is not None
            code = player.army.code
            here = campaign.board["armies"][code]["province"]
            targets = [
                p
                for p in sorted(graph.neighbours[here])
                if order_check(state, RulesOrder(army=code, move=(p,))) is None
            ]
            if len(targets) < 2:
                raise SystemExit(f"{code} in {here}: fewer than two legal moves ({targets})")
            generals.append(
                General(
                    tournament_id=tournament.pk,
                    army_id=player.army.pk,
                    code=code,
                    token=player_token(player),
                    province=here,
                    targets=targets,
                )
            )
    connections.close_all()
    return generals


def stored_check(generals: list[General], burst: int) -> tuple[int, int]:
    """All order rows of the open turns; how many armies' counting order is this burst's."""
    from django.db import connections

    from strategic_map.models import Order, Turn
    from strategic_map.selectors import turn_current_orders

    tournament_ids = {g.tournament_id for g in generals}
    turns = list(Turn.objects.filter(campaign__tournament__in=tournament_ids, status="open"))
    rows = Order.objects.filter(turn__in=turns).count()
    current: dict[int, Any] = {}
    for turn in turns:
        current.update(turn_current_orders(turn))
    matching = sum(
        1
        for g in generals
        if (order := current.get(g.army_id)) is not None
        and order.kind == "move"
        and list(order.path) == [g.target(burst)]
    )
    connections.close_all()
    return rows, matching


# --- The server ------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


def get(port: int, path: str, timeout: float = 2.0) -> int:
    conn = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        conn.request("GET", path)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


class ClusterServer:
    """``python -m sl5r.cluster`` (what ``make cluster`` runs: HAProxy, two Daphne processes,
    a Celery worker and beat) on the run's database, its proxy's port in ``port``."""

    def __init__(self, workdir: Path) -> None:
        from django.conf import settings

        from benchmarks.cluster_load import cluster_start, redis_flush

        redis_flush(CLUSTER_REDIS)  # the rate limits of an earlier run are counted there
        env = {
            **os.environ,
            "REDIS_URL": CLUSTER_REDIS,
            "SL5R_CLOCK": "celery",
            # The join tokens were signed here: the cluster must check them with the same key.
            "SECRET_KEY": settings.SECRET_KEY,
            "DEBUG": "0",
            "SECURE_SSL_REDIRECT": "0",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "LOG_LEVEL": "WARNING",
            "DJANGO_LOG_LEVEL": "WARNING",
        }
        env.pop("SL5R_HTTP", None)
        workdir.mkdir(parents=True, exist_ok=True)
        self.cluster = cluster_start([sys.executable, "-m", "sl5r.cluster"], env, workdir)
        self.port = self.cluster.proxy_port
        self.returncode: int | None = None

    def stop(self) -> None:
        self.returncode = self.cluster.stop()


def serve(port: int, log: Path, mode: str) -> subprocess.Popen[bytes]:
    server, handler = MODES[mode]
    if server == "daphne":
        command = [sys.executable, "manage.py", "serve", "--host", HOST, "--port", str(port)]
        command.append("--no-clock")
    else:  # no clock either: uvicorn runs only the ASGI application
        command = [sys.executable, "-m", "uvicorn", "sl5r.asgi:application"]
        command += ["--host", HOST, "--port", str(port), "--no-access-log", "--lifespan", "off"]
    with log.open("wb") as out:
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "SL5R_HTTP": handler},
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise RuntimeError(f"the server stopped (exit {process.returncode}):\n{tail(log)}")
            try:
                if get(port, "/healthz") == 200:
                    return process
            except (OSError, http.client.HTTPException):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the server did not answer /healthz within 60 s:\n{tail(log)}")
    except BaseException:
        stop(process)
        raise


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def tail(log: Path, lines: int = 30) -> str:
    try:
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no server log)"


# --- The bursts ------------------------------------------------------------------------------


def burst(
    connections: list[http.client.HTTPConnection],
    requests: Sequence[Request],
) -> list[Sample]:
    """Send ``requests[i]`` on ``connections[i]``, all threads released by one barrier."""
    barrier = threading.Barrier(len(connections))
    samples: list[Sample | None] = [None] * len(connections)

    def send(i: int) -> None:
        conn = connections[i]
        method, path, body, headers = requests[i]
        reconnected = conn.sock is None
        barrier.wait(timeout=30)
        start = time.perf_counter()
        try:
            conn.request(method, path, body=body, headers=headers)
            response = conn.getresponse()
            data = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as error:
            conn.close()
            data, status = repr(error).encode(), 0
        samples[i] = Sample(start, time.perf_counter(), status, data, reconnected)

    threads = [threading.Thread(target=send, args=(i,)) for i in range(len(connections))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return [s for s in samples if s is not None]


def order_requests(generals: list[General], n: int) -> list[Request]:
    return [
        (
            "PUT",
            f"/api/tournaments/{g.tournament_id}/orders/mine",
            json.dumps({"kind": "move", "path": [g.target(n)]}).encode(),
            {"Authorization": f"Bearer {g.token}", "Content-Type": "application/json"},
        )
        for g in generals
    ]


def order_problems(generals: list[General], n: int, samples: list[Sample]) -> list[str]:
    problems = []
    for g, s in zip(generals, samples, strict=True):
        if s.status != 200:
            problems.append(f"{g.code}: {s.status} {s.body[:200].decode(errors='replace')}")
            continue
        answer = json.loads(s.body)
        if answer.get("army") != g.code or answer.get("path") != [g.target(n)]:
            problems.append(f"{g.code}: 200 but answered {answer}")
    return problems


def one_at_a_time(
    conn: http.client.HTTPConnection,
    requests: Sequence[Request],
) -> list[Sample]:
    """The same requests in turn on one connection: the server's time for each, unqueued."""
    samples = []
    for method, path, body, headers in requests:
        start = time.perf_counter()
        conn.request(method, path, body=body, headers=headers)
        response = conn.getresponse()
        data = response.read()
        samples.append(Sample(start, time.perf_counter(), response.status, data, False))
    return samples


def run(generals: list[General], port: int, bursts: int, first: int) -> dict[str, Any]:
    """The bursts against the server on ``port``; ``first`` numbers its first round.

    Rounds are numbered across the runs of a session, so that each round moves every army
    somewhere else than the round before (``General.target``), whatever run that was.
    """
    count = len(generals)
    base_rows, _ = stored_check(generals, first)
    connections = [http.client.HTTPConnection(HOST, port, timeout=60) for _ in generals]
    try:
        for conn in connections:
            conn.connect()
        healthz: list[Request] = [("GET", "/healthz", None, {})] * count
        orders, checks = Series("orders"), Series("healthz")
        problems: list[str] = []
        stored: list[tuple[int, int, int]] = []  # rows, expected rows, armies up to date
        warmup: dict[str, float] = {}
        for i in range(bursts + 1):  # i == 0: the warm-up
            n = first + i
            samples = burst(connections, order_requests(generals, n))
            trouble = order_problems(generals, n, samples)
            rows, matching = stored_check(generals, n)
            if i == 0:
                warmup["orders"] = max(s.ms for s in samples)
            else:
                orders.add(samples)
            problems += [f"orders burst {i or 'warm-up'}: {p}" for p in trouble]
            stored.append((rows - base_rows, count * (i + 1), matching))
            time.sleep(PAUSE_SECONDS)
            samples = burst(connections, healthz)
            problems += [
                f"healthz burst {i or 'warm-up'}: {s.status} {s.body[:200]!r}"
                for s in samples
                if s.status != 200
            ]
            if i == 0:
                warmup["healthz"] = max(s.ms for s in samples)
            else:
                checks.add(samples)
            time.sleep(PAUSE_SECONDS)
        # One more order per General and 48 healthz, one at a time, for the unqueued time.
        n = first + bursts + 1
        serial_orders = one_at_a_time(connections[0], order_requests(generals, n))
        problems += [
            f"orders one at a time: {p}" for p in order_problems(generals, n, serial_orders)
        ]
        rows, matching = stored_check(generals, n)
        stored.append((rows - base_rows, count * (bursts + 2), matching))
        serial_checks = one_at_a_time(connections[0], healthz)
        problems += [f"healthz one at a time: {s.status}" for s in serial_checks if s.status != 200]
    finally:
        for conn in connections:
            conn.close()
    return {
        "orders": orders,
        "healthz": checks,
        "problems": problems,
        "stored": stored,
        "warmup": warmup,
        "serial": {"orders": serial_orders, "healthz": serial_checks},
    }


# --- Report ----------------------------------------------------------------------------------


@dataclass
class Run:
    """One server process of one mode, and what its bursts measured."""

    mode: str
    result: dict[str, Any]
    load: str  # the load average when the server was started
    start: float  # s until it answered /healthz

    @property
    def ok(self) -> bool:
        count = len(self.result["serial"]["orders"])
        stored = self.result["stored"]
        return (
            all(r == e for r, e, _ in stored)
            and all(m == count for _, _, m in stored)
            and not self.result["problems"]
        )


def percentile(ordered: list[float], p: float) -> float:
    """Nearest rank: the smallest value with at least p % of the samples at or below it."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def fmt(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def load_average() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def machine() -> str:
    return (
        f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()}, "
        f"Python {platform.python_version()} ({platform.python_implementation()}); "
        f"load average {load_average()}"
    )


def mode_label(mode: str) -> str:
    server, handler = MODES[mode]
    if server == "cluster":
        return (
            f"{mode}: python -m sl5r.cluster (make cluster): HAProxy, two Daphne processes "
            f"(SL5R_HTTP={handler}), Celery, Redis {CLUSTER_REDIS}"
        )
    name = "manage.py serve --no-clock (Daphne)" if server == "daphne" else "uvicorn (h11)"
    return f"{mode}: {name}, SL5R_HTTP={handler}, one process"


def report_header(
    where: str, host: str, generals: list[General], bursts: int, setup: float
) -> None:
    from django.conf import settings

    count = len(generals)
    rate = (getattr(settings, "SL5R_RATE_LIMITS", None) or {}).get("orders", "30/min")
    print(f"machine (at the start): {host}")
    print(f"database: {where}; DEBUG {'on' if settings.DEBUG else 'off'}")
    print(
        f"players: {TOURNAMENTS} tournaments of 24, {GENERALS_PER_CLAN} Generals per clan "
        f'(three_variant="three_generals"; R1 allows at most 4 per clan): {count} Generals, '
        f"{TURN_SECONDS // 60}-minute turns, turn 1 open"
    )
    print(
        f"method: {count} threads, each with its own keep-alive connection, released by one "
        f"threading.Barrier; per server run {bursts} bursts of each kind, alternating orders / "
        f"healthz, after one warm-up burst of each (not counted); {PAUSE_SECONDS:g} s between "
        f"bursts; then {count} of each one at a time on one connection"
    )
    print(
        f"rate limit: orders {rate} per player (settings only; counted per server process); "
        f"each run sends {bursts + 2} per player"
    )
    print(f"set-up (migrate, tournaments through the services) {setup:.1f} s\n")


def report_run(number: int, run_: Run, count: int) -> None:
    result = run_.result
    orders: Series = result["orders"]
    checks: Series = result["healthz"]
    bursts = len(orders.walls)
    print(f"### run {number}, {mode_label(run_.mode)}")
    print(
        f"load average at its start {run_.load}; answered /healthz after {run_.start:.1f} s; "
        f"warm-up bursts: orders max {fmt(result['warmup']['orders'])}, "
        f"healthz max {fmt(result['warmup']['healthz'])}\n"
    )
    print(
        "| requests | samples | p50 | p90 | p99 | max | wall time of a burst, median (max) "
        "| non-200 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    stats = {}
    for label, series in (("`PUT …/orders/mine`", orders), ("`GET /healthz`", checks)):
        ordered = series.latencies()
        row = {p: percentile(ordered, p) for p in (50, 90, 99, 100)}
        stats[series.name] = row
        bad = sum(1 for s in series.samples if s.status != 200)
        print(
            f"| {label}, {count} at once | {len(ordered)} | {fmt(row[50])} | {fmt(row[90])} "
            f"| {fmt(row[99])} | {fmt(row[100])} | {fmt(statistics.median(series.walls) * 1000)} "
            f"({fmt(max(series.walls) * 1000)}) | {bad} |"
        )
    for label, samples in (
        ("`PUT …/orders/mine`", result["serial"]["orders"]),
        ("`GET /healthz`", result["serial"]["healthz"]),
    ):
        ordered = sorted(s.ms for s in samples)
        row = {p: percentile(ordered, p) for p in (50, 90, 99, 100)}
        bad = sum(1 for s in samples if s.status != 200)
        print(
            f"| {label}, one at a time | {len(ordered)} | {fmt(row[50])} | {fmt(row[90])} "
            f"| {fmt(row[99])} | {fmt(row[100])} | {fmt(sum(ordered))} (all {count}) | {bad} |"
        )
    print()
    spread = statistics.median(orders.spreads + checks.spreads) * 1000
    reconnects = sum(s.reconnected for s in orders.samples + checks.samples)
    print(
        f"release: first to last request sent within a burst, median {fmt(spread)}; "
        f"connections reopened: {reconnects}"
    )
    print(f"orders: {count / statistics.median(orders.walls):.0f} a second through a burst")
    stored = result["stored"]
    rows, expected, _ = stored[-1]
    all_current = all(m == count for _, _, m in stored)
    fewest = min(m for _, _, m in stored)
    print(
        f"stored: {rows} new order rows of {expected} expected, {count} a round (the warm-up, "
        f"{bursts} bursts and the lone round; an order is a new row, the latest counts); "
        + (
            f"after every round each of the {count} armies' counting order was the one just sent"
            if all_current
            else f"after some round only {fewest} of {count} armies had the order just sent"
        )
    )
    problems: list[str] = result["problems"]
    print(f"non-200 or wrong answers: {len(problems)}")
    for problem in problems[:20]:
        print(f"  {problem}")
    if len(problems) > 20:
        print(f"  … and {len(problems) - 20} more")
    p99 = stats["orders"][99]
    print(
        ("PASS" if run_.ok else "MISS")
        + f"  every order stored: {rows} of {expected} rows, "
        + ("every response 200" if not problems else f"{len(problems)} bad answers")
    )
    print(
        ("PASS" if p99 < TARGET_P99_MS else "MISS")
        + f"  orders p99 under {TARGET_P99_MS:.0f} ms: p99 {fmt(p99)}"
    )
    healthz_p99 = stats["healthz"][99]
    ratio = p99 / healthz_p99 if healthz_p99 > 0 else float("inf")
    wall_ratio = statistics.median(orders.walls) / statistics.median(checks.walls)
    print(
        ("PASS" if ratio <= TARGET_RATIO else "MISS")
        + f"  orders p99 at most ×{TARGET_RATIO} /healthz's in an equal burst (issue 17): "
        f"{fmt(p99)} / {fmt(healthz_p99)} = ×{ratio:.2f} (burst wall, medians: ×{wall_ratio:.2f})\n"
    )


def mode_figures(runs: list[Run]) -> dict[str, float]:
    """One mode's figures over all its runs (ms; orders a second)."""
    count = len(runs[0].result["serial"]["orders"])
    orders = sorted(ms for r in runs for ms in r.result["orders"].latencies())
    checks = sorted(ms for r in runs for ms in r.result["healthz"].latencies())
    walls = [w for r in runs for w in r.result["orders"].walls]
    alone = sorted(s.ms for r in runs for s in r.result["serial"]["orders"])
    alone_checks = sorted(s.ms for r in runs for s in r.result["serial"]["healthz"])
    return {
        "p50": percentile(orders, 50),
        "p90": percentile(orders, 90),
        "p99": percentile(orders, 99),
        "max": orders[-1],
        "wall": statistics.median(walls) * 1000,
        "rate": count / statistics.median(walls),
        "healthz p50": percentile(checks, 50),
        "healthz p99": percentile(checks, 99),
        "alone": percentile(alone, 50),
        "healthz alone": percentile(alone_checks, 50),
    }


def report_comparison(runs: list[Run]) -> None:
    modes = list(dict.fromkeys(r.mode for r in runs))
    figures = {mode: mode_figures([r for r in runs if r.mode == mode]) for mode in modes}
    print(f"### modes compared: every run of each; a ratio is the mode's over {modes[0]}'s\n")
    print(
        "| mode | runs | orders p50 / p90 / p99 / max | burst wall time, median | orders a "
        "second | `/healthz` p50 / p99 in a burst | order alone, p50 | `/healthz` alone, p50 "
        "| all stored, all 200 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        f = figures[mode]
        of_mode = [r for r in runs if r.mode == mode]
        print(
            f"| {mode} | {len(of_mode)} | {fmt(f['p50'])} / {fmt(f['p90'])} / {fmt(f['p99'])} "
            f"/ {fmt(f['max'])} | {fmt(f['wall'])} | {f['rate']:.0f} "
            f"| {fmt(f['healthz p50'])} / {fmt(f['healthz p99'])} | {fmt(f['alone'])} "
            f"| {fmt(f['healthz alone'])} | {'yes' if all(r.ok for r in of_mode) else 'NO'} |"
        )
    base = figures[modes[0]]
    for mode in modes[1:]:
        f = figures[mode]

        def x(key: str, f: dict[str, float] = f) -> str:
            return f"×{f[key] / base[key]:.2f}"

        print(
            f"| {mode} / {modes[0]} | | {x('p50')} / {x('p90')} / {x('p99')} / {x('max')} "
            f"| {x('wall')} | {x('rate')} | {x('healthz p50')} / {x('healthz p99')} "
            f"| {x('alone')} | {x('healthz alone')} | |"
        )
    print()


def mode_order(modes: list[str], repeat: int) -> list[str]:
    """The modes forwards, backwards, forwards…: threads, django, django, threads."""
    order: list[str] = []
    for i in range(repeat):
        order += modes if i % 2 == 0 else modes[::-1]
    return order


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on PostgreSQL instead")
    parser.add_argument(
        "--bursts",
        type=int,
        default=10,
        help=f"counted bursts of each kind per run (default 10, at most {MAX_BURSTS})",
    )
    parser.add_argument(
        "--modes",
        default="threads,django",
        help=f"comma-separated, from {', '.join(MODES)} (default threads,django)",
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="runs of each mode, in alternating order (default 2: threads, django, django, "
        "threads)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.bursts <= MAX_BURSTS:
        parser.error(f"--bursts: between 1 and {MAX_BURSTS}")
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes) or len(set(modes)) < len(modes):
        parser.error(f"--modes: distinct names from {', '.join(MODES)}")
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    if "cluster" in modes and not args.postgres:
        parser.error("--modes cluster: the cluster runs on PostgreSQL; give --postgres URL")
    workdir = Path(tempfile.mkdtemp(prefix="sl5r-burst-"))
    scratch: str | None = None
    process: subprocess.Popen[bytes] | None = None
    runs: list[Run] = []
    host = machine()
    try:
        where, scratch = configure(args.postgres, workdir)
        started = time.perf_counter()
        generals = build()
        setup = time.perf_counter() - started
        first = 0
        for number, mode in enumerate(mode_order(modes, args.repeat), start=1):
            load = load_average()
            port = free_port()
            log = workdir / f"server-{number}.log"
            started = time.perf_counter()
            if mode == "cluster":
                cluster = ClusterServer(workdir / f"cluster-{number}")
                start = time.perf_counter() - started
                try:
                    result = run(generals, cluster.port, args.bursts, first)
                finally:
                    cluster.stop()
                first += args.bursts + 2
                if cluster.returncode != 0:
                    print(f"(run {number}: the cluster exited with {cluster.returncode})")
                runs.append(Run(mode, result, load, start))
                continue
            process = serve(port, log, mode)
            start = time.perf_counter() - started
            result = run(generals, port, args.bursts, first)
            first += args.bursts + 2
            stop(process)
            if process.returncode not in (0, -signal.SIGTERM):
                print(f"(run {number}: the server exited with {process.returncode})\n{tail(log)}")
            process = None
            runs.append(Run(mode, result, load, start))
    finally:
        if process is not None:
            stop(process)
        if scratch and args.postgres:
            drop_scratch(args.postgres, scratch)
        shutil.rmtree(workdir, ignore_errors=True)
    report_header(where, host, generals, args.bursts, setup)
    for number, run_ in enumerate(runs, start=1):
        report_run(number, run_, len(generals))
    report_comparison(runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
