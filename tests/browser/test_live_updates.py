"""Live updates in a real browser (static/js/live.js, issue 33).

A page whose socket is open needs no request after a change: the event brings its own
view of the new turn. And a page whose socket stayed open while an event was lost (a full
channel, a dropped message) notices at its next ping, whose answer carries the version,
and catches up without a reload.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable
from datetime import datetime, timezone

import pytest
from playwright.sync_api import Page, Route, expect

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser


def turn_label(turn: int) -> re.Pattern[str]:
    """The clock's heading for ``turn`` in any language ("Turn 2", "Ход 2 из 10")."""
    return re.compile(rf"^\D*\b{turn}\b")


def test_a_generals_page_takes_the_new_turn_from_the_event_without_fetching_it(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["live"]
    page = new_page("phone")
    page.goto(f"/join/{game['token']}")
    expect(page.locator("#live-status")).to_have_text("Live")
    turn = live_site.api("GET", f"/tournaments/{game['id']}/state", token=game["token"])[
        "tournament"
    ]["turn"]
    expect(page.locator("#clock-turn")).to_have_text(turn_label(turn))
    fetched: list[str] = []

    def refuse(route: Route) -> None:
        fetched.append(route.request.url)
        route.abort()

    # From now on the state cannot be fetched: the new turn must come with the event.
    page.route("**/api/tournaments/*/state", refuse)

    live_site.judge_api("POST", f"/tournaments/{game['id']}/clock/resolve-now?turn={turn}")

    expect(page.locator("#clock-turn")).to_have_text(turn_label(turn + 1))
    assert fetched == []


def test_a_page_whose_event_was_lost_catches_up_at_its_next_ping(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """An announcement written straight into the database, with the version moved on and
    no event sent: the big screen shows it without reloading, once the server counts the
    event as lost (``referees.live.hubs.EVENT_LATE_SECONDS``, then its next pong: issue
    42; before that a pong vouches only for what was delivered, as for an event on its
    way)."""
    game = live_site.data["live"]
    page = new_page("desktop")
    page.goto(f"/referees/tournaments/{game['id']}/screen/")
    # The socket has said hello (the status reads "Live", hidden while it is so).
    expect(page.locator("#screen-status")).to_have_text("Live")
    expect(page.locator("#screen-status")).to_be_hidden()
    page.evaluate("window.__sameDocument = true")
    text = "Lunch is served in the east hall"

    with sqlite3.connect(live_site.database, timeout=30) as db:
        db.execute(
            "INSERT INTO referees_announcement (tournament_id, text, created_at, author) "
            "VALUES (?, ?, ?, ?)",
            (game["id"], text, datetime.now(timezone.utc).isoformat(), "judge"),
        )
        db.execute(
            "UPDATE strategic_map_campaign SET version = version + 1 WHERE id = "
            "(SELECT campaign_id FROM referees_tournament WHERE id = ?)",
            (game["id"],),
        )

    # The late window, a heartbeat and live.js's catch-up, with room for a busy machine.
    expect(page.locator("#screen-announcements-list")).to_contain_text(text, timeout=45_000)
    assert page.evaluate("window.__sameDocument") is True
