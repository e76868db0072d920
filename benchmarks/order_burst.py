"""48 Generals giving their orders in the same second, against one server process.

A measurement, not a test: prints the latencies and the verdicts against the targets (every
order stored; p99 under 250 ms) and exits 0.

    .venv/bin/python benchmarks/order_burst.py                 # SQLite in a temporary file
    .venv/bin/python benchmarks/order_burst.py --postgres URL  # e.g. postgres://postgres@127.0.0.1:5432/test
    .venv/bin/python benchmarks/order_burst.py --bursts 20     # more bursts (at most 25)

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

The order rate limit (``SL5R_RATE_LIMITS``, 30 a minute per player by default) is read from
the settings only and kept in the server's own cache, so the run stays under it: one
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
TARGET_P99_MS = 250.0
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


def configure(postgres: str | None, workdir: Path) -> tuple[str, str | None]:
    """Point DATABASE_URL at a scratch database; its description and the one to drop."""
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


def serve(port: int, log: Path) -> subprocess.Popen[bytes]:
    command = [sys.executable, "manage.py", "serve", "--host", HOST, "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(
            [*command, "--no-clock"],
            cwd=ROOT,
            env=os.environ.copy(),
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


def run(generals: list[General], port: int, bursts: int) -> dict[str, Any]:
    count = len(generals)
    connections = [http.client.HTTPConnection(HOST, port, timeout=60) for _ in generals]
    try:
        for conn in connections:
            conn.connect()
        healthz: list[Request] = [("GET", "/healthz", None, {})] * count
        orders, checks = Series("orders"), Series("healthz")
        problems: list[str] = []
        stored: list[tuple[int, int, int]] = []  # rows, expected rows, armies up to date
        warmup: dict[str, float] = {}
        for n in range(bursts + 1):  # n == 0: the warm-up
            samples = burst(connections, order_requests(generals, n))
            trouble = order_problems(generals, n, samples)
            rows, matching = stored_check(generals, n)
            if n == 0:
                warmup["orders"] = max(s.ms for s in samples)
            else:
                orders.add(samples)
            problems += [f"orders burst {n or 'warm-up'}: {p}" for p in trouble]
            stored.append((rows, count * (n + 1), matching))
            time.sleep(PAUSE_SECONDS)
            samples = burst(connections, healthz)
            problems += [
                f"healthz burst {n or 'warm-up'}: {s.status} {s.body[:200]!r}"
                for s in samples
                if s.status != 200
            ]
            if n == 0:
                warmup["healthz"] = max(s.ms for s in samples)
            else:
                checks.add(samples)
            time.sleep(PAUSE_SECONDS)
        # One more order per General and 48 healthz, one at a time, for the unqueued time.
        n = bursts + 1
        serial_orders = one_at_a_time(connections[0], order_requests(generals, n))
        problems += [
            f"orders one at a time: {p}" for p in order_problems(generals, n, serial_orders)
        ]
        rows, matching = stored_check(generals, n)
        stored.append((rows, count * (n + 1), matching))
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


def percentile(ordered: list[float], p: float) -> float:
    """Nearest rank: the smallest value with at least p % of the samples at or below it."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def fmt(ms: float) -> str:
    return f"{ms:.1f} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


def machine() -> str:
    try:
        load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "?"
    return (
        f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()}, "
        f"Python {platform.python_version()} ({platform.python_implementation()}); "
        f"load average {load}"
    )


