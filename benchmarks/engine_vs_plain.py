"""The engine against a plain-Python adjudication of the same rules (a measurement, not a test).

    .venv/bin/python benchmarks/engine_vs_plain.py [--quick] [--seed N]

Builds a 10,000-army turn on a generated 5,000-province map (benchmarks/mapgen.py, seeded)
and writes it as the case file ``manage.py adjudicate`` reads (with the map inline and a
``seed``, so that the random draws repeat). Then, in one run, it times two ways from the
file's JSON text to the output's JSON text:

- the engine: ``manage.py adjudicate FILE``'s own ``handle`` (the command object, called in
  process: reading the file, ``case_from_json``, ``case_run``, the JSON it prints), without
  Django's start-up;
- the plain baseline, benchmarks/plain_turn.py: dicts of ids and sets, no object per army.

The two outputs must be identical (byte for byte) before anything is timed. The repeats
interleave the two, alternating which goes first, with a ``gc.collect()`` before each call
and the collector on (as the command runs); the table shows medians and bests, the ratio of
the medians is judged against the target (engine ≤ 1.0 × the baseline). The same for
``--compact`` output and for a 48-army turn on the bundled map; then the phases of each
side (parse, adjudicate, serialise) timed with the collector off, and, once, the real
command as a subprocess, for reference (Django's start-up included).
The verdict is informational: the script always exits 0.
"""

from __future__ import annotations

import argparse
import gc
import io
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")

import django  # noqa: E402

django.setup()

from benchmarks import plain_turn  # noqa: E402
from benchmarks.mapgen import (  # noqa: E402
    armies_near_homes,
    generate_map,
    random_orders,
    spread_armies,
    turn_state,
)
from sl5r.rules import casefile, map_from_dict, rokugan_map  # noqa: E402
from sl5r.rules.casefile import (  # noqa: E402
    case_from_json,
    case_run,
    case_to_dict,
    result_to_dict,
)
from strategic_map.management.commands.adjudicate import Command  # noqa: E402

TARGET_RATIO = 1.0


