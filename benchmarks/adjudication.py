"""How long adjudicating one turn takes, against the targets (a measurement, not a test).

    .venv/bin/python benchmarks/adjudication.py [--quick] [--gc] [--seed N]

Times ``sl5r.rules.adjudicate_turn`` alone (the map built, the armies and orders made
beforehand) for 48 armies on the bundled map and for 1,000 / 10,000 / 100,000 armies on
generated maps of 500 / 5,000 / 50,000 provinces (benchmarks/mapgen.py). Like ``timeit``,
each repeat runs the call enough times to last about 0.2 s (at least once) with the garbage
collector off (``--gc`` keeps it on), and the table shows the median and the best time per
call over the repeats, the median per army, and the growth between sizes ten times apart.
Targets: 48 armies under 1 ms; 10,000 under 100 ms; ×10 armies → at most ×12 time.
The verdicts are informational: the script always exits 0.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.mapgen import (  # noqa: E402
    armies_near_homes,
    generate_map,
    random_orders,
    spread_armies,
    turn_state,
)
from sl5r.rules import Order, TurnState, adjudicate_turn, map_from_dict, rokugan_map  # noqa: E402

TARGET_SMALL_SECONDS = 1e-3  # 48 armies on the bundled map
TARGET_10K_SECONDS = 100e-3  # 10,000 armies
TARGET_GROWTH = 12.0  # time ratio for ×10 armies
REPEAT_SECONDS = 0.2  # each repeat runs the call about this long, as timeit's autorange


@dataclass(frozen=True)
class Case:
    name: str
    state: TurnState
    orders: Sequence[Order]
    repeats: int
    quick_repeats: int

    @property
    def armies(self) -> int:
        return len(self.state.armies)

    @property
    def provinces(self) -> int:
        return len(self.state.game_map.provinces)


@dataclass(frozen=True)
class Timing:
    case: Case
    loops: int
    times: list[float]  # seconds per call, one per repeat

    @property
    def median(self) -> float:
        return statistics.median(self.times)

    @property
    def best(self) -> float:
        return min(self.times)


def build_cases(seed: int) -> list[Case]:
    """The four sizes of the brief; maps, armies and orders are seeded."""
    cases: list[Case] = []
    bundled = rokugan_map()
    armies = armies_near_homes(bundled, 6, seed=seed)
    cases.append(
        Case(
            name="bundled map",
            state=turn_state(bundled, armies),
            orders=random_orders(bundled, armies, seed=seed),
            repeats=25,
            quick_repeats=7,
        )
    )
    for count, provinces, repeats, quick in (
        (1_000, 500, 15, 5),
        (10_000, 5_000, 15, 3),
        (100_000, 50_000, 7, 2),
    ):
        game_map = map_from_dict(generate_map(provinces, seed=seed), place="generated")
        armies = spread_armies(game_map, count, seed=seed)
        cases.append(
            Case(
                name="generated map",
                state=turn_state(game_map, armies),
                orders=random_orders(game_map, armies, seed=seed),
                repeats=repeats,
                quick_repeats=quick,
            )
        )
    return cases


def _loops_for(call: Callable[[], object]) -> int:
    """As timeit's autorange: 1, 2, 5, 10, 20 … calls until a run lasts REPEAT_SECONDS."""
    loops = 1
    while True:
        for factor in (1, 2, 5):
            n = loops * factor
            start = time.perf_counter()
            for _ in range(n):
                call()
            if time.perf_counter() - start >= REPEAT_SECONDS:
                return n
        loops *= 10


def measure(case: Case, *, quick: bool, keep_gc: bool, seed: int) -> Timing:
    rng = random.Random(seed)

    def call() -> object:
        return adjudicate_turn(case.state, case.orders, rng=rng, rng_label=f"seed {seed}")

    repeats = case.quick_repeats if quick else case.repeats
    was_enabled = gc.isenabled()
    if not keep_gc:
        gc.disable()
    try:
        loops = _loops_for(call)  # also the warm-up
        times: list[float] = []
        for _ in range(repeats):
            start = time.perf_counter()
            for _ in range(loops):
                call()
            times.append((time.perf_counter() - start) / loops)
    finally:
        if was_enabled:
            gc.enable()
        gc.collect()
    return Timing(case=case, loops=loops, times=times)


def _duration(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def report(timings: Sequence[Timing]) -> list[str]:
    header = (
        "| case | armies | provinces | orders | repeats × loops | median | best"
        " | per army (median) | growth (×armies → ×time) |"
    )
    lines = [header, "|" + "---|" * 9]
    previous: Timing | None = None
    for t in timings:
        growth = "—"
        if previous is not None and t.case.armies == 10 * previous.case.armies:
            growth = f"×10 → ×{t.median / previous.median:.1f} (best ×{t.best / previous.best:.1f})"
        lines.append(
            f"| {t.case.name} | {t.case.armies:,} | {t.case.provinces:,} | {len(t.case.orders):,}"
            f" | {len(t.times)} × {t.loops} | {_duration(t.median)} | {_duration(t.best)}"
            f" | {_duration(t.median / t.case.armies)} | {growth} |"
        )
        previous = t
    return lines


def verdicts(timings: Sequence[Timing]) -> list[str]:
    """PASS or MISS for every target, judged on the median."""

    def verdict(ok: bool) -> str:
        return "PASS" if ok else "MISS"

    lines: list[str] = []
    by_armies = {t.case.armies: t for t in timings}
    small = timings[0]
    lines.append(
        f"{verdict(small.median < TARGET_SMALL_SECONDS)}  {small.case.armies} armies on the"
        f" bundled map under {_duration(TARGET_SMALL_SECONDS)}: median {_duration(small.median)}"
    )
    if 10_000 in by_armies:
        t = by_armies[10_000]
        lines.append(
            f"{verdict(t.median < TARGET_10K_SECONDS)}  10,000 armies under"
            f" {_duration(TARGET_10K_SECONDS)}: median {_duration(t.median)}"
        )
    for before, after in itertools.pairwise(timings):
        if after.case.armies == 10 * before.case.armies:
            ratio = after.median / before.median
            lines.append(
                f"{verdict(ratio <= TARGET_GROWTH)}  {before.case.armies:,} → {after.case.armies:,}"
                f" armies (×10): time ×{ratio:.1f} (median), target at most ×{TARGET_GROWTH:g}"
            )
    return lines


def machine() -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "?"
    return (
        f"{platform.system()} {platform.machine()}, nproc {os.cpu_count()},"
        f" Python {platform.python_version()} ({platform.python_implementation()});"
        f" load average {load}"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--gc", action="store_true", help="keep the garbage collector on")
    parser.add_argument("--seed", type=int, default=1, help="seed of maps, armies, orders")
    args = parser.parse_args(argv)

    print(f"machine: {machine()}")
    print(
        f"timing adjudicate_turn only; gc {'on' if args.gc else 'off'};"
        f" {'quick' if args.quick else 'full'} run; seed {args.seed}"
    )
    start = time.perf_counter()
    cases = build_cases(args.seed)
    print(f"maps, armies and orders built in {time.perf_counter() - start:.1f} s\n")
    timings: list[Timing] = []
    for case in cases:
        timings.append(measure(case, quick=args.quick, keep_gc=args.gc, seed=args.seed))
    for line in report(timings):
        print(line)
    print()
    for line in verdicts(timings):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
