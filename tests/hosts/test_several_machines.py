"""The site on several machines, as docs/deployment.md sets it up: stories of a hall's day.

Five hosts on a private bridge (``tests.hosts.network``): the balancer, two web machines
(app1 with the beat), the data machine and the phones. Every process runs from the files of
``deploy/`` (``tests.hosts.deployment``). The tournament of each story is the fault
scenario's eight Generals (``tests.faults.scenario``), one turn long, whose orders are those
of the scenario's first turn with moves; the phones send them through the balancer over
HTTPS and keep the Generals' pages live over wss://.

No story waits for a deadline it does not need. A tournament is set up with a turn far
longer than any set-up; once its pages are open and its orders in, the judge sets the time
left through the clock API (``/clock/extend``) from the venue's network: to nothing when the
story only needs the turn resolved, or just far enough ahead for a scenario that crosses a
real deadline (a burst of orders, a machine dying before it), checked to be still ahead
before the scenario is scheduled and made longer when the machine is too slow for it.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.faults.scenario import SCENARIO
from tests.hosts.deployment import Deployment
from tests.hosts.phones import Phones

pytestmark = [
    pytest.mark.slow,
    pytest.mark.one_database(
        "the deployment has its own PostgreSQL on the data host, whatever the suite's database"
    ),
    pytest.mark.xdist_group("several-machines"),
]

STEPS = SCENARIO[2]  # the scenario's moves, valid from the start (turn 1 has none)
# The turn as it is set up: far longer than any set-up (the pages opened, the orders sent)
# on however busy a machine. Then each story sets the time left its scenario needs through
# the judge's clock API, and no story waits for a deadline it does not need to cross.
TURN_SECONDS = 3600
# How far ahead a deadline is set beyond what the scenario needs once it is set (the
# judge's request and the phones' command on a busy machine); when even that is not left
# by then, the turn is made longer by twice as much, and so on (never run short).
DEADLINE_MARGIN = 3.0
SLOWER_TRIES = 5
# How late a turn may be resolved: R4's settling time (2 s after the deadline), beat's
# sweep (every 2 s), and a worker on two cores shared with four hosts' processes.
LATENESS = 6.0
RESOLVED_SECONDS = 60.0
PHONE_A, PHONE_B = ("10.0.0.100", "10.0.0.101")  # the phones host's two addresses
# The deadline burst: one order every 0.9 s in the last 7 s; the command reaches the phones'
# host at least this long before the first of them is due.
BURST_SECONDS = 7.0
BURST_GAP = 0.9
COMMAND_LEAD = 1.5
DIES_BEFORE_DEADLINE = 3.0
RESEND_AFTER_DEADLINE = 0.0  # a General resends a failed order until the deadline, not after
RECONNECT_SECONDS = 30.0  # live.js: a silent socket is dropped after 12 s, reopened after 1-2 s
WORKERLESS_SECONDS = 8.0  # past the deadline with no worker: the turn must still be open
CUT_SECONDS = 1.0  # to cut the data host off, once the deadline is checked to be ahead
# The data host stays away until a read and an order have been answered and the turn has
# come due while it is away: R4's settling time (2 s) and one of beat's sweeps (every 2 s).
OVERDUE_SECONDS = 4.0
# A 503 while the database is away comes after its timeouts (a kept connection's 5 s, a new
# one's 3 s): well within this, and far from the balancer's own 60 s, even on a busy machine.
OUTAGE_ANSWER_SECONDS = 25.0
# The story of the failed joins, 23 requests (under a second on two idle cores), fits in a
# rate limit's minute if it starts this long before its end; else it waits for the next.
JOINS_SECONDS = 15.0
PAGES_OPEN_SECONDS = 90.0  # eight pages' TLS handshakes, sockets and states: an upper bound
FIGURES: dict[str, Any] = {}  # what the stories measured, printed at the end of the module
EVENT_SECONDS = 15.0  # for a live event to arrive: this checks arrival, not speed


@pytest.fixture(scope="module", autouse=True)
def figures_kept() -> Iterator[None]:
    """What the stories measured, written where SL5R_HOSTS_FIGURES says (a JSON file)."""
    yield
    target = os.environ.get("SL5R_HOSTS_FIGURES")
    if target and FIGURES:
        Path(target).write_text(json.dumps(FIGURES, indent=2))


def tournament_start(deployment: Deployment, name: str) -> dict[str, Any]:
    return deployment.control("setup", turn_seconds=TURN_SECONDS, name=name)


def judge_asks(
    phones: Phones, game: dict[str, Any], method: str, path: str, body: Any = None
) -> Any:
    """The judge's API (his key) on the tournament, from the venue's network through the
    balancer as his laptop reaches it: the answer's body (200 or the story fails)."""
    answer = phones.ask(
        "request", method=method, path=f"/api/tournaments/{game['tournament']}{path}",
        token=game["judge"], body=body,
    )["answers"][0]  # fmt: skip
    assert answer["status"] == 200, f"the judge's {method} {path}: {answer}"
    return answer["body"]


