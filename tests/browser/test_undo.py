"""Undoing a turn from the judge console (R4): the dialog lists what is discarded and asks
for the reopened turn's time; the turn reopens paused with it.

The tournament is ``scenario.py``'s "undo": turn 1 was resolved ten minutes early and opened
a meeting table; in turn 2 a General gave an order, the judge entered a paper order and
corrected a province's control.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap

pytestmark = pytest.mark.browser


def clock_text(seconds: int) -> str:
    """``formatClock`` in format.js, below an hour."""
    return f"{seconds // 60}:{seconds % 60:02d}"


def open_console(page: Page, live_site: LiveServer, tournament_id: int) -> None:
    judge = live_site.data["judge"]
    console = f"/referees/tournaments/{tournament_id}/judge/"
    page.goto(f"/admin/login/?next={console}")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("input[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(console)}$"))
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")


def test_r4_the_undo_dialog_lists_what_is_discarded_and_fits_a_phone(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["undo"]
    page = new_page("phone")
    open_console(page, live_site, game["id"])

    page.locator("#btn-undo").click()
    dialog = page.locator("#undo-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#undo-items li")).to_have_count(4)
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390
    snap(page, "judge-undo-dialog")
    page.screenshot(path="artifacts/screenshots/judge-undo-dialog-390.png")
    page.locator("#undo-cancel").click()
    expect(dialog).to_be_hidden()
    assert not live_site.judge_api("GET", f"/tournaments/{game['id']}/state")["tournament"][
        "clock"
    ]["paused"]


def test_r4_the_judge_undoes_a_turn_and_it_reopens_paused_with_the_time_it_had_left(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["undo"]
    page = new_page("desktop")
    page.set_viewport_size({"width": 1280, "height": 800})
    open_console(page, live_site, game["id"])

    page.locator("#btn-undo").click()
    dialog = page.locator("#undo-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#undo-title")).to_have_text(re.compile(r"\b1\b"))
    items = page.locator("#undo-items li")
    expect(items).to_have_count(4)
    expect(page.locator("#undo-items")).to_contain_text(game["general"])
    expect(page.locator("#undo-items")).to_contain_text(game["army"])
    expect(page.locator("#undo-items")).to_contain_text("paper order")
    expect(page.locator("#undo-items")).to_contain_text("a correction to be discarded")
    expect(page.locator("#undo-items")).to_contain_text("table opened")
    left = clock_text(game["left_seconds"])
    expect(page.locator("#undo-left")).to_contain_text(left)
    expect(page.locator('input[name="time"][value="left"]')).to_be_checked()
    expect(page.locator("#undo-full")).to_contain_text("30:00")
    box = dialog.bounding_box()
    assert box is not None and box["y"] >= 0 and box["y"] + box["height"] <= 800
    page.screenshot(path="artifacts/screenshots/judge-undo-dialog-1280.png")

    page.locator("#undo-confirm").click()  # no reason yet: the form asks for it and stays
    expect(page.locator("#undo-reason:invalid")).to_have_count(1)
    expect(dialog).to_be_visible()
    page.locator("#undo-reason").fill("the paper order was for the wrong army")
    page.locator("#undo-confirm").click()

    expect(dialog).to_be_hidden()
    expect(page.locator("#clock-paused")).to_be_visible()
    expect(page.locator("#btn-resume")).to_be_visible()
    expect(page.locator("#countdown")).to_have_text(left)
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^1\b"))
    page.screenshot(path="artifacts/screenshots/judge-undone-paused-1280.png")
    clock = live_site.judge_api("GET", f"/tournaments/{game['id']}/state")["tournament"]["clock"]
    assert clock["paused"] is True and clock["remaining"] == game["left_seconds"]
