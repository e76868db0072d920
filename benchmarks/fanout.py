"""Live-update fan-out: 100, 500 and 1,000 pages of one tournament learn of a new turn.

A measurement, not a test: prints a table and the verdict against the target (500 clients:
p99 under 1 s, none left on the old turn after the resync) and exits 0.

    .venv/bin/python benchmarks/fanout.py                  # 100, 500 and 1,000 clients
    .venv/bin/python benchmarks/fanout.py --clients 50 200 # other sizes
    .venv/bin/python benchmarks/fanout.py --servers 2      # clients spread over 2 servers

Against a real server: ``manage.py serve --no-clock`` (Daphne) in a subprocess, with the
Redis channel layer (``REDIS_URL=redis://127.0.0.1:6379/12``), DEBUG off, and a scratch
SQLite database holding a 16-player tournament with turn 1 open, built through the services.

Each client is what a page does (``static/js/live.js``; the clients are in
``benchmarks/clients.py``, on ``websockets`` and ``httpx``): a websocket to
``ws/tournaments/<id>/`` and a keep-alive HTTP connection on which it fetched the state
once at load. Then a judge resolves the turn (``POST …/clock/resolve-now`` with an API
key), and for each client the time is taken from that POST until it has the new turn: the
event arrives carrying the public state (the clients are public pages), which the client
takes as is, as live.js does; an event without a state (or with an older one) is followed
by ``GET …/state`` as the public answers. A client without the event 5 s after the POST
fetches the state anyway (the page's safety net) and counts as having missed the event.
Clients, server and Redis share the machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import os
import platform
import resource
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.clients import HOST, Http, WebSocket  # noqa: E402 (needs ROOT on the path)

SIZES = (100, 500, 1_000)
REDIS_URL = "redis://127.0.0.1:6379/12"
EVENT_WAIT = 5.0  # seconds after the POST before a client resyncs without the event
CONNECT_AT_ONCE = 50  # handshakes in flight while the clients connect
TARGET_CLIENTS, TARGET_P99 = 500, 1.0
TARGET_RATIO = 1.5  # issue 17: site p99 ≤ ×1.5 the bare server's (--bare)


# --- The scratch tournament and the server ----------------------------------------------------


def build_tournament() -> tuple[int, str]:
    """Migrate the scratch database, build a running 16-player tournament, make a judge key."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.db import connections
    from django.utils import timezone

    from referees.kernel.access import judge_key_create
    from referees.services import (
        Actor,
        player_register,
        start_positions_declare,
        tournament_advance,
        tournament_create,
        tournament_start,
    )
    from sl5r.rules.clans import CLANS
    from sl5r.rules.mapgraph import rokugan_map
    from strategic_map.services import map_import

    call_command("migrate", verbosity=0)
    now = timezone.now()
    graph = rokugan_map()
    judge = get_user_model().objects.create_user(username="bench-judge", password=None)
    actor = Actor.of_user(judge)
    tournament = tournament_create(
        name="Fan-out benchmark",
        judge=judge,
        game_map=map_import(slug="rokugan", data=graph.to_dict()),
        player_count=16,
        now=now,
        turn_seconds=3600,
        turns_total=None,
    )
    for clan in CLANS:
        for number in (1, 2):
            player_register(
                tournament=tournament,
                name=f"{clan.title()} General {number}",
                clan=clan,
                role="general",
                actor=actor,
                now=now,
            )
    tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
    for clan in CLANS:
        homes = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))
        start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions={f"{clan}-{n}": homes[n - 1] for n in (1, 2)},
            actor=actor,
            now=now,
        )
    tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    key = judge_key_create(user=judge, label="fanout").key
    connections.close_all()
    return tournament.pk, key


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        port: int = s.getsockname()[1]
        return port


async def wait_until_serving(
    port: int, tournament_id: int, server: subprocess.Popen[bytes]
) -> None:
    http = Http(port)
    try:
        for _ in range(300):
            if server.poll() is not None:
                raise RuntimeError(f"the server exited with {server.returncode}")
            try:
                status, _ = await http.request("GET", f"/api/tournaments/{tournament_id}/state")
                if status == 200:
                    return
            except OSError:
                pass
            await asyncio.sleep(0.1)
        raise RuntimeError("the server did not answer in 30 s")
    finally:
        await http.close()


