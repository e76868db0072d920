"""R4 on a busy laptop: an order that reached the laptop before the deadline counts, even
when the server got to it after the deadline (issue 31).

At load 10 on two cores the event loop fell a quarter of a second behind, and orders that
had reached the network interface 186–242 ms before the deadline were refused as late. Here
the lag is made as large as it gets: the serving process is frozen (SIGSTOP) from before the
deadline until 300 ms after it, and a phone's order is sent 150 ms before the deadline while
nothing in the process runs. The kernel takes the bytes in (and stamps them); the process,
thawed, must judge the order by that stamp.

No timing is asserted, and nothing races the clock by accident. The turn is ten minutes long
(the scenario's) until an attempt starts; then the judge sets its time left (``POST
…/clock/extend``), reads it back, and checks that the deadline is still as far ahead as the
freeze needs; if the machine was too slow for that, he sets it again, longer. Only the
moments around the deadline are waited for (a deadline is a moment, not an event). An
attempt that woke too late to freeze the process before the order's moment sends nothing; one
whose order left after the deadline waits for that turn to be resolved: either is played
again with a wider window (frozen earlier, the order sent earlier, still before the deadline).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from datetime import timezone as dt_timezone
from typing import Any

import pytest

from tests.judge_clock import time_left_seconds
from tests.venue.laptop import Browser, Laptop, wait_until

pytestmark = pytest.mark.slow

LEAD = 3.0  # s: the time left the judge gives the turn when an attempt starts
LEAD_MOST = 48.0  # s: an upper bound, reached only by doubling LEAD on a stalled machine
FROZEN_BEFORE = 0.6  # s: the process is stopped this long before the deadline
SENT_BEFORE = 0.15  # s: the order leaves the phone this long before the deadline
THAWED_AFTER = 0.3  # s: the process runs again this long after the deadline
AHEAD = 0.5  # s: what is left before the freeze when the attempt checks the deadline
# An upper bound on the attempts; each one that the machine was too slow for doubles the
# window (the freeze FROZEN_BEFORE and the order SENT_BEFORE the deadline).
ATTEMPTS = 4


def wait_for(moment: float) -> None:
    """Until the wall clock reads ``moment``: a deadline is a moment, not an event, so there
    is nothing to await; one sleep to it (the loop only guards an early wake)."""
    while (left := moment - time.time()) > 0:
        time.sleep(left)


def deadline_ahead(judge: Browser, api: str, key: str, ahead: float) -> tuple[int, float]:
    """The judge gives the open turn about ``LEAD`` s left (``clock/extend`` by the
    difference), and reads it back; if the machine was too slow for the deadline to be
    still ``ahead`` s away then (or the turn was resolved meanwhile), again, with twice the
    time. The turn and its deadline (a ``time.time()``)."""
    lead = LEAD
    while True:
        turn, before = turn_deadline(judge, api, key)
        asked = time_left_seconds(before, lead, datetime.now(dt_timezone.utc))
        status, body = judge.json(
            f"{api}/clock/extend", method="POST", body={"seconds": asked}, token=key
        )
        assert status == 200, body
        deadline = before + timedelta(seconds=asked)
        seen = turn_deadline(judge, api, key)
        if seen == (turn, deadline) and deadline.timestamp() - time.time() >= ahead:
            return turn, deadline.timestamp()
        lead *= 2
        assert lead <= LEAD_MOST, f"the deadline was never {ahead} s ahead once set: {seen}"


def turn_deadline(judge: Browser, api: str, key: str) -> tuple[int, datetime]:
    status, state = judge.json(f"{api}/state", token=key)
    assert status == 200, state
    tournament = state["tournament"]
    assert tournament["clock"]["phase"] == "running", tournament
    return int(tournament["turn"]), datetime.fromisoformat(tournament["clock"]["deadline"])


def order_request(port: int, tid: int, token: str, body: dict[str, object]) -> bytes:
    payload = json.dumps(body).encode()
    return (
        f"PUT /api/tournaments/{tid}/orders/mine HTTP/1.1\r\n"
        f"Host: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {token}\r\n"
        "Content-Type: application/json\r\n"
        "Accept: application/json\r\n"
        f"Content-Length: {len(payload)}\r\n"
        "Connection: close\r\n\r\n"
    ).encode() + payload


def answer_of(connection: socket.socket) -> tuple[int, str]:
    chunks = []
    while chunk := connection.recv(65536):
        chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return int(head.split()[1]), body.decode(errors="replace")


def test_r4_an_order_that_reached_a_frozen_laptop_before_the_deadline_counts(
    laptops: Callable[[str], Laptop],
) -> None:
    laptop = laptops("a")
    # The product's settle window (the test run sets none): the turn is resolved 2 s after
    # its deadline, and the thawed process must store the order before then.
    laptop.settings["SL5R_ORDER_SETTLE_SECONDS"] = "2"
    assert laptop.run("manage.py", "migrate", "--noinput", "-v0").returncode == 0
    made = laptop.run("-m", "tests.venue.scenario", str(laptop.root / "scenario.json"))
    assert made.returncode == 0, made.stderr
    data = json.loads((laptop.root / "scenario.json").read_text())
    tid, key, token = data["tournament"], data["judge"]["key"], data["token"]
    api = f"{laptop.url}/api/tournaments/{tid}"
    laptop.serve()
    assert laptop.process is not None
    judge = Browser()

    def state() -> Any:
        return judge.json(f"{api}/state", token=key)[1]

    for attempt in range(ATTEMPTS):
        frozen_before, sent_before = FROZEN_BEFORE * 2**attempt, SENT_BEFORE * 2**attempt
        where = {a["id"]: a["province"] for a in state()["armies"]}
        target = data["neighbour"] if where[data["army"]] == data["home"] else data["home"]
        phone = socket.create_connection(("127.0.0.1", laptop.port), timeout=60)
        turn, deadline = deadline_ahead(judge, api, key, ahead=frozen_before + AHEAD)

        wait_for(deadline - frozen_before)
        if time.time() >= deadline - sent_before:
            phone.close()
            continue  # too slow to freeze it before the order's moment: nothing sent
        os.kill(laptop.process.pid, signal.SIGSTOP)
        try:
            wait_for(deadline - sent_before)
            phone.sendall(
                order_request(
                    laptop.port, tid, token, {"kind": "move", "path": [target], "turn": turn}
                )
            )
            sent = time.time()
            wait_for(deadline + THAWED_AFTER)
        finally:
            os.kill(laptop.process.pid, signal.SIGCONT)
        status, body = answer_of(phone)
        phone.close()

        def resolved(turn: int = turn) -> bool:
            return bool(state()["tournament"]["turn"] > turn)

        if sent >= deadline:
            # This machine was too busy to send it in time: once the clock has resolved
            # the turn, again in the next one.
            assert wait_until(resolved, timeout=60), laptop.log.read_text()
            continue
        assert status == 200, (status, body)

        # Carried out in the turn it was sent for: once the clock has resolved it, the
        # army stands where the order sent it, and nothing was refused.
        assert wait_until(resolved, timeout=60), laptop.log.read_text()
        after = state()
        assert after["tournament"]["turn"] == turn + 1, laptop.log.read_text()
        where = {a["id"]: a["province"] for a in after["armies"]}
        assert where[data["army"]] == target, where
        log = judge.json(f"{api}/log?turn={turn}", token=key)[1]["entries"]
        assert [e for e in log if e["action"] == "order_refused"] == [], log
        return
    pytest.fail(f"in {ATTEMPTS} attempts the machine never sent the order before the deadline")