def report(
    where: str, generals: list[General], result: dict[str, Any], timings: dict[str, float]
) -> None:
    from django.conf import settings

    count = len(generals)
    orders: Series = result["orders"]
    checks: Series = result["healthz"]
    bursts = len(orders.walls)
    rate = (getattr(settings, "SL5R_RATE_LIMITS", None) or {}).get("orders", "30/min")
    print(f"machine: {machine()}")
    print(
        f"database: {where}; server: manage.py serve --no-clock (Daphne, one process), "
        f"DEBUG {'on' if settings.DEBUG else 'off'}"
    )
    print(
        f"players: {TOURNAMENTS} tournaments of 24, {GENERALS_PER_CLAN} Generals per clan "
        f'(three_variant="three_generals"; R1 allows at most 4 per clan): {count} Generals, '
        f"{TURN_SECONDS // 60}-minute turns, turn 1 open"
    )
    print(
        f"method: {count} threads, each with its own keep-alive connection, released by one "
        f"threading.Barrier; {bursts} bursts of each kind, alternating orders / healthz, "
        f"after one warm-up burst of each (not counted); {PAUSE_SECONDS:g} s between bursts; "
        f"then {count} of each one at a time on one connection"
    )
    print(
        f"rate limit: orders {rate} per player (settings only); this run sends {bursts + 2} "
        "per player"
    )
    print(
        f"set-up (migrate, tournaments through the services) {timings['setup']:.1f} s; "
        f"server answered /healthz after {timings['start']:.1f} s; "
        f"warm-up bursts: orders max {fmt(result['warmup']['orders'])}, "
        f"healthz max {fmt(result['warmup']['healthz'])}\n"
    )
    print(
        "| requests | samples | p50 | p90 | p99 | max | wall time of a burst, median (max) "
        "| non-200 |"
    )
    print("|---|---|---|---|---|---|---|---|")
    stats = {}
    for label, series in (
        ("`PUT …/orders/mine`", orders),
        ("`GET /healthz`", checks),
    ):
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
    wall = statistics.median(orders.walls)
    print(
        f"release: first to last request sent within a burst, median {fmt(spread)}; "
        f"connections reopened: {reconnects}"
    )
    print(f"orders: {count / wall:.0f} a second through a burst (median wall time)")
    ratio50 = stats["orders"][50] / stats["healthz"][50]
    ratio99 = stats["orders"][99] / stats["healthz"][99]
    print(f"ratio orders / healthz: p50 ×{ratio50:.1f}, p99 ×{ratio99:.1f}")
    stored = result["stored"]
    rows, expected, _ = stored[-1]
    all_rows = all(r == e for r, e, _ in stored)
    all_current = all(m == count for _, _, m in stored)
    fewest = min(m for _, _, m in stored)
    print(
        f"stored: {rows} order rows of {expected} expected, {count} a round (the warm-up, "
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
    print()
    ok = all_rows and all_current and not problems
    print(
        ("PASS" if ok else "MISS")
        + f"  every order stored: {rows} of {expected} rows, each burst's order counting for "
        f"{'all' if all_current else 'not all'} {count} armies, "
        f"{'every response 200' if not problems else f'{len(problems)} bad answers'}"
    )
    p99 = stats["orders"][99]
    print(
        ("PASS" if p99 < TARGET_P99_MS else "MISS")
        + f"  orders p99 under {TARGET_P99_MS:.0f} ms: p99 {fmt(p99)}"
    )
    print(
        f"INFO  ratio orders / healthz under the same burst: p50 ×{ratio50:.1f}, "
        f"p99 ×{ratio99:.1f} (reported; no target set)"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on PostgreSQL instead")
    parser.add_argument(
        "--bursts",
        type=int,
        default=10,
        help=f"counted bursts of each kind (default 10, at most {MAX_BURSTS}: the rate limit)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.bursts <= MAX_BURSTS:
        parser.error(f"--bursts: between 1 and {MAX_BURSTS}")
    workdir = Path(tempfile.mkdtemp(prefix="sl5r-burst-"))
    scratch: str | None = None
    process: subprocess.Popen[bytes] | None = None
    try:
        where, scratch = configure(args.postgres, workdir)
        started = time.perf_counter()
        generals = build()
        timings = {"setup": time.perf_counter() - started}
        port = free_port()
        started = time.perf_counter()
        process = serve(port, workdir / "server.log")
        timings["start"] = time.perf_counter() - started
        result = run(generals, port, args.bursts)
        stop(process)
        if process.returncode not in (0, -signal.SIGTERM):
            print(f"(the server exited with {process.returncode})\n{tail(workdir / 'server.log')}")
    finally:
        if process is not None:
            stop(process)
        if scratch and args.postgres:
            drop_scratch(args.postgres, scratch)
        shutil.rmtree(workdir, ignore_errors=True)
    report(where, generals, result, timings)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