# --- One round: N clients, one resolved turn --------------------------------------------------


@dataclass
class Client:
    port: int
    ws: WebSocket
    http: Http
    version: int
    turn: int


@dataclass
class Outcome:
    event_s: float | None  # POST → event received; None: missed
    event_wall: float | None  # time.time() when the event was received
    published_wall: float | None  # the carried state's server_time: when it was published
    frame: str  # the event's text as received ("" without one)
    new_turn_s: float  # POST → state with the new turn held (from the event, or fetched)
    turn: int
    dropped: bool  # the server closed the websocket before the event
    fetched: bool  # the client had to GET the state (no usable state in the event)


async def open_client(port: int, tournament_id: int, gate: asyncio.Semaphore) -> Client:
    async with gate:
        ws = await WebSocket.connect(port, f"/ws/tournaments/{tournament_id}/")
        hello = await ws.receive()
        assert hello is not None and hello["type"] == "hello", hello
        http = Http(port)
        state = await fetch_state(http, tournament_id)
        return Client(port, ws, http, hello["version"], state["tournament"]["turn"])


async def fetch_state(http: Http, tournament_id: int) -> dict[str, Any]:
    status, body = await http.request(
        "GET", f"/api/tournaments/{tournament_id}/state", {"Accept": "application/json"}
    )
    if status != 200:
        raise RuntimeError(f"state: HTTP {status}: {body[:200]!r}")
    state: dict[str, Any] = json.loads(body)
    return state


async def watch(client: Client, tournament_id: int, posted: asyncio.Future[float]) -> Outcome:
    """What the page does: wait for a newer version and take the state the event carries,
    or fetch it (no state in the event, a ``hello``); or resync after 5 s.

    A socket the server drops is reopened after 1 s, as live.js does; its ``hello`` with a
    newer version then counts like the event would (but the event is counted as missed).
    """
    event_at: float | None = None
    event_wall = published_wall = None
    frame = ""
    dropped = False
    state: dict[str, Any] | None = None
    receiving = asyncio.ensure_future(client.ws.receive())
    t0 = await posted
    while True:
        left = t0 + EVENT_WAIT - time.perf_counter()
        done, _ = await asyncio.wait({receiving}, timeout=max(0.0, left))
        if not done:
            receiving.cancel()
            break  # the safety net: fetch without the event
        message = receiving.result()
        if message is None:
            dropped = True
            await asyncio.sleep(1)
            try:
                client.ws = await WebSocket.connect(
                    client.port, f"/ws/tournaments/{tournament_id}/"
                )
            except (OSError, ConnectionError):
                await asyncio.sleep(max(0.0, t0 + EVENT_WAIT - time.perf_counter()))
                break
        elif message.get("version", 0) > client.version:
            if message["type"] == "event":
                event_at = time.perf_counter()
                event_wall, frame = client.ws.last_wall, client.ws.last_text
                carried = message.get("state")
                if (
                    isinstance(carried, dict)
                    and carried["tournament"]["version"] >= message["version"]
                ):
                    state = carried  # live.js: onState(message.state), no fetch
                    published_wall = datetime.fromisoformat(
                        carried["tournament"]["clock"]["server_time"]
                    ).timestamp()
            break
        receiving = asyncio.ensure_future(client.ws.receive())
    fetched = state is None
    if state is None:
        state = await fetch_state(client.http, tournament_id)
    end = time.perf_counter()
    return Outcome(
        event_s=None if event_at is None else event_at - t0,
        event_wall=event_wall,
        published_wall=published_wall,
        frame=frame,
        new_turn_s=end - t0,
        turn=state["tournament"]["turn"],
        dropped=dropped,
        fetched=fetched,
    )


SETTLE_S = 1.0  # after the last client connected, before the trigger (site and bare alike)


