"""What a cached state read costs in CPU, against an empty view behind the same stack.

A measurement, not a test: prints the CPU medians per request, the ratio, the SQL statements
of one state read and the verdict against the target (issue 42: a state read at an unchanged
version at most 2× the empty view's CPU) and exits 0.

    .venv/bin/python benchmarks/state_read.py                  # SQLite in a temporary file
    .venv/bin/python benchmarks/state_read.py --postgres URL   # e.g. postgres://postgres@127.0.0.1:5432/postgres
    .venv/bin/python benchmarks/state_read.py --reads 6000     # more requests of each

No server and no network: both requests go through Django's whole handler in this process
(``django.test.Client``, ``settings.MIDDLEWARE`` as the site runs it), and each is timed with
``time.process_time()``: the CPU this process spent, not the wall time (the database's own
CPU is another process's and is not counted, as in ``/proc`` per process).

- **state**: ``GET /api/tournaments/{id}/state`` with a General's join token (bearer), the
  48 Generals of ``order_burst.build`` (two 24-player tournaments, turn 1 open) in turn. The
  version does not move, so after the warm-up every read finds its view in the cache
  (``referees.reading.state``): this is the cost of a cache hit through the API.
- **empty view**: ``GET /bench/empty``, a plain Django view added for the run (its own
  URLconf, the site's patterns plus this one) that answers ``{}`` as JSON.

They alternate, one of each per round, after a warm-up of two rounds per General that is
not counted. The statements are counted for one state read after the warm-up
(``CaptureQueriesContext``).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
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
    """The site's URLs plus ``bench/empty``: the empty view to compare a state read with."""
    from django.http import HttpRequest, JsonResponse

    def empty(request: HttpRequest) -> JsonResponse:
        return JsonResponse({})

    return urlconf_with("bench/empty", empty)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", metavar="URL", help="measure on PostgreSQL instead")
    parser.add_argument("--reads", type=int, default=3000, help="requests of each (default 3000)")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="sl5r-state-"))
    scratch: str | None = None
    try:
        where, scratch = configure(args.postgres, workdir)
        generals = build()
        from django.conf import settings
        from django.db import connection
        from django.test import Client
        from django.test.utils import CaptureQueriesContext

        settings.ROOT_URLCONF = bench_urlconf()
        settings.DEBUG = False  # as the site runs; the queries are still counted below
        client = Client(HTTP_HOST="127.0.0.1")

        def state(i: int) -> Any:
            g = generals[i % len(generals)]
            return client.get(
                f"/api/tournaments/{g.tournament_id}/state", HTTP_AUTHORIZATION=f"Bearer {g.token}"
            )

        def empty(_i: int) -> Any:
            return client.get("/bench/empty")

        kinds = {"state (cached)": state, "empty view": empty}
        cpu: dict[str, list[float]] = {k: [] for k in kinds}
        warm = 2 * len(generals)
        for i in range(warm + args.reads):
            for name, call in kinds.items():
                started = time.process_time()
                response = call(i)
                spent = time.process_time() - started
                if response.status_code != 200:
                    raise SystemExit(f"{name}: {response.status_code} {response.content[:300]!r}")
                if i >= warm:
                    cpu[name].append(spent)
        with CaptureQueriesContext(connection) as captured:
            state(warm + args.reads)
        statements = [q["sql"] for q in captured.captured_queries]
        load = load_average()
    finally:
        if scratch and args.postgres:
            drop_scratch(args.postgres, scratch)
        shutil.rmtree(workdir, ignore_errors=True)

    print(f"# state_read.py — {where}; cache {settings.CACHES['default']['BACKEND']}")
    print(f"{machine()}; load {load}")
    print(f"{args.reads} of each, alternating, after {warm} warm-up rounds\n")
    print("| request | median CPU ms | mean CPU ms | p90 CPU ms | SQL statements |")
    print("|---|---|---|---|---|")
    medians, means = {}, {}
    counts = {"state (cached)": len(statements), "empty view": 0}
    for name, samples in cpu.items():
        samples.sort()
        medians[name] = statistics.median(samples)
        means[name] = statistics.fmean(samples)
        p90 = samples[int(0.9 * (len(samples) - 1))]
        print(
            f"| {name} | {medians[name] * 1000:.3f} | {means[name] * 1000:.3f} | "
            f"{p90 * 1000:.3f} | {counts[name]} |"
        )
    ratio = medians["state (cached)"] / medians["empty view"]
    mean_ratio = means["state (cached)"] / means["empty view"]
    verdict = "PASS" if ratio <= TARGET_RATIO else "MISS"
    print(
        f"\nstate / empty view: ×{ratio:.2f} median, ×{mean_ratio:.2f} mean "
        f"(target ≤ ×{TARGET_RATIO:.1f}): {verdict}"
    )
    print("\nthe state read's statements:")
    for sql in statements:
        print(f"  {sql[:150]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