def clock_extended(phones: Phones, game: dict[str, Any], seconds: int) -> float:
    """The judge gives the turn ``seconds`` more (fewer when negative), as the console's
    clock does: the deadline moves by exactly that (kept in ``game``, and checked against
    the turn's own in ``turn_kept``), unless that is before now. The new deadline."""
    judge_asks(phones, game, "POST", "/clock/extend", {"seconds": seconds})
    game["deadline"] += seconds
    return float(game["deadline"])


def deadline_ahead(phones: Phones, game: dict[str, Any], needed: float) -> float:
    """The time left set to ``needed`` seconds (and ``DEADLINE_MARGIN``), and checked to be
    at least ``needed`` once set: when the machine is too slow for that, the scenario is
    made slower, a longer turn through the clock API again, rather than failing. The
    deadline."""
    # The clock API moves a deadline by whole seconds (0 is refused).
    change = round(time.time() + needed + DEADLINE_MARGIN - game["deadline"]) or 1
    deadline = clock_extended(phones, game, change)
    for slower in range(SLOWER_TRIES):
        left = deadline - time.time()
        if left >= needed:
            return deadline
        more = math.ceil(needed - left + DEADLINE_MARGIN * 2 ** (slower + 1))
        FIGURES.setdefault("turns made longer for a slow machine (s)", []).append(more)
        deadline = clock_extended(phones, game, more)
    raise AssertionError(f"the machine is too slow to set a deadline {needed} s ahead")


def deadline_now(phones: Phones, game: dict[str, Any]) -> float:
    """Nothing left to wait for: the judge takes all the time left off the turn, whose
    deadline is then now, and the clocks resolve it as at any deadline (the turn's record
    says the moment: ``turn_kept`` keeps it in ``game``). A time not before the deadline."""
    judge_asks(phones, game, "POST", "/clock/extend", {"seconds": -(TURN_SECONDS + 60)})
    game["deadline"] = None
    return time.time()


def orders_at(game: dict[str, Any], at: float) -> list[dict[str, Any]]:
    return [
        {
            "tournament": game["tournament"],
            "army": step.army,
            "token": game["tokens"][step.army],
            "body": step.api_body(1),
            "at": at,
        }
        for step in STEPS
    ]


def acknowledged(sent: dict[str, Any]) -> list[list[Any]]:
    return [
        [1, order["army"], order["answer"]["given_at"]]
        for order in sent["orders"]
        if 200 <= order["status"] < 300
    ]