@contextlib.contextmanager
def client_measuring() -> Iterator[None]:
    """The clients' own pauses kept out of the figures, for the site and the bare servers
    alike: this process's garbage collector (a full collection over 1,000 clients' objects
    takes 100–200 ms) waits until every client has its frame."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def run_round(ports: list[int], tournament_id: int, key: str, count: int) -> dict[str, Any]:
    gate = asyncio.Semaphore(CONNECT_AT_ONCE)
    start = time.perf_counter()
    clients = await asyncio.gather(
        *(open_client(ports[i % len(ports)], tournament_id, gate) for i in range(count))
    )
    connect_s = time.perf_counter() - start
    old_turn = max(c.turn for c in clients)

    posted: asyncio.Future[float] = asyncio.get_running_loop().create_future()
    watchers = [asyncio.ensure_future(watch(c, tournament_id, posted)) for c in clients]
    judge = Http(ports[0])
    await asyncio.sleep(SETTLE_S)  # the server finishes the handshakes' work (hello, state)
    with client_measuring():
        t0 = time.perf_counter()
        posted.set_result(t0)
        status, body = await judge.request(
            "POST",
            f"/api/tournaments/{tournament_id}/clock/resolve-now",
            {"Authorization": f"Bearer {key}"},
        )
        post_s = time.perf_counter() - t0
        await judge.close()
        if status != 200:
            raise RuntimeError(f"resolve-now: HTTP {status}: {body[:300]!r}")
        outcomes = await asyncio.gather(*watchers)

    for client in clients:
        await client.ws.close()
        await client.http.close()
    await asyncio.sleep(0.5)  # let the server see the closes before the next round

    times = sorted(o.new_turn_s for o in outcomes)
    events = sorted(o.event_s for o in outcomes if o.event_s is not None)
    walls = [o.event_wall for o in outcomes if o.event_wall is not None]
    from_publish = sorted(
        o.event_wall - o.published_wall
        for o in outcomes
        if o.event_wall is not None and o.published_wall is not None
    )
    spread = sorted(w - min(walls) for w in walls) if walls else []
    return {
        "from_publish": from_publish,
        "from_trigger": events,
        "spread": spread,
        "frame": next((o.frame for o in outcomes if o.frame), ""),
        "clients": count,
        "connect_s": connect_s,
        "post_s": post_s,
        "median": statistics.median(times),
        "p99": quantile(times, 0.99),
        "max": times[-1],
        "event_median": statistics.median(events) if events else None,
        "event_p99": quantile(events, 0.99) if events else None,
        "missed": sum(o.event_s is None for o in outcomes),
        "old_turn": sum(o.turn <= old_turn for o in outcomes),
        "dropped": sum(o.dropped for o in outcomes),
        "fetched": sum(o.fetched for o in outcomes),
    }


# --- The bare baseline: the same clients, the same frame, no Django -------------------------


async def bare_round(ports: list[int], count: int) -> dict[str, Any]:
    """``count`` clients spread over the bare servers (``bare_fanout.py``) as over the site's;
    one trigger to each server at once; each client's time until it has the frame."""
    from websockets.asyncio.client import connect

    gate = asyncio.Semaphore(CONNECT_AT_ONCE)

    async def open_socket(port: int) -> WebSocket:
        async with gate:
            return await WebSocket.connect(port, "/ws/tournaments/bare/")

    start = time.perf_counter()
    sockets = await asyncio.gather(*(open_socket(ports[i % len(ports)]) for i in range(count)))
    connect_s = time.perf_counter() - start
    triggers = [
        await connect(f"ws://{HOST}:{port}/trigger", proxy=None, ping_interval=None)
        for port in ports
    ]
    receiving = [asyncio.ensure_future(ws.receive()) for ws in sockets]
    await asyncio.sleep(SETTLE_S)  # as for the site
    with client_measuring():
        t0 = time.perf_counter()
        await asyncio.gather(*(trigger.send("go") for trigger in triggers))
        answers = [json.loads(await trigger.recv()) for trigger in triggers]
        done, _ = await asyncio.wait(receiving, timeout=EVENT_WAIT)
    got = [(i, task.result()) for i, task in enumerate(receiving) if task in done]
    stamps = {port: answer["t0"] for port, answer in zip(ports, answers, strict=True)}
    walls = [sockets[i].last_wall for i, message in got if message is not None]
    from_publish = sorted(
        sockets[i].last_wall - stamps[ports[i % len(ports)]] for i, message in got if message
    )
    # perf_counter and time.time() tick together over a second: the trigger's origin in
    # time.time() is its perf_counter moment shifted by the offset between the two clocks.
    offset = time.time() - time.perf_counter()
    from_trigger = sorted(w - (t0 + offset) for w in walls)
    for trigger in triggers:
        await trigger.close()
    for ws in sockets:
        await ws.close()
    return {
        "clients": count,
        "connect_s": connect_s,
        "missed": count - len(walls),
        "write_s": max(answer["write_s"] for answer in answers),
        "from_publish": from_publish,
        "from_trigger": from_trigger,
        "spread": sorted(w - min(walls) for w in walls) if walls else [],
    }


