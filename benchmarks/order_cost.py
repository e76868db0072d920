"""What one order costs in-process, against a minimal view doing one INSERT.

A measurement, not a test: prints the medians, the ratio, the SQL statements of each and the
verdict against the target (an order at most 2× the minimal view) and exits 0.

    .venv/bin/python benchmarks/order_cost.py                  # SQLite in a temporary file
    .venv/bin/python benchmarks/order_cost.py --postgres URL   # e.g. postgres://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/order_cost.py --rounds 400     # more requests of each

No server and no network: both requests go through Django's whole handler in this process
(``django.test.Client``), so the same middleware (``settings.MIDDLEWARE``) runs for both.

- **order**: ``PUT /api/tournaments/{id}/orders/mine`` with a General's join token (bearer),
  a legal move to a neighbouring province, alternating between two so that no order repeats
  the one before (a repeat is cheaper: nothing is stored). The 48 Generals of
  ``order_burst.build`` (two 24-player tournaments, turn 1 open) take turns.
- **one INSERT**: ``POST /bench/insert``, a plain Django view added for the run (its own
  URLconf, the site's patterns plus this one) that inserts one log line
  (``LogEntry.objects.create``) and answers 204.

They alternate, one of each per round, after a warm-up of 48 rounds that is not counted. The
order rate limit is raised for the run (it is counted, as in production: one cache ``incr``
an order). The garbage collector runs as usual. The statements are counted for one request
of each after the warm-up (``CaptureQueriesContext``), BEGIN/COMMIT included, as the
database sees them.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
import types
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.order_burst import (  # noqa: E402 (needs ROOT on the path)
    build,
    configure,
    drop_scratch,
    load_average,
    machine,
    urlconf_with,
)

TARGET_RATIO = 2.0


def bench_urlconf() -> types.ModuleType:
    """The site's URLs plus ``bench/insert``: the minimal view to compare an order with."""
    from django.http import HttpRequest, HttpResponse
    from django.utils import timezone
    from django.views.decorators.csrf import csrf_exempt

    from referees.models import LogEntry, Tournament

    tournament_id = Tournament.objects.values_list("pk", flat=True).first()

    @csrf_exempt
    def insert(request: HttpRequest) -> HttpResponse:
        LogEntry.objects.create(
            tournament_id=tournament_id, at=timezone.now(), actor="bench", action="bench", data={}
        )
        return HttpResponse(status=204)

    return urlconf_with("bench/insert", insert)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on PostgreSQL instead")
    parser.add_argument("--rounds", type=int, default=300, help="requests of each (default 300)")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="sl5r-cost-"))
    scratch: str | None = None
    try:
        where, scratch = configure(args.postgres, workdir)
        generals = build()
        from django.conf import settings
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        from sl5r.serving.threaded_http import worker_start

        settings.ROOT_URLCONF = bench_urlconf()
        settings.SL5R_RATE_LIMITS = {**settings.SL5R_RATE_LIMITS, "orders": "1000000/min"}
        settings.DEBUG = False  # as the site runs; the queries are still counted below
        # As in the server's request threads: a broadcast is handed to the server's event
        # loop, not sent and waited for (sl5r/serving/threaded_http.py).
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, daemon=True).start()
        worker_start(loop)
        client = Client(HTTP_HOST="127.0.0.1")

        def order(i: int) -> Any:
            g = generals[i % len(generals)]
            body = json.dumps({"kind": "move", "path": [g.target(i // len(generals))]})
            return client.put(
                f"/api/tournaments/{g.tournament_id}/orders/mine",
                body,
                content_type="application/json",
                HTTP_AUTHORIZATION=f"Bearer {g.token}",
            )

        def insert(_i: int) -> Any:
            return client.post("/bench/insert")

        kinds = {"order": order, "one INSERT": insert}
        expected = {"order": 200, "one INSERT": 204}
        times: dict[str, list[float]] = {k: [] for k in kinds}
        warm = len(generals)
        for i in range(warm + args.rounds):
            for name, call in kinds.items():
                started = time.perf_counter()
                response = call(i)
                elapsed = time.perf_counter() - started
                if response.status_code != expected[name]:
                    raise SystemExit(f"{name}: {response.status_code} {response.content[:300]!r}")
                if i >= warm:
                    times[name].append(elapsed)
        statements: dict[str, list[str]] = {}
        for name, call in kinds.items():
            with CaptureQueriesContext(connection) as captured:
                call(warm + args.rounds)
            statements[name] = [q["sql"] for q in captured.captured_queries]
        load = load_average()
    finally:
        if scratch and args.postgres:
            drop_scratch(args.postgres, scratch)
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"# order_cost.py — {where}; {machine()}; load {load}")
    print(f"{args.rounds} of each, alternating, after {warm} warm-up rounds\n")
    print("| request | median ms | p90 ms | best ms | SQL statements |")
    print("|---|---|---|---|---|")
    medians = {}
    for name, samples in times.items():
        samples.sort()
        medians[name] = statistics.median(samples)
        p90 = samples[int(0.9 * (len(samples) - 1))]
        print(
            f"| {name} | {medians[name] * 1000:.2f} | {p90 * 1000:.2f} | "
            f"{samples[0] * 1000:.2f} | {len(statements[name])} |"
        )
    ratio = medians["order"] / medians["one INSERT"]
    verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
    print(f"\norder / one INSERT: ×{ratio:.2f} (target ≤ ×{TARGET_RATIO:.1f}): {verdict}")
    print("\nthe order's statements:")
    for sql in statements["order"]:
        print(f"  {sql[:150]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