def turn_kept(
    deployment: Deployment, phones: Phones, game: dict[str, Any], sent: dict[str, Any],
    *, after: float,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:  # fmt: skip
    """Wait for the turn (at most ``after`` seconds past its deadline), then check what must
    hold whatever happened: resolved exactly once, with every order that was acknowledged,
    and on every page. The progress, and the pages' reports."""
    within = max(0.0, (game["deadline"] or 0.0) - time.time()) + after
    # The pages hear it as a phone would; then the database is read once.
    phones.ask("wait_phase", phase="finished", within=within, timeout=within + 30)
    checked = deployment.control(
        "check", tournament=game["tournament"], turns=1, acknowledged=acknowledged(sent)
    )
    progress = checked["progress"]
    assert progress["resolved"] == 1, progress
    assert checked["problems"] == []
    # The deadline the story set is the one the turn had.
    if game["deadline"] is None:  # moved to now (deadline_now)
        game["deadline"] = progress["turns"][0]["deadline"]
    assert progress["turns"][0]["deadline"] == pytest.approx(game["deadline"], abs=1e-3)
    final = phones.ask("wait_version", version=progress["version"], within=60)["pages"]
    assert all(page["version"] >= progress["version"] for page in final), final
    return progress, final


def pages_open(phones: Phones, game: dict[str, Any]) -> None:
    """Every General's page open and showing the state."""
    tokens = list(game["tokens"].values())
    opened = phones.ask(
        "pages_open", tournament=game["tournament"], tokens=tokens, within=PAGES_OPEN_SECONDS,
        timeout=PAGES_OPEN_SECONDS + 30,
    )  # fmt: skip
    assert opened["opened"] == len(tokens), opened


def scenario_moment(at: float) -> None:
    """Until ``at`` (seconds since the epoch): a fault is made at a set time before or after a
    deadline, which is the scenario itself, not an event to wait for."""
    time.sleep(max(0.0, at - time.time()))


def test_an_order_served_by_one_machine_reaches_a_page_held_by_the_other(
    deployment: Deployment, phones: Phones
) -> None:
    """The orders go through app1 while app2 holds some of the pages; the turn is resolved
    once and on time by whichever worker, and every page on either machine has it. Once the
    orders are in and heard of, the judge ends the turn now (its deadline moved to now)."""
    resolutions = deployment.resolutions_by_host()
    game = tournament_start(deployment, "Across machines")
    pages_open(phones, game)
    held = deployment.websockets_held()
    assert held["asgi-1"] > 0 and held["asgi-2"] > 0, f"the pages' sockets: {held}"
    # app2 taken out of service as an operator drains it: every order is then served by
    # app1, while the pages app2 holds stay open.
    deployment.balancer_ask("disable server asgi/asgi-2")
    try:
        sent = phones.ask("orders", orders=orders_at(game, time.time()), until=game["deadline"])
    finally:
        deployment.balancer_ask("enable server asgi/asgi-2")
    assert all(order["status"] == 200 for order in sent["orders"]), sent
    assert deployment.websockets_held()["asgi-2"] == held["asgi-2"]
    ordered = {step.army for step in STEPS}
    report = phones.ask(
        "wait_event",
        tokens=[game["tokens"][a] for a in ordered],
        kind="order",
        within=EVENT_SECONDS,
    )["pages"]
    tokens = list(game["tokens"])
    missing = [
        army for army, page in zip(tokens, report, strict=True)
        if army in ordered and not any(kind == "order" for _, _, kind in page["events"])
    ]  # fmt: skip
    assert not missing, f"pages that never heard of their own order: {missing}"

    deadline_now(phones, game)
    progress, final = turn_kept(deployment, phones, game, sent, after=RESOLVED_SECONDS)
    late = [p["versions"][-1][0] - game["deadline"] for p in final]
    turn = progress["turns"][0]
    assert turn["resolved_at"] - game["deadline"] <= LATENESS, turn
    FIGURES["across machines"] = {
        "resolved after the deadline": turn["resolved_at"] - game["deadline"],
        "resolved by the worker of": [
            host for host, n in deployment.resolutions_by_host().items() if n > resolutions[host]
        ],
        "pages up to date after the deadline (max)": max(late),
    }


def test_failed_joins_are_counted_per_phone_address_by_both_machines_together(
    deployment: Deployment, phones: Phones
) -> None:
    """ "joins" allows 20 failed attempts a minute per address (referees/http/ratelimit.py): the
    21st is refused whichever machine gets it, a forged X-Forwarded-For does not reset the
    count, and another phone's address has its own."""
    # The limit's windows are whole minutes: the attempts are made inside one.
    if time.time() % 60 > 60 - JOINS_SECONDS:
        scenario_moment(time.time() // 60 * 60 + 60)
    before = deployment.requests_served()
    bad = {"token": "not-a-join-token"}
    first = phones.ask("request", method="POST", path="/api/join", body=bad, repeat=21,
                       source=PHONE_A)["answers"]  # fmt: skip
    served = deployment.requests_served()
    assert all(served[name] - before[name] >= 5 for name in before), (before, served)
    assert [a["status"] for a in first[:20]] == [403] * 20, first
    assert first[20]["status"] == 429 and first[20]["body"]["code"] == "rate_limited", first[20]
    forged = phones.ask(
        "request", method="POST", path="/api/join", body=bad, source=PHONE_A,
        headers={"X-Forwarded-For": "10.0.0.77", "X-Real-IP": "10.0.0.77",
                 "Forwarded": "for=10.0.0.77"},
    )["answers"]  # fmt: skip
    assert forged[0]["status"] == 429, forged
    other = phones.ask("request", method="POST", path="/api/join", body=bad, source=PHONE_B)
    assert other["answers"][0]["status"] == 403, other


def pages_on_host_reconnected(pages: list[dict[str, Any]], after: float) -> list[float]:
    """For each page whose socket closed after ``after``: seconds until its next hello."""
    waits = []
    for page in pages:
        closed = [t for t in page["closes"] if t >= after]
        if closed:
            hellos = [t for t in page["hellos"] if t > closed[0]]
            waits.append(hellos[0] - closed[0] if hellos else float("inf"))
    return waits


def test_a_web_machine_dying_in_the_deadline_burst_loses_no_acknowledged_order(
    deployment: Deployment, phones: Phones
) -> None:
    """app2 (an ASGI process and a worker) loses its network, then its processes, while the
    Generals send their orders in the last seconds: the balancer routes around it, the pages
    it held reconnect to app1 and catch up, the turn resolves once with every order that was
    acknowledged; app2 comes back and takes pages again."""
    game = tournament_start(deployment, "A machine dies")
    pages_open(phones, game)
    held = deployment.websockets_held()
    assert held["asgi-2"] > 0, held
    # The last seven seconds, one order every 0.9 s; the machine dies in the middle. The
    # deadline is set just far enough ahead for the burst, once the pages are open.
    deadline = deadline_ahead(phones, game, BURST_SECONDS + COMMAND_LEAD)
    orders = orders_at(game, 0)
    for index, order in enumerate(orders):
        order["at"] = deadline - BURST_SECONDS + index * BURST_GAP
    asked = phones.send("orders", orders=orders, until=deadline + RESEND_AFTER_DEADLINE)
    scenario_moment(deadline - DIES_BEFORE_DEADLINE)
    died = time.time()
    deployment.network.cut("app2")
    deployment.host_kill("app2")
    sent = phones.answer(asked)
    # The harness's own lateness is not the site's: an order that left its phone after the
    # deadline would be refused, rightly (R4).
    left_late = [o["army"] for o in sent["orders"] if o["attempts"][0][0] >= deadline]
    assert not left_late, f"the phones sent {left_late} after the deadline: the harness was late"
    statuses = [order["status"] for order in sent["orders"]]
    # R4: every order left its phone before the deadline, so none is refused as late, not
    # even one the balancer had sent to app2 as it died (it goes to app1 a second later).
    assert statuses == [200] * len(statuses), sent
    progress, final = turn_kept(deployment, phones, game, sent, after=RESOLVED_SECONDS)
    assert deployment.servers()["asgi-2"].startswith("DOWN"), deployment.servers()
    reconnects = pages_on_host_reconnected(final, died)
    FIGURES["app2 dies"] = {
        "orders": statuses,
        "acknowledged": statuses.count(200),
        "resolved late by": progress["turns"][0]["resolved_at"] - deadline,
        "pages up to date after the deadline": max(p["versions"][-1][0] for p in final) - deadline,
        "reconnect waits": sorted(round(w, 2) for w in reconnects),
    }
    assert len(reconnects) >= held["asgi-2"], (held, final)
    assert max(reconnects) < RECONNECT_SECONDS, reconnects

    # app2 comes back: its units started again, as its machine boots; the balancer puts it
    # back in service and new pages are given to it.
    deployment.network.mend("app2")
    deployment.app_boot("app2")
    deployment.wait_serving()
    pages_open(phones, game)
    assert deployment.websockets_held()["asgi-2"] > 0, deployment.websockets_held()


def test_a_deadline_passing_while_the_only_worker_is_down_resolves_once_it_is_back(
    deployment: Deployment, phones: Phones
) -> None:
    """Only app2 runs a worker (app1's is stopped); app2 dies, then the turn's deadline
    passes (the judge moves it to now). Beat, on app1, goes on sweeping: nothing resolves
    the turn until app2 is back, then its worker resolves it once, with the orders given
    before."""
    deployment.unit_stop("app1", "sl5r-worker")
    try:
        game = tournament_start(deployment, "The worker dies")
        pages_open(phones, game)
        sent = phones.ask("orders", orders=orders_at(game, time.time()), until=game["deadline"])
        assert all(order["status"] == 200 for order in sent["orders"]), sent
        deployment.network.cut("app2")
        deployment.host_kill("app2")
        deadline = deadline_now(phones, game)
        # Beat sweeps every 2 s and resolves 2 s after the deadline (R4's settling time):
        # by then a worker would have resolved it.
        scenario_moment(deadline + WORKERLESS_SECONDS)
        assert deployment.control("progress", tournament=game["tournament"])["resolved"] == 0
        back = time.time()
        deployment.network.mend("app2")
        deployment.app_boot("app2")
        progress, _ = turn_kept(
            deployment, phones, game, sent, after=RESOLVED_SECONDS + WORKERLESS_SECONDS
        )  # fmt: skip
        FIGURES["the only worker dies"] = {
            "acknowledged": len(acknowledged(sent)),
            "resolved after the worker's host was back": progress["turns"][0]["resolved_at"] - back,
        }
    finally:
        deployment.unit_start("app1", "sl5r-worker.service")
        deployment.wait_serving()


def test_the_data_host_unreachable_across_a_deadline_gives_clear_503s_and_loses_nothing(
    deployment: Deployment, phones: Phones
) -> None:
    """PostgreSQL and Redis's machine drops off the network across a deadline, until a
    page's read and a General's order have been answered and the turn has come due: every
    request in the meantime is answered 503 with a reason, none 500 or left to the
    balancer's timeout; the orders acknowledged before are carried out when the turn is
    resolved after it comes back; nothing is restarted."""
    game = tournament_start(deployment, "The data host is away")
    pages_open(phones, game)
    sent = phones.ask("orders", orders=orders_at(game, time.time()), until=game["deadline"])
    assert all(order["status"] == 200 for order in sent["orders"]), sent
    token = game["tokens"][STEPS[0].army]
    state = f"/api/tournaments/{game['tournament']}/state"
    orders = f"/api/tournaments/{game['tournament']}/orders/mine"
    # The deadline a moment ahead, and the data host cut off before it comes.
    deadline = deadline_ahead(phones, game, CUT_SECONDS)
    deployment.network.cut("data")
    away = time.time()
    answers = []
    try:
        while not answers or time.time() < deadline + OVERDUE_SECONDS:
            # A page's read and a General's order, at the same time.
            asked = time.time()
            sent_now = [
                phones.send("request", token=token, method="GET", path=state),
                phones.send("request", token=token, method="PUT", path=orders,
                            body=STEPS[0].api_body(1)),
            ]  # fmt: skip
            for ident in sent_now:
                reply = phones.answer(ident)["answers"][0]
                answers.append((round(time.time() - asked, 2), reply["status"], reply["body"]))
    finally:
        deployment.network.mend("data")
    back = time.time()
    assert away < deadline, f"the data host was cut {away - deadline:.2f} s after the deadline"
    assert all(status == 503 for _, status, _ in answers), answers
    assert all(isinstance(body, dict) and body.get("code") for _, _, body in answers), answers
    assert max(seconds for seconds, _, _ in answers) < OUTAGE_ANSWER_SECONDS, answers

    progress, final = turn_kept(deployment, phones, game, sent, after=RESOLVED_SECONDS)
    assert progress["turns"][0]["resolved_at"] > back, progress  # not before it was away
    FIGURES["the data host away"] = {
        "away (s)": back - away,
        "requests while away (seconds to answer, status)": [a[:2] for a in answers],
        "pongs without a version": sum(p["pongs_without_version"] for p in final),
        "resolved after it was back": progress["turns"][0]["resolved_at"] - back,
        "pages up to date after it was back": max(p["versions"][-1][0] for p in final) - back,
    }