def bare_start(count: int, frame: str, scratch: Path) -> tuple[list[int], list[Any]]:
    frame_file = scratch / "frame.json"
    frame_file.write_text(frame, encoding="utf-8")
    ports = [free_port() for _ in range(count)]
    servers = [
        subprocess.Popen(
            [
                sys.executable,
                str(ROOT / "benchmarks" / "bare_fanout.py"),
                "--port",
                str(port),
                "--frame",
                str(frame_file),
            ],
            stdout=subprocess.PIPE,
        )
        for port in ports
    ]
    for server in servers:
        assert server.stdout is not None and server.stdout.readline().strip() == b"ready"
    return ports, servers


def stop(servers: list[Any]) -> None:
    for server in servers:
        server.terminate()
    for server in servers:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()


def p50_p99(values: list[float]) -> str:
    if not values:
        return "—"
    return f"{ms(quantile(values, 0.5))} / {ms(quantile(values, 0.99))}"


def ratio(site: list[float], bare: list[float]) -> float | None:
    if not site or not bare or quantile(bare, 0.99) <= 0:
        return None
    return quantile(site, 0.99) / quantile(bare, 0.99)


def quantile(sorted_values: list[float], q: float) -> float:
    """Nearest-rank quantile of an already sorted list."""
    rank = max(1, -(-len(sorted_values) * q // 1))
    return sorted_values[int(rank) - 1]


def raise_fd_limit() -> int:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 16_384 if hard == resource.RLIM_INFINITY else min(hard, 16_384)
    if soft < wanted:
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def ms(seconds: float | None) -> str:
    return "—" if seconds is None else f"{seconds * 1000:.0f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, nargs="+", default=list(SIZES))
    parser.add_argument(
        "--servers", type=int, default=1, help="server processes sharing the Redis layer"
    )
    parser.add_argument("--redis-url", default=REDIS_URL, help=f"the layer's Redis ({REDIS_URL})")
    parser.add_argument(
        "--bare",
        action="store_true",
        help="then the same clients on as many bare servers (bare_fanout.py), the same frame",
    )
    args = parser.parse_args(argv)
    fds = raise_fd_limit()  # the server inherits it: two sockets per client on each side

    scratch = Path(tempfile.mkdtemp(prefix="sl5r-fanout-"))
    env = {
        **os.environ,
        # Another settings module may be measured: DJANGO_SETTINGS_MODULE=... (see README).
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "sl5r.settings"),
        "DATABASE_URL": f"sqlite:///{scratch / 'bench.sqlite3'}",
        "REDIS_URL": args.redis_url,
        "SECRET_KEY": secrets.token_urlsafe(40),
        "DEBUG": "0",
        "SECURE_SSL_REDIRECT": "0",
        "LOG_LEVEL": "WARNING",
        "DJANGO_LOG_LEVEL": "WARNING",
    }
    os.environ.update(env)
    tournament_id, key = build_tournament()

    ports = [free_port() for _ in range(args.servers)]
    log = (scratch / "server.log").open("wb")
    servers = [
        subprocess.Popen(
            [sys.executable, "manage.py", "serve", "--port", str(port), "--no-clock", "-v", "0"],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        for port in ports
    ]
    rows = []
    try:
        for port, server in zip(ports, servers, strict=True):
            asyncio.run(wait_until_serving(port, tournament_id, server))
        for count in args.clients:
            rows.append(asyncio.run(run_round(ports, tournament_id, key, count)))
    finally:
        stop(servers)
        log.close()
    bare_rows = []
    if args.bare:
        frame = next((r["frame"] for r in reversed(rows) if r["frame"]), "")
        if not frame:
            raise RuntimeError("no client received an event: no frame for the bare servers")
        bare_ports, bare_servers = bare_start(args.servers, frame, scratch)
        try:
            for count in args.clients:
                bare_rows.append(asyncio.run(bare_round(bare_ports, count)))
        finally:
            stop(bare_servers)

    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(
        f"machine: {platform.system()} {platform.machine()}, nproc {os.cpu_count()}, "
        f"Python {platform.python_version()}; load average {load}; file descriptors {fds}"
    )
    print(
        f"server: manage.py serve --no-clock (Daphne) × {args.servers} process(es), "
        f"settings {env['DJANGO_SETTINGS_MODULE']}, REDIS_URL {args.redis_url}, SQLite scratch "
        f"database, DEBUG off; server log {scratch / 'server.log'}"
    )
    print(
        "time from the resolve-now POST until the client holds the new turn "
        "(the state in the event, else event + GET state)"
    )
    print()
    print(
        "| clients | connect all | POST answered | median | p99 | max "
        "| event only: median / p99 | missed the event | socket dropped | had to fetch "
        "| on the old turn |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['clients']:,} | {r['connect_s']:.1f} s | {ms(r['post_s'])} | {ms(r['median'])} "
            f"| {ms(r['p99'])} | {ms(r['max'])} | {ms(r['event_median'])} / {ms(r['event_p99'])} "
            f"| {r['missed']} | {r['dropped']} | {r['fetched']} | {r['old_turn']} |"
        )
    errors = (scratch / "server.log").read_text(errors="replace").count("Exception inside")
    print(f"\nserver: {errors} exceptions inside the application (see the server log)")
    print()
    target = next((r for r in rows if r["clients"] == TARGET_CLIENTS), None)
    if target is None:
        print(f"(no {TARGET_CLIENTS}-client round: no verdict)")
    else:
        fast = target["p99"] < TARGET_P99
        print(
            ("PASS" if fast else "MISS")
            + f"  {TARGET_CLIENTS} clients, p99 under {TARGET_P99:g} s: {ms(target['p99'])}"
        )
    stale = sum(r["old_turn"] for r in rows)
    print(("PASS" if stale == 0 else "MISS") + f"  no client left on the old turn: {stale}")
    if bare_rows:
        print_comparison(rows, bare_rows, args.servers)
    return 0


def print_comparison(rows: list[dict[str, Any]], bare_rows: list[dict[str, Any]], n: int) -> None:
    frame = next((r["frame"] for r in reversed(rows) if r["frame"]), "")
    print()
    print(
        f"site against bare (bare_fanout.py × {n} process(es), the same clients, the frame "
        f"the site sent: {len(frame.encode()):,} bytes); p50 / p99, the ratio of the p99s:"
    )
    print(
        "- from publish: site, from the event's state's server_time (built after the commit, "
        "just before the send to the layer) to each client's receipt; bare, from the server's "
        "stamp when the trigger arrived"
    )
    print(
        "- from trigger: site, from the resolve-now POST (includes resolving the turn); bare, "
        "from the trigger's send"
    )
    print("- spread: from the first client's receipt to each client's (both)")
    print()
    print(
        "| clients | site from publish | bare from publish | ratio | site from trigger "
        "| bare from trigger | ratio | site spread | bare spread | ratio | missed site / bare |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for site, bare in zip(rows, bare_rows, strict=True):
        cells = []
        for origin in ("from_publish", "from_trigger", "spread"):
            r = ratio(site[origin], bare[origin])
            cells += [
                p50_p99(site[origin]),
                p50_p99(bare[origin]),
                "—" if r is None else f"×{r:.2f}",
            ]
        print(
            f"| {site['clients']:,} | "
            + " | ".join(cells)
            + f" | {site['missed']} / {bare['missed']} |"
        )
    print()
    for site, bare in zip(rows, bare_rows, strict=True):
        r = ratio(site["from_publish"], bare["from_publish"])
        verdict = "PASS" if r is not None and r <= TARGET_RATIO else "MISS"
        shown = "—" if r is None else f"×{r:.2f}"
        print(
            f"{verdict}  {site['clients']:,} clients over {n} process(es), p99 from publish "
            f"{shown} the bare server's (target ≤ ×{TARGET_RATIO:g})"
        )
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average at the end: {load}")


if __name__ == "__main__":
    raise SystemExit(main())
