"""R11 in the browser: the General's phone shows the open turn's draw commitment, live."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_r11_the_general_page_shows_the_commitment_and_follows_a_redraw(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["order"]
    state = live_site.judge_api("GET", f"/tournaments/{game['id']}/state")
    commitment = state["tournament"]["commitment"]
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    page = new_page("phone")
    page.goto(f"/join/{game['token']}")
    line = page.locator("[data-draw-commitment]")
    expect(line).to_be_visible()
    expect(line.locator("code")).to_have_text(commitment)

    live_site.judge_api(
        "POST", f"/tournaments/{game['id']}/clock/redraw", body={"reason": "browser test"}
    )
    renewed = live_site.judge_api("GET", f"/tournaments/{game['id']}/state")
    assert renewed["tournament"]["commitment"] != commitment
    expect(line.locator("code")).to_have_text(renewed["tournament"]["commitment"])
