"""Resolving a stored turn: SQL queries and time for 8, 48, 480 and 4,800 armies.

A measurement, not a test: prints a table and the verdicts against the targets (the query
count does not grow with the armies; 48 armies under 100 ms on SQLite) and exits 0.

    .venv/bin/python benchmarks/resolve_turn.py                 # SQLite in a temporary file
    .venv/bin/python benchmarks/resolve_turn.py --postgres URL  # e.g. postgres://postgres@127.0.0.1:5432/test

The database is a fresh one made for the run (a temporary SQLite file, or a scratch
database created beside URL's and dropped afterwards). Each size builds a campaign on the
bundled map through the services, places the armies, gives most of them a random legal
move, and times ``strategic_map.services.turn_resolve`` alone, inside its transaction.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on PostgreSQL instead")
    args = parser.parse_args(argv)
    where = configure(args.postgres)
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