def case_text(seed: int, *, armies: int, provinces: int | None) -> str:
    """The case file of a seeded busy turn: generated map inline, or the bundled one."""
    map_ref: str | dict[str, Any]
    if provinces is None:
        game_map, map_ref = rokugan_map(), "rokugan"
        army_list = armies_near_homes(game_map, armies // 8, seed=seed)
    else:
        map_ref = generated = generate_map(provinces, seed=seed)
        game_map = map_from_dict(generated, place="generated")
        army_list = spread_armies(game_map, armies, seed=seed)
    state = turn_state(game_map, army_list)
    data: dict[str, Any] = case_to_dict(
        state=state,
        orders=random_orders(game_map, army_list, seed=seed),
        draws={},
        map_ref=map_ref,
        description=f"benchmark turn, seed {seed} (R4–R9)",
    )
    data["seed"] = seed
    return json.dumps(data, ensure_ascii=False)


def engine_run(path: Path, *, compact: bool = False) -> str:
    """What ``manage.py adjudicate PATH`` prints, by the command's own code, in process."""
    out = io.StringIO()
    command = Command(stdout=out, stderr=io.StringIO())
    command.handle(files=[str(path)], check=False, verify=False, compact=compact)
    return out.getvalue()


def plain_run(path: Path, *, compact: bool = False) -> str:
    return plain_turn.adjudicate_text(path.read_text(encoding="utf-8"), compact=compact)


def _timed(call: Callable[[], object]) -> float:
    gc.collect()
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def interleaved(calls: dict[str, Callable[[], object]], repeats: int) -> dict[str, list[float]]:
    """Seconds per call, the calls interleaved and their order alternated every repeat."""
    names = list(calls)
    times: dict[str, list[float]] = {name: [] for name in names}
    for name in names:
        calls[name]()  # warm-up: the bundled map's cache, imports, the allocator
    for r in range(repeats):
        for name in names if r % 2 == 0 else reversed(names):
            times[name].append(_timed(calls[name]))
    return times


def phases_engine(text: str) -> dict[str, Callable[[], object]]:
    """The command's three steps; its serialiser, or json.dumps before there was one."""
    case = case_from_json(text)
    result = case_run(case)
    to_json = getattr(casefile, "result_to_json", None)
    if to_json is None:
        name = "engine serialise (result_to_dict + json.dumps)"

        def serialise() -> object:
            return json.dumps(result_to_dict(result), indent=2, ensure_ascii=False)
    else:
        name = "engine serialise (result_to_json)"

        def serialise() -> object:
            return to_json(result, indent=2)

    return {
        "engine parse (case_from_json)": lambda: case_from_json(text),
        "engine adjudicate (case_run)": lambda: case_run(case),
        name: serialise,
    }


def phases_plain(text: str) -> dict[str, Callable[[], object]]:
    data = json.loads(text)
    out = plain_turn.adjudicate(data)
    return {
        "plain json.loads": lambda: json.loads(text),
        "plain check + adjudicate": lambda: plain_turn.adjudicate(data),
        "plain json.dumps": lambda: json.dumps(out, indent=2, ensure_ascii=False),
    }


def without_gc(calls: dict[str, Callable[[], object]]) -> dict[str, Callable[[], object]]:
    """The same calls with the collector off: the work itself, whatever else is alive."""

    def off(call: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            gc.disable()
            try:
                return call()
            finally:
                gc.enable()

        return run

    return {name: off(call) for name, call in calls.items()}


def _ms(seconds: float) -> str:
    return f"{seconds * 1e3:.1f} ms" if seconds >= 1e-3 else f"{seconds * 1e6:.0f} µs"


def subprocess_seconds(path: Path, *, compact: bool = False) -> float:
    args = [sys.executable, "manage.py", "adjudicate", str(path)] + (
        ["--compact"] if compact else []
    )
    start = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, capture_output=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"manage.py adjudicate failed: {done.stderr.decode()[-500:]}")
    return seconds


def load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats")
    parser.add_argument("--seed", type=int, default=1, help="seed of the map, armies, orders")
    args = parser.parse_args(argv)
    repeats = 5 if args.quick else 11

    print(
        f"machine: {platform.system()} {platform.machine()}, nproc {os.cpu_count()},"
        f" Python {platform.python_version()}; load average {load()}"
    )
    print(f"engine: sl5r.rules from {Path(sys.modules['sl5r.rules'].__file__ or '').parent}")
    print(f"{'quick' if args.quick else 'full'} run, {repeats} repeats, seed {args.seed}, gc on\n")

    with tempfile.TemporaryDirectory() as tmp:
        cases = {
            "10,000 armies, 5,000 provinces": case_text(args.seed, armies=10_000, provinces=5_000),
            "48 armies, bundled map": case_text(args.seed, armies=48, provinces=None),
        }
        paths: dict[str, Path] = {}
        for i, (name, text) in enumerate(cases.items()):
            paths[name] = Path(tmp) / f"case{i}.json"
            paths[name].write_text(text, encoding="utf-8")

        print(
            "| case | output | engine median | engine best | plain median | plain best"
            " | engine / plain (median) |"
        )
        print("|---|---|---|---|---|---|---|")
        verdict_ratio: float | None = None
        for name, path in paths.items():
            for compact in (False, True):
                engine_out = engine_run(path, compact=compact)
                plain_out = plain_run(path, compact=compact)
                if engine_out != plain_out:
                    print(f"OUTPUTS DIFFER for {name} (compact={compact}): no ratio")
                    return 0
                times = interleaved(
                    {
                        "engine": partial(engine_run, path, compact=compact),
                        "plain": partial(plain_run, path, compact=compact),
                    },
                    repeats if name.startswith("10,000") else repeats * 10,
                )
                e, p = statistics.median(times["engine"]), statistics.median(times["plain"])
                ratio = e / p
                if name.startswith("10,000") and not compact:
                    verdict_ratio = ratio
                print(
                    f"| {name} | {'--compact' if compact else 'indented'}"
                    f" ({len(engine_out) / 1e6:.2f} MB) | {_ms(e)} | {_ms(min(times['engine']))}"
                    f" | {_ms(p)} | {_ms(min(times['plain']))} | ×{ratio:.2f} |"
                )

        big = paths["10,000 armies, 5,000 provinces"]
        text = big.read_text(encoding="utf-8")
        print("\nphases, 10,000 armies, indented output, the collector off (medians):")
        phase_calls = without_gc(phases_engine(text) | phases_plain(text))
        phase_times = interleaved(phase_calls, max(3, repeats // 2))
        for phase, seconds in phase_times.items():
            print(f"  {phase}: {_ms(statistics.median(seconds))}")

        print("\nthe real command as a subprocess, once each (Django start-up included):")
        for name, path in paths.items():
            print(f"  manage.py adjudicate, {name}: {_ms(subprocess_seconds(path))}")

    assert verdict_ratio is not None
    verdict = "PASS" if verdict_ratio <= TARGET_RATIO else "MISS"
    print(
        f"\n{verdict}  10,000-army turn, JSON in and out: engine ×{verdict_ratio:.2f} the plain"
        f" baseline (median), target at most ×{TARGET_RATIO:.1f}"
    )
    print(f"load average at the end: {load()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
