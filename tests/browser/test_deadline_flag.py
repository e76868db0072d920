"""Issue 30: a deadline that passes while the site is not serving (a laptop lid closed, the
process stopped) is flagged on the judge's console, with the orders that arrived around it,
until a judge rules on it. The stall is real: the server process is stopped across the
deadline (SIGSTOP), and a General's order sent meanwhile waits in the socket."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import threading
import urllib.error
import urllib.request
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from playwright.sync_api import Page, expect

from referees.kernel.deadlines import order_settle_max
from referees.services.clock import STALL_SECONDS
from tests.browser.conftest import LiveServer, snap
from tests.browser.page_states import tournament_running

pytestmark = pytest.mark.browser

# The clock is resumed with this much left, and the server stopped at once (the answer to
# the resume is all that happens in between, however busy the machine).
LEFT = 3
# How long the stall lasts (the deadline is set back by it while the server is stopped):
# well past the window in which the clocks may resolve a turn, a stall the flag must report.
STALL = LEFT + order_settle_max().total_seconds() + STALL_SECONDS + 4.0


def _deadline_moved_back(live_site: LiveServer, tid: int, *, seconds: float) -> None:
    """The open turn's deadline, in the stopped server's database, ``seconds`` earlier."""
    with sqlite3.connect(live_site.database, timeout=30) as db:
        (deadline,) = db.execute(
            "SELECT deadline FROM referees_tournament WHERE id = ?", (tid,)
        ).fetchone()
        earlier = (datetime.fromisoformat(deadline) - timedelta(seconds=seconds)).isoformat(" ")
        db.execute("UPDATE referees_tournament SET deadline = ? WHERE id = ?", (earlier, tid))
        db.execute(
            "UPDATE strategic_map_turn SET deadline = ? WHERE deadline = ? AND status = 'open'",
            (earlier, deadline),
        )


def _console(page: Page, live_site: LiveServer, tid: int) -> None:
    judge = live_site.data["judge"]
    console = f"/referees/tournaments/{tid}/judge/"
    page.goto("/accounts/sign-in/")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator(".stacked-form button[type=submit]").click()
    expect(page).to_have_url(re.compile(r"/referees/judge/$"))
    page.goto(console)


def test_a_deadline_passed_while_the_site_was_stopped_is_flagged_until_a_judge_rules(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_running(live_site, "Browser: stalled deadline")
    tid = made["id"]
    crab = next(p for p in made["players"] if p["army"] == "crab-1")
    page = new_page("desktop")
    _console(page, live_site, tid)
    expect(page.locator("#flags")).to_be_hidden()
    # A few seconds left on a paused clock; resumed, and the lid closes at once.
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/pause")
    remaining = live_site.judge_api("GET", f"/tournaments/{tid}/state")["tournament"]["clock"][
        "remaining"
    ]
    live_site.judge_api(
        "POST", f"/tournaments/{tid}/clock/extend", {"seconds": -(int(remaining) - LEFT)}
    )
    answers: list[object] = []

    def send() -> None:
        request = urllib.request.Request(
            f"{live_site.url}/api/tournaments/{tid}/orders/mine",
            data=json.dumps({"kind": "hold", "turn": 1}).encode(),  # the turn his phone shows
            headers={
                "Authorization": f"Bearer {crab['token']}",
                "Content-Type": "application/json",
                "Accept": "application/json",
            },
            method="PUT",
        )
        try:  # waits through the stall, as a phone's request does
            with urllib.request.urlopen(request, timeout=STALL + 60) as response:
                answers.append(response.status)
        except urllib.error.HTTPError as refused:  # the API's 409, as the phone gets it
            answers.append(json.loads(refused.read()))

    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resume")
    os.kill(live_site.process.pid, signal.SIGSTOP)
    try:
        sender = threading.Thread(target=send)
        sender.start()  # pressed Send in time; the server reads it when it wakes
        # The lid stays closed past the deadline by STALL seconds: rather than wait them out,
        # the frozen server's clock is set back by that much, as a laptop waking finds it.
        _deadline_moved_back(live_site, tid, seconds=STALL)
    finally:
        os.kill(live_site.process.pid, signal.SIGCONT)
    sender.join(timeout=60)

    assert answers and isinstance(answers[0], dict) and answers[0]["code"] == "late", answers
    flags = page.locator("#flags")
    expect(flags).to_be_visible(timeout=30_000)
    expect(flags).to_contain_text("passed while the server was not serving")
    expect(flags).to_contain_text("crab-1")
    expect(flags).to_contain_text("order refused as late")
    snap(page, "console-deadline-flag")

    russian = new_page("phone", locale="ru-RU")
    _console(russian, live_site, tid)
    expect(russian.locator("#flags")).to_be_visible()
    expect(russian.locator("#flags")).to_contain_text("приказ отклонён как опоздавший")
    snap(russian, "console-deadline-flag-russian")

    page.locator("#flags-list button").first.click()
    expect(flags).to_be_hidden()
    expect(russian.locator("#flags")).to_be_hidden(timeout=15_000)  # the other judge's too
    expect(page.locator("#log-body")).to_contain_text("ruled on the missed deadline of turn 1")
