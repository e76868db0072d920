"""The judge console and the big screen in a real browser, with the live updates.

The data (tournaments, the judge's account and API key) comes from ``scenario.py``.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap

pytestmark = pytest.mark.browser

# How long a stopped countdown is watched to see that it stays stopped: it shows whole
# seconds, so a running one changes at least once in this time.
STILL_MS = 1_500


def clock_text(seconds: float) -> str:
    """What the pages show for ``seconds`` left (formatClock in format.js), below an hour."""
    whole = math.ceil(max(0.0, seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def seconds_shown(text: str) -> int:
    minutes, seconds = text.strip().split(":")
    return int(minutes) * 60 + int(seconds)


def wait_for_change(page: Page, selector: str, old: str, timeout: int = 3_000) -> str:
    """Wait until the element's text is no longer ``old``; its new text."""
    page.wait_for_function(
        "([selector, old]) => document.querySelector(selector).textContent.trim() !== old",
        arg=[selector, old],
        timeout=timeout,
    )
    return page.locator(selector).inner_text().strip()


def test_the_judge_pauses_and_resumes_the_clock(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Sign in, open the console: pause stops the countdown, resume runs it again."""
    game = live_site.data["clock"]
    judge = live_site.data["judge"]
    console = f"/referees/tournaments/{game['id']}/judge/"
    page = new_page("desktop")

    page.goto(f"/admin/login/?next={console}")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("input[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(console)}$"))
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    countdown = page.locator("#countdown")
    expect(countdown).to_have_text(re.compile(r"^\d+:\d\d$"))
    wait_for_change(page, "#countdown", countdown.inner_text().strip())  # it runs

    page.locator("#btn-pause").click()
    expect(page.locator("#clock-paused")).to_be_visible()
    expect(page.locator("#btn-resume")).to_be_visible()
    clock = live_site.judge_api("GET", f"/tournaments/{game['id']}/state")["tournament"]["clock"]
    assert clock["paused"] is True
    assert clock["deadline"] is None
    expect(countdown).to_have_text(clock_text(clock["remaining"]))
    paused_at = countdown.inner_text().strip()
    page.wait_for_timeout(STILL_MS)  # a stopped clock: nothing to wait for but time
    expect(countdown).to_have_text(paused_at)
    snap(page, "judge-console-paused")

    page.locator("#btn-resume").click()
    expect(page.locator("#clock-paused")).to_be_hidden()
    expect(page.locator("#btn-pause")).to_be_visible()
    running_at = wait_for_change(page, "#countdown", paused_at)
    assert seconds_shown(running_at) < seconds_shown(paused_at)
    clock = live_site.judge_api("GET", f"/tournaments/{game['id']}/state")["tournament"]["clock"]
    assert clock["paused"] is False
    assert clock["deadline"] is not None


def test_the_big_screen_follows_the_turn_without_a_reload(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Resolving the turn (API) moves the screen to the next turn: turn, countdown and map
    change within seconds, over the websocket, and the page is never reloaded."""
    game = live_site.data["screen"]
    army = game["army"]
    page = new_page("desktop")
    navigations: list[str] = []

    page.goto(f"/referees/tournaments/{game['id']}/screen/")
    expect(page.locator("#screen-status")).to_have_text("Live")  # the websocket is open
    expect(page.locator("#screen-turn")).to_have_text(re.compile(r"^Turn 1\b"))
    marker = page.locator(f'#screen-war-map g.army-marker[data-armies~="{army}"]')
    expect(marker).to_have_attribute("data-province", game["from"])
    countdown = page.locator("#screen-countdown")
    expect(countdown).to_have_text(re.compile(r"^\d+:\d\d$"))
    before = seconds_shown(countdown.inner_text())
    assert before <= 20 * 60, before  # turn 1 was shortened by ten minutes
    snap(page, "big-screen-turn-1")
    page.evaluate("window.__sl5rNotReloaded = true")
    page.on("framenavigated", lambda frame: navigations.append(frame.url))

    live_site.judge_api("POST", f"/tournaments/{game['id']}/clock/resolve-now?turn=1")

    expect(page.locator("#screen-turn")).to_have_text(re.compile(r"^Turn 2\b"))
    expect(marker).to_have_attribute("data-province", game["to"])
    expect(countdown).to_have_text(re.compile(r"^(30:00|29:[0-5]\d)$"))
    assert page.evaluate("window.__sl5rNotReloaded") is True
    assert navigations == []
    snap(page, "big-screen-turn-2")
