"""R9 on a General's phone: no Reform buttons before the army may reform, then they appear."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap
from tests.browser.page_states import tournament_running

pytestmark = pytest.mark.browser


def test_r9_the_reform_buttons_appear_from_the_turn_the_army_may_reform(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_running(live_site, "Browser: reform")
    tid = made["id"]
    general = next(p for p in made["players"] if p["clan"] == "crab" and p["army"])
    link = live_site.judge_api("POST", f"/tournaments/{tid}/players/{general['id']}/join-link")
    # A loss in turn 1: the army may reform from turn 3 (R9: T + 2).
    live_site.judge_api(
        "POST",
        f"/tournaments/{tid}/corrections/army",
        {"army": general["army"], "province": None, "destroyed_by": "loss", "reason": "lost"},
    )
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    page = new_page("phone")

    page.goto(f"/join/{link['token']}")
    expect(page.locator("#order-note")).to_have_text("Your army may reform from turn 3.")
    expect(page.locator("#order-form")).to_be_hidden()
    expect(page.locator("#reform-destinations button")).to_have_count(0)
    snap(page, "general-reform-too-early")

    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=2")

    # The next turn's state arrives live: now the castles are offered.
    buttons = page.locator("#reform-destinations button")
    expect(buttons).to_have_count(2)
    expect(page.locator("#order-note")).to_have_text("")
    buttons.first.tap()
    page.locator("#send-button").tap()
    expect(page.locator("#order-message")).to_have_class(re.compile(r"\bis-ok\b"))
    snap(page, "general-reform-allowed")


def test_r9_a_clan_without_its_home_castles_is_told_why_it_cannot_reform(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_running(live_site, "Browser: reform lost castles")
    tid = made["id"]
    crab = [p for p in made["players"] if p["clan"] == "crab" and p["army"]]
    link = live_site.judge_api("POST", f"/tournaments/{tid}/players/{crab[0]['id']}/join-link")
    corrections = [
        ("army", {"army": crab[0]["army"], "province": None, "destroyed_by": "winner"}),
        ("army", {"army": crab[1]["army"], "province": "shinomen-mori"}),
        ("control", {"province": "crab-hida", "clan": "lion"}),
        ("control", {"province": "crab-kaiu", "clan": "lion"}),
    ]
    for kind, body in corrections:
        live_site.judge_api(
            "POST", f"/tournaments/{tid}/corrections/{kind}", {**body, "reason": "x"}
        )
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    page = new_page("phone")

    page.goto(f"/join/{link['token']}")

    note = page.locator("#order-note")
    expect(note).to_contain_text("your clan controls none of its home castles")
    expect(note).to_contain_text("Hida Lands, Kaiu Lands")
    expect(note).to_contain_text("Retake one of them")
    expect(page.locator("#reform-destinations button")).to_have_count(0)
    snap(page, "general-reform-no-castle")
