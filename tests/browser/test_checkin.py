"""Check-in before the start (issue 32), in a real browser.

Forty players are registered (five a clan: three Generals, a Daimyo, a Karo). As players open
their join links on their phones, the judge's console counts them in live; the judge marks a
paper player present, gives a no-show's seat to a stand-in in two taps, and, for a General
who never came, previews the line-up R1 (b) leaves without him (his clan's Karo steps into
his army) before applying it; the tournament then starts with 39. The reprinted join sheet
shows each card's state. Console at projector, tablet and phone size, English and Russian.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, judge_sign_in, snap
from tests.browser.page_states import tournament_in_setup

PHONE = {"width": 390, "height": 844}
TABLET = {"width": 820, "height": 1180}
PROJECTOR = {"width": 1920, "height": 1080}


def fits_the_width(page: Page) -> bool:
    width: Any = page.evaluate("document.documentElement.scrollWidth")
    return page.viewport_size is not None and int(width) <= page.viewport_size["width"]


def named(made: dict[str, Any], clan: str, role: str, number: int) -> dict[str, Any]:
    """The player tournament_in_setup registered as "<Clan> <role> <number>"."""
    wanted = f"{clan.title()} {role} {number}"
    return next(p for p in made["players"] if p["name"] == wanted)


def test_check_in_a_stand_in_and_a_smaller_line_up(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_in_setup(live_site, "Browser: check-in", players=40)
    tid = made["id"]
    console = new_page("desktop")
    console.set_viewport_size(PROJECTOR)
    judge_sign_in(console, live_site)
    console.goto(f"/referees/tournaments/{tid}/judge/")
    panel = console.locator("#checkin-panel")
    expect(panel).to_be_visible()
    expect(console.locator("#checkin-count")).to_have_text("0 of 40 checked in")

    # Two players open their join links on their phones: counted in, live.
    for player in (named(made, "lion", "general", 1), named(made, "crane", "daimyo", 4)):
        phone = new_page("phone")
        phone.goto(player["join_url"].replace(live_site.url, ""))
        expect(phone).not_to_have_url(re.compile(r"/join/"))
    expect(console.locator("#checkin-count")).to_have_text("2 of 40 checked in")
    here = console.locator("#checkin-here")
    expect(here).to_contain_text(
        re.compile(r"Lion general 1 · Lion, General, lion-1 — opened his link at \d\d:\d\d")
    )

    # A paper player, marked present by the judge.
    paper = named(made, "crab", "general", 1)
    console.locator(f'#checkin-missing button[data-present="{paper["id"]}"]').click()
    expect(console.locator("#checkin-count")).to_have_text("3 of 40 checked in")
    expect(here).to_contain_text(re.compile(r"Crab general 1 .* marked present by browser-judge"))

    # A no-show's seat goes to a stand-in: "Replace…", a name, Enter.
    gone = named(made, "dragon", "general", 2)
    console.locator(f'#checkin-missing button[data-replace="{gone["id"]}"]').click()
    console.locator(f'input[data-stand-in="{gone["id"]}"]').fill("Mirumoto Hitomi")
    console.keyboard.press("Enter")
    expect(console.locator("#checkin-message")).to_contain_text(
        "Mirumoto Hitomi has the seat. New join link:"
    )
    expect(console.locator("#checkin-missing")).to_contain_text(
        "Mirumoto Hitomi · Dragon, General, dragon-2"
    )
    snap(console, "checkin-console")

    # Everyone else comes but one General (and the stand-in, on his way); the judge marks
    # them present through the API.
    missing = named(made, "crab", "general", 2)
    for player in made["players"]:
        if player["id"] not in (missing["id"], paper["id"], gone["id"]) and player["name"] not in (
            "Lion general 1",
            "Crane daimyo 4",
        ):
            live_site.judge_api(
                "POST", f"/tournaments/{tid}/players/{player['id']}/presence", {"present": True}
            )
    expect(console.locator("#checkin-count")).to_have_text("38 of 40 checked in")

    # Tick him, preview: his clan's Karo steps into his army; nothing changes until applied.
    console.locator(f'input[data-no-show="{missing["id"]}"]').check()
    console.locator("#checkin-preview").click()
    plan = console.locator("#checkin-plan")
    expect(plan).to_contain_text("Without them: 40 players become 39")
    expect(plan).to_contain_text("Leave: Crab general 2")
    expect(plan).to_contain_text("Crab karo 5 (Crab): Karo → General · takes army crab-2")
    assert (
        live_site.judge_api("GET", f"/tournaments/{tid}/checkin")
        and len(live_site.judge_api("GET", f"/tournaments/{tid}/checkin")) == 40
    )
    for size in (TABLET, PHONE):
        console.set_viewport_size(size)
        assert fits_the_width(console), size
    snap(console, "checkin-shrink-preview")
    console.set_viewport_size(PROJECTOR)
    console.locator("#checkin-apply").click()
    expect(console.locator("#checkin-message")).to_have_text("The line-up now has 39 players.")
    expect(console.locator("#checkin-count")).to_have_text("38 of 39 checked in")
    expect(console.locator("#checkin-missing li")).to_have_count(1)

    # The line-up fits R1 as it is: the tournament starts.
    started = live_site.judge_api("POST", f"/tournaments/{tid}/start")
    assert started["phase"] == "planning"

    # The reprinted join sheet shows each card's state; the stand-in's card is still out.
    sheet = new_page("desktop", locale="ru-RU")
    sheet.context.add_cookies(console.context.cookies())
    sheet.goto(f"/referees/tournaments/{tid}/join-sheet?missing=1")
    expect(sheet.locator(".join-card")).to_have_count(1)
    expect(sheet.locator(".join-card")).to_contain_text("Mirumoto Hitomi")
    expect(sheet.locator(".join-card .checkin")).to_have_text("Ещё не отметились")
    sheet.goto(f"/referees/tournaments/{tid}/join-sheet")
    expect(sheet.locator(".join-card .checkin.is-in")).to_have_count(38)
    snap(sheet, "checkin-join-sheet-ru")


def test_the_check_in_panel_in_russian_refuses_a_shrink_r1_b_does_not_allow(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_in_setup(live_site, "Browser: check-in ru", players=40)
    tid = made["id"]
    console = new_page("desktop", locale="ru-RU")
    console.set_viewport_size(TABLET)
    judge_sign_in(console, live_site)
    console.goto(f"/referees/tournaments/{tid}/judge/")
    expect(console.locator("#checkin-count")).to_have_text("отметились 0 из 40")

    # Two Generals of one clan: two members fewer, where R1 (b) allows one.
    for number in (1, 2):
        player = named(made, "lion", "general", number)
        console.locator(f'input[data-no-show="{player["id"]}"]').check()
    console.locator("#checkin-preview").click()
    plan = console.locator("#checkin-plan")
    expect(plan.locator("[role=alert]")).to_contain_text("Лев: нужно 3 Генерала")
    expect(console.locator("#checkin-apply")).to_have_count(0)
    assert fits_the_width(console)
    console.set_viewport_size(PHONE)
    assert fits_the_width(console)
    snap(console, "checkin-refused-ru")
