"""How the work of adjudicating a turn grows with the armies, counted in instructions.

Wall-clock time on this machine grows faster than the work once the data outgrows the
processor's caches (see benchmarks/README.md); the number of instructions executed does
not depend on caches, load or the other core, so it shows whether the algorithm itself is
linear. ``valgrind --tool=callgrind`` counts the instructions of a process that builds a
turn and adjudicates it once, and of one that only builds it; the difference is one turn.

    .venv/bin/python benchmarks/adjudication_instructions.py            # 1,000 and 10,000 armies
    .venv/bin/python benchmarks/adjudication_instructions.py --large    # and 100,000 (slow)

Needs valgrind (Debian package ``valgrind``). A measurement: prints numbers, exits 0.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SIZES = ((1_000, 500), (10_000, 5_000))
LARGE = (100_000, 50_000)
TARGET_GROWTH = 12.0


def child(armies: int, provinces: int, calls: int) -> None:
    """Build the benchmark's turn (as benchmarks/adjudication.py does) and adjudicate it."""
    from benchmarks.mapgen import generate_map, random_orders, spread_armies, turn_state
    from sl5r.rules import adjudicate_turn, map_from_dict

    game_map = map_from_dict(generate_map(provinces, seed=1), place="generated")
    placed = spread_armies(game_map, armies, seed=1)
    state = turn_state(game_map, placed)
    orders = random_orders(game_map, placed, seed=1)
    gc.disable()
    for _ in range(calls):
        adjudicate_turn(state, orders, rng=random.Random(1))


def instructions(armies: int, provinces: int, calls: int) -> int:
    done = subprocess.run(
        [
            "valgrind",
            "--tool=callgrind",
            "--callgrind-out-file=/dev/null",
            sys.executable,
            __file__,
            "--child",
            str(armies),
            str(provinces),
            str(calls),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError(f"no instruction count in callgrind's output:\n{done.stderr[-500:]}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="also 100,000 armies (minutes)")
    parser.add_argument("--child", nargs=3, type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind): nothing measured")
        return 0
    sizes = [*SIZES, LARGE] if args.large else list(SIZES)
    print(f"Python {sys.version.split()[0]}; instructions of one adjudicate_turn call\n")
    print("| armies | provinces | instructions | per army | growth (×10 armies) |")
    print("|---|---|---|---|---|")
    previous: int | None = None
    verdicts: list[str] = []
    for armies, provinces in sizes:
        count = instructions(armies, provinces, 1) - instructions(armies, provinces, 0)
        growth = ""
        if previous is not None:
            ratio = count / previous
            growth = f"×{ratio:.2f}"
            ok = "PASS" if ratio <= TARGET_GROWTH else "MISS"
            verdicts.append(
                f"{ok}  {armies // 10:,} → {armies:,} armies: instructions ×{ratio:.2f}, "
                f"target at most ×{TARGET_GROWTH:g}"
            )
        print(f"| {armies:,} | {provinces:,} | {count:,} | {count / armies:,.0f} | {growth} |")
        previous = count
    print()
    print("\n".join(verdicts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
