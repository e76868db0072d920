"""Resolving a stored turn: SQL queries and time for 8, 48, 480 and 4,800 armies.

A measurement, not a test: prints a table and the verdicts against the targets (the query
count does not grow with the armies; 48 armies under 100 ms on SQLite) and exits 0.

    .venv/bin/python benchmarks/resolve_turn.py                 # SQLite in a temporary file
    .venv/bin/python benchmarks/resolve_turn.py --postgres URL  # e.g. postgres://postgres@127.0.0.1:5432/test
    .venv/bin/python benchmarks/resolve_turn.py --tournament    # a whole tournament's resolution
    .venv/bin/python benchmarks/resolve_turn.py --tournament --profile   # and where the sync spends

The database is a fresh one made for the run (a temporary SQLite file, or a scratch
database created beside URL's and dropped afterwards). Each size builds a campaign on the
bundled map through the services, places the armies, gives most of them a random legal
move, and times ``strategic_map.services.turn_resolve`` alone, inside its transaction.

``--tournament`` measures instead what a judge's "resolve now" costs a running tournament
(``referees.services.clock_resolve_now``: the lock, the turn, the log, the battles' sync, the
next turn, the commit), for 16 players (16 Generals) and 48 players (32 Generals, R1's
line-up) built through the services, over three turns: every General moves at random
(tables open), a judge starts a battle at the first table and every other General moves again
(tables gain and lose armies, disperse, a battle is reinforced), then a quiet turn (no order:
the tables stay as they were). It prints the time and the queries of the whole resolution and
of the battles' sync (``battles.services.lifecycle.battles_sync``, wrapped for the run) and
their share, per resolution and per army.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import os
import pstats
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = (8, 48, 480, 4_800)
REPEATS = 5


def configure(postgres: str | None) -> str:
    """Point Django at a scratch database and return a description of it."""
    if postgres:
        parts = urlsplit(postgres)
        scratch = f"sl5r_bench_{os.getpid()}"
        import psycopg

        with psycopg.connect(postgres, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{scratch}"')
        os.environ["DATABASE_URL"] = urlunsplit(parts._replace(path=f"/{scratch}"))
        os.environ["SL5R_BENCH_DROP"] = f"{postgres}|{scratch}"
        return f"PostgreSQL ({parts.hostname}:{parts.port or 5432}, scratch database)"
    path = Path(tempfile.mkdtemp()) / "bench.sqlite3"
    os.environ["DATABASE_URL"] = f"sqlite:///{path}"
    return "SQLite (WAL, temporary file)"


def drop_scratch() -> None:
    spec = os.environ.get("SL5R_BENCH_DROP")
    if not spec:
        return
    from django.db import connections

    connections.close_all()
    url, name = spec.split("|")
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}"')


def run() -> list[tuple[int, int, list[float]]]:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection, transaction
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    from sl5r.rules.clans import CLANS
    from sl5r.rules.mapgraph import rokugan_map
    from strategic_map.models import Army, Order
    from strategic_map.services import (
        board_place,
        campaign_create,
        map_import,
        turn_open,
        turn_resolve,
    )

    call_command("migrate", verbosity=0)
    game_map = map_import(slug="rokugan", data=rokugan_map().to_dict())
    graph = rokugan_map()
    provinces = sorted(graph.provinces)
    rows: list[tuple[int, int, list[float]]] = []
    for size in SIZES:
        times: list[float] = []
        queries = 0
        for repeat in range(REPEATS):
            rng = random.Random(size * 100 + repeat)
            campaign = campaign_create(game_map=game_map)
            armies = Army.objects.bulk_create(
                Army(campaign=campaign, code=f"a{i}", clan=CLANS[i % len(CLANS)])
                for i in range(size)
            )
            for army in armies:
                board_place(campaign=campaign, army=army, province=rng.choice(provinces))
            campaign.save()
            now = timezone.now()
            turn = turn_open(campaign=campaign, number=1, now=now, deadline=None)
            orders = []
            for army in armies:
                if rng.random() < 0.85:
                    here = campaign.board["armies"][army.code]["province"]
                    target = rng.choice(sorted(graph.neighbours[here]))
                    orders.append(
                        Order(
                            turn=turn,
                            army=army,
                            kind="move",
                            path=[target],
                            created_at=now,
                            author="bench",
                        )
                    )
            Order.objects.bulk_create(orders)
            connection.queries_log.clear()  # the log keeps 9,000 queries at most
            with CaptureQueriesContext(connection) as captured:
                start = time.perf_counter()
                with transaction.atomic():
                    turn_resolve(turn_id=turn.pk, now=now, by="bench", rng=rng)
                times.append(time.perf_counter() - start)
            queries = len(captured)
            Army.objects.filter(campaign=campaign).delete()
        rows.append((size, queries, times))
    return rows


# --- A whole tournament's resolution (--tournament) -------------------------------------------

TOURNAMENT_PLAYERS = (16, 48)
TOURNAMENT_REPEATS = 5  # --repeats
TURN_KINDS = ("moves", "moves again", "quiet")
SYNC_NAME = "battles_sync"  # as referees.services.clock imports it
# The sync's queries whatever the turn: the open tables and their seats (2), the newcomers'
# army rows (1), new tables (1), seats gone (1) and new (1), tables changed, one statement per
# kind of change (3: seats, dispersal, reinforcement), the log lines (1), the snapshot (1).
SYNC_QUERY_BOUND = 11


@dataclass
class Resolution:
    """One turn's resolution: the whole of it and the battles' sync within it."""

    players: int
    generals: int
    kind: str
    total: float  # seconds
    total_queries: int
    sync: float
    sync_queries: int
    tables: int  # open tables after it
    meetings: int


@dataclass
class SyncMeter:
    """Times ``battles_sync`` and counts its queries each time the clock calls it."""

    calls: list[tuple[float, int]] = field(default_factory=list)
    profiler: cProfile.Profile | None = None

    def wrap(self, function: Callable[..., None]) -> Callable[..., None]:
        from django.db import connection
        from django.test.utils import CaptureQueriesContext

        def timed(**kwargs: Any) -> None:
            with CaptureQueriesContext(connection) as captured:
                start = time.perf_counter()
                if self.profiler is not None:
                    self.profiler.enable()
                try:
                    function(**kwargs)
                finally:
                    if self.profiler is not None:
                        self.profiler.disable()
                    elapsed = time.perf_counter() - start
            self.calls.append((elapsed, len(captured)))

        return timed


def tournament_build(players: int, number: int) -> tuple[int, Any, list[str]]:
    """A running tournament of ``players`` on the bundled map, turn 1 open; its id, the
    judge's actor and its armies' codes."""
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from referees import services
    from referees.models import Player
    from sl5r.rules.mapgraph import rokugan_map
    from sl5r.rules.roles import lineup_propose
    from strategic_map.models import Map

    graph = rokugan_map()
    game_map = Map.objects.get(slug="rokugan")
    judge = get_user_model().objects.create_user(username=f"bench-judge-{number}", password=None)
    actor = services.Actor.of_user(judge)
    now = timezone.now()
    tournament = services.tournament_create(
        name=f"Resolve {number}", judge=judge, game_map=game_map, player_count=players, now=now
    )
    for clan, roles in lineup_propose(players).clans.items():
        for i, role in enumerate(roles, start=1):
            services.player_register(
                tournament=tournament,
                name=f"{clan.title()} {role.value} {i}",
                clan=clan,
                role=role.value,
                actor=actor,
                now=now,
            )
    services.tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
    codes_by_clan: dict[str, list[str]] = {}
    for player in Player.objects.filter(tournament=tournament).select_related("army"):
        if player.army is not None:
            codes_by_clan.setdefault(player.clan, []).append(player.army.code)
    for clan, codes in codes_by_clan.items():
        homes = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))
        services.start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions=dict(zip(sorted(codes), homes, strict=False)),
            actor=actor,
            now=now,
        )
    services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    return tournament.pk, actor, sorted(c for codes in codes_by_clan.values() for c in codes)


def random_moves(tournament_id: int, actor: Any, rng: random.Random) -> None:
    """Every General free to move gives a random legal move (a judge's paper order)."""
    from django.utils import timezone

    from referees import services
    from referees.models import Tournament
    from sl5r.rules.mapgraph import rokugan_map
    from sl5r.rules.turn import Order as RulesOrder
    from sl5r.rules.turn import order_check
    from strategic_map.selectors import campaign_open_turn, campaign_turn_state

    graph = rokugan_map()
    campaign = Tournament.objects.select_related("campaign").get(pk=tournament_id).campaign
    turn = campaign_open_turn(campaign)
    assert turn is not None
    state = campaign_turn_state(campaign, turn=turn.number)
    for code, spot in sorted(campaign.board["armies"].items()):
        here = spot.get("province")
        if here is None:
            continue
        targets = [
            p
            for p in sorted(graph.neighbours[here])
            if order_check(state, RulesOrder(army=code, move=(p,))) is None
        ]
        if targets:
            services.order_enter(
                tournament_id=tournament_id,
                army_code=code,
                order=services.OrderInput(kind="move", path=(rng.choice(targets),)),
                actor=actor,
                now=timezone.now(),
            )


def battle_start_first(tournament_id: int, actor: Any) -> None:
    """A judge records a "battle" vote at the first table still gathering: the battle starts
    (R7)."""
    from django.utils import timezone

    from battles.models import GATHERING_STATUSES, Battle
    from battles.services.play import meeting_vote

    battle = (
        Battle.objects.filter(tournament_id=tournament_id, status__in=GATHERING_STATUSES)
        .order_by("province")
        .first()
    )
    if battle is None:
        return
    seat = battle.seats.select_related("army").order_by("id").first()
    assert seat is not None
    meeting_vote(
        battle_id=battle.pk,
        army_code=seat.army.code,
        vote="battle",
        actor=actor,
        now=timezone.now(),
    )


def tournament_run(profile: bool, repeats: int) -> tuple[list[Resolution], cProfile.Profile | None]:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")
    django.setup()
    from django.core.management import call_command
    from django.db import connection
    from django.test.utils import CaptureQueriesContext
    from django.utils import timezone

    import referees.services.clock as clock_module
    from battles.models import OPEN_STATUSES, Battle
    from referees import services
    from referees.models import LogEntry
    from sl5r.rules.mapgraph import rokugan_map
    from strategic_map.services import map_import

    call_command("migrate", verbosity=0)
    map_import(slug="rokugan", data=rokugan_map().to_dict())
    meter = SyncMeter(profiler=cProfile.Profile() if profile else None)
    # The name the clock calls, wrapped for the run: the services themselves are unchanged.
    original = getattr(clock_module, SYNC_NAME)
    setattr(clock_module, SYNC_NAME, meter.wrap(original))
    rows: list[Resolution] = []
    number = 0
    try:
        for players in TOURNAMENT_PLAYERS:
            for repeat in range(repeats):
                number += 1
                rng = random.Random(players * 100 + repeat)
                tournament_id, actor, codes = tournament_build(players, number)
                for turn, kind in enumerate(TURN_KINDS, start=1):
                    if kind == "moves":
                        random_moves(tournament_id, actor, rng)
                    elif kind == "moves again":
                        battle_start_first(tournament_id, actor)
                        random_moves(tournament_id, actor, rng)
                    connection.queries_log.clear()
                    meter.calls.clear()
                    with CaptureQueriesContext(connection) as captured:
                        start = time.perf_counter()
                        services.clock_resolve_now(
                            tournament_id=tournament_id,
                            actor=actor,
                            now=timezone.now(),
                            turn=turn,
                        )
                        total = time.perf_counter() - start
                    ((sync, sync_queries),) = meter.calls
                    resolved = LogEntry.objects.filter(
                        tournament_id=tournament_id, action="turn_resolved", turn=turn
                    ).get()
                    rows.append(
                        Resolution(
                            players=players,
                            generals=len(codes),
                            kind=kind,
                            total=total,
                            total_queries=len(captured),
                            sync=sync,
                            sync_queries=sync_queries,
                            tables=Battle.objects.filter(
                                tournament_id=tournament_id, status__in=OPEN_STATUSES
                            ).count(),
                            meetings=len(resolved.data.get("meetings", [])),
                        )
                    )
    finally:
        setattr(clock_module, SYNC_NAME, original)
    return rows, meter.profiler


def tournament_report(
    rows: list[Resolution], profiler: cProfile.Profile | None, repeats: int
) -> None:
    print(
        f"each size: {repeats} fresh tournaments; the figures are medians over them "
        "(queries: the largest)\n"
    )
    print(
        "| players (Generals) | turn | meetings | open tables after | resolution | queries "
        "| per army | battles' sync | sync queries | sync share |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    groups: dict[tuple[int, str], list[Resolution]] = {}
    for row in rows:
        groups.setdefault((row.players, row.kind), []).append(row)
    for (players, kind), group in groups.items():
        generals = group[0].generals
        total = statistics.median(r.total for r in group) * 1000
        sync = statistics.median(r.sync for r in group) * 1000
        share = statistics.median(r.sync / r.total for r in group) * 100
        print(
            f"| {players} ({generals}) | {kind} | {statistics.median(r.meetings for r in group):g} "
            f"| {statistics.median(r.tables for r in group):g} | {total:.1f} ms "
            f"| {max(r.total_queries for r in group)} | {total / generals:.2f} ms "
            f"| {sync:.1f} ms | {max(r.sync_queries for r in group)} | {share:.0f} % |"
        )
    print()
    most: dict[tuple[str, int], int] = {}
    for row in rows:
        key = (row.kind, row.players)
        most[key] = max(most.get(key, 0), row.sync_queries)
    counts = ", ".join(
        f"{kind}: {' → '.join(str(most[(kind, n)]) for n in TOURNAMENT_PLAYERS)}"
        for kind in TURN_KINDS
    )
    worst = max(most.values())
    print(
        ("PASS" if worst <= SYNC_QUERY_BOUND else "MISS")
        + f"  the battles' sync makes at most {SYNC_QUERY_BOUND} queries whatever the tables and "
        f"armies: the most per turn, {' → '.join(map(str, TOURNAMENT_PLAYERS))} players: {counts}"
    )
    if profiler is not None:
        out = io.StringIO()
        stats = pstats.Stats(profiler, stream=out)
        stats.sort_stats("cumulative").print_stats(25)
        print("\nWhere the battles' sync spends its time (cProfile, every resolution above):")
        print(out.getvalue())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on PostgreSQL instead")
    parser.add_argument(
        "--tournament",
        action="store_true",
        help="a whole tournament's resolution and its battles' sync instead",
    )
    parser.add_argument(
        "--profile", action="store_true", help="with --tournament: cProfile of the battles' sync"
    )
    parser.add_argument(
        "--repeats",
        type=int,
        default=TOURNAMENT_REPEATS,
        help=f"with --tournament: fresh tournaments per size ({TOURNAMENT_REPEATS})",
    )
    args = parser.parse_args(argv)
    where = configure(args.postgres)
    if args.tournament:
        try:
            resolutions, profiler = tournament_run(args.profile, args.repeats)
        finally:
            drop_scratch()
        print(
            f"database: {where}; Python {sys.version.split()[0]}; {os.cpu_count()} cores; "
            f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}"
        )
        tournament_report(resolutions, profiler, args.repeats)
        return 0
    try:
        rows = run()
    finally:
        drop_scratch()
    print(f"database: {where}; Python {sys.version.split()[0]}; {os.cpu_count()} cores")
    print(f"each size: {REPEATS} fresh campaigns on the bundled map, ~85 % of armies moving\n")
    print("| armies | SQL queries | median | best |")
    print("|---|---|---|---|")
    for size, queries, times in rows:
        print(
            f"| {size:,} | {queries} | {statistics.median(times) * 1000:.1f} ms "
            f"| {min(times) * 1000:.1f} ms |"
        )
    counts = {q for _, q, _ in rows}
    print()
    print(("PASS" if len(counts) == 1 else "MISS") + f"  query count constant: {sorted(counts)}")
    median48 = statistics.median(next(t for s, _, t in rows if s == 48)) * 1000
    verdict = "PASS" if median48 < 100 else "MISS"
    print(f"{verdict}  48 armies under 100 ms: median {median48:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
