"""Orders sent just before a deadline to a busy venue laptop: are any refused as late (R4)?

A measurement, not a test: prints, for each round and in total, how many orders were sent
before the deadline and refused as late (the target: none), how far before the deadline the
last such order left the phone, and the server's answers; exits 0.

    .venv/bin/python benchmarks/deadline_fairness.py                  # 5 rounds, 4 busy loops
    .venv/bin/python benchmarks/deadline_fairness.py --rounds 10 --busy 8
    .venv/bin/python benchmarks/deadline_fairness.py --busy 0 --stall 0   # an idle machine

A lagging server is made as the issue saw it (at load 10 its loop fell up to 0.25 s behind):
``--stall S`` stops the server (SIGSTOP) from two thirds of S before each deadline to a third
of S after it, so the orders sent meanwhile wait in the kernel, as they wait for a busy loop.

Method: ``manage.py venue`` (what ``make venue`` runs, SQLite, the in-process clock, the
product's 2 s settle window) serves the venue tests' tournament (``tests/venue/scenario.py``:
eight Generals, turn 1 open) from a temporary folder. ``--busy N`` processes spin beside it
for the whole run (``while True: pass``: a projector, a browser and a backup on a two-core
laptop). Each round the judge's API sets the open turn's deadline 3 s ahead; the eight
Generals' phones, each on a connection opened beforehand, send a move at fixed offsets from
the deadline (400, 300, 200, 150, 100, 50 and 20 ms before it, and 50 ms after); a phone's
send time is taken once ``sendall`` returns, an upper bound of when the bytes reached the
laptop's socket (loopback: the kernel has them when the call returns). Then the round waits
for the clock to resolve the turn. An order sent before the deadline and answered 409
``late`` is refused unfairly; one sent after it and stored would be accepted unfairly.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from datetime import datetime
from pathlib import Path
from typing import Any

BASE_DIR = Path(__file__).resolve().parents[1]
OFFSETS = (-0.40, -0.30, -0.20, -0.15, -0.10, -0.05, -0.02, 0.05)  # s from the deadline
LEAD = 3.0  # s: the deadline is set this far ahead at the start of a round


def call(url: str, method: str = "GET", body: Any = None, token: str | None = None) -> Any:
    headers = {"Accept": "application/json"}
    data = None
    if token:
        headers["Authorization"] = f"Bearer {token}"
    if body is not None:
        data = json.dumps(body).encode()
        headers["Content-Type"] = "application/json"
    request = urllib.request.Request(url, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def wait_for(moment: float) -> None:
    while (left := moment - time.time()) > 0:
        time.sleep(min(left, 0.01))


def raw_order(port: int, tid: int, token: str, body: dict[str, Any]) -> bytes:
    payload = json.dumps(body).encode()
    return (
        f"PUT /api/tournaments/{tid}/orders/mine HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(payload)}\r\nConnection: close\r\n\r\n"
    ).encode() + payload


def status_of(connection: socket.socket) -> int:
    chunks = []
    while chunk := connection.recv(65536):
        chunks.append(chunk)
    return int(b"".join(chunks).split()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--busy", type=int, default=4, help="busy loops beside the server")
    parser.add_argument(
        "--stall",
        type=float,
        default=0.3,
        help="s the server is stopped across each deadline (two thirds before it); 0: never",
    )
    args = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="sl5r-fairness-"))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "SITE_URL", "SECRET_KEY")},
        "DJANGO_SETTINGS_MODULE": "sl5r.settings",
        "SL5R_VENUE": "1",
        "VENUE_DIR": str(work / "venue"),
        "DATABASE_URL": f"sqlite:///{work / 'db.sqlite3'}",
        "HOST": "127.0.0.1",
        "PORT": str(port),
        "SL5R_CLOCK": "inprocess",
        "SL5R_CLOCK_INTERVAL": "0.2",
        "SL5R_ORDER_SETTLE_SECONDS": "2",
    }
    python = sys.executable
    subprocess.run(
        [python, "manage.py", "migrate", "--noinput", "-v0"], cwd=BASE_DIR, env=env, check=True
    )
    subprocess.run(
        [python, "-m", "tests.venue.scenario", str(work / "scenario.json")],
        cwd=BASE_DIR,
        env=env,
        check=True,
    )
    data = json.loads((work / "scenario.json").read_text())
    tid, key = data["tournament"], data["judge"]["key"]
    api = f"http://127.0.0.1:{port}/api/tournaments/{tid}"
    log = (work / "server.log").open("wb")
    server = subprocess.Popen(
        [python, "manage.py", "venue", "--no-demo", "--no-qr"],
        cwd=BASE_DIR,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
    )
    busy = [subprocess.Popen([python, "-c", "while True: pass"]) for _ in range(args.busy)]
    unfair: list[float] = []  # how long before the deadline each unfairly refused order left
    totals = {
        "sent before": 0,
        "stored": 0,
        "late (sent before)": 0,
        "sent after": 0,
        "late (sent after)": 0,
    }
    try:
        while True:
            try:
                call(f"http://127.0.0.1:{port}/healthz")
                break
            except OSError:
                time.sleep(0.2)
        machine = f"{platform.machine()}, {os.cpu_count()} cores"
        print(f"machine: {machine}, Python {platform.python_version()}")
        print(f"busy loops beside the server: {args.busy}; rounds: {args.rounds}")
        columns = (
            "round",
            "sent before",
            "stored",
            "refused unfairly",
            "sent after",
            "stored late",
        )
        print(" ".join(f"{c:>{max(5, len(c))}}" for c in columns))
        for number in range(args.rounds):
            state = call(f"{api}/state", token=key)
            turn = state["tournament"]["turn"]
            left = state["tournament"]["clock"]["remaining"]
            call(f"{api}/clock/extend", "POST", {"seconds": -int(left - LEAD)}, token=key)
            clock = call(f"{api}/state", token=key)["tournament"]["clock"]
            deadline = datetime.fromisoformat(clock["deadline"]).timestamp()
            phones = []
            for general, offset in zip(data["generals"], OFFSETS, strict=True):
                target = general["neighbour"] if turn % 2 else general["home"]
                body = {"kind": "move", "path": [target], "turn": turn}
                phones.append(
                    (
                        offset,
                        socket.create_connection(("127.0.0.1", port), timeout=60),
                        raw_order(port, tid, general["token"], body),
                    )
                )
            sent: list[tuple[float, socket.socket]] = []
            # The stall, as the server's own moments: SIGSTOP and SIGCONT among the sends.
            events: list[tuple[float, Any]] = [(o, (c, r)) for o, c, r in phones]
            if args.stall > 0:
                events += [(-args.stall * 2 / 3, signal.SIGSTOP), (args.stall / 3, signal.SIGCONT)]
            try:
                for offset, what in sorted(events, key=lambda e: e[0]):
                    wait_for(deadline + offset)
                    if isinstance(what, signal.Signals):
                        os.kill(server.pid, what)
                        continue
                    connection, request = what
                    connection.sendall(request)
                    sent.append((time.time(), connection))
            finally:
                os.kill(server.pid, signal.SIGCONT)
            row = {"before": 0, "stored": 0, "unfair": 0, "after": 0, "late_ok": 0}
            for at, connection in sent:
                status = status_of(connection)
                connection.close()
                if at < deadline:
                    row["before"] += 1
                    if status == 200:
                        row["stored"] += 1
                    else:
                        row["unfair"] += 1
                        unfair.append(deadline - at)
                else:
                    row["after"] += 1
                    if status == 200:
                        row["late_ok"] += 1
            values = (
                number + 1,
                *(row[k] for k in ("before", "stored", "unfair", "after", "late_ok")),
            )
            print(" ".join(f"{v:>{max(5, len(c))}}" for v, c in zip(values, columns, strict=True)))
            totals["sent before"] += row["before"]
            totals["stored"] += row["stored"]
            totals["late (sent before)"] += row["unfair"]
            totals["sent after"] += row["after"]
            totals["late (sent after)"] += row["after"] - row["late_ok"]
            end = time.monotonic() + 60
            while (
                call(f"{api}/state", token=key)["tournament"]["turn"] == turn
                and time.monotonic() < end
            ):
                time.sleep(0.2)
    finally:
        for process in busy:
            process.kill()
        server.terminate()
        server.wait(timeout=30)
        log.close()
    print("totals:", ", ".join(f"{k}: {v}" for k, v in totals.items()))
    if unfair:
        margin = max(unfair) * 1000
        print(f"the last order refused unfairly left the phone {margin:.0f} ms before the deadline")
    verdict = "PASS" if not unfair else "MISS"
    print(
        f"{verdict}: orders sent before the deadline and refused as late: {len(unfair)} (target 0)"
    )


if __name__ == "__main__":
    main()
