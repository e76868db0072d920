"""When the venue's network fails (issue 32): the judge prints the turn pack, the Generals
tick their slips, and the judge types them in with the keyboard alone.

The tournament has 20 players (R1 b): the Crab, Crane, Dragon and Lion have a Daimyo, so
their Generals see only their own surroundings (R1.1); the Phoenix, Scorpion, Shadowlands
and Unicorn see the map. A Crab army was destroyed by a winner's choice and the Lion took
Hida, one of the two Crab castles it could reform in: its General cannot know it, so his
slip offers Hida, and the judge who types it in is told why it is refused.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from sl5r.rules.mapgraph import map_from_dict
from tests.browser.conftest import SCREENSHOTS, LiveServer, judge_sign_in, snap
from tests.browser.page_states import tournament_running
from tests.browser.test_page_widths import OUT_OF_PLACE

pytestmark = pytest.mark.browser

PLAYERS = 20
WIDTHS = {"phone": (390, 844), "tablet": (820, 1180), "projector": (1920, 1080)}
T = "/referees/tournaments"


def paper_tournament(live_site: LiveServer, name: str) -> dict[str, Any]:
    """Turn 2 open: crab-1 destroyed by a winner's choice (it may reform now), Hida held by
    the Lion, and a table where an army marched in on another clan's in turn 1."""
    made = tournament_running(live_site, name, players=PLAYERS)
    tid = made["id"]
    for kind, body in (
        ("army", {"army": "crab-1", "province": None, "destroyed_by": "winner"}),
        ("control", {"province": "crab-hida", "clan": "lion"}),
    ):
        live_site.judge_api(
            "POST", f"/tournaments/{tid}/corrections/{kind}", {**body, "reason": "test"}
        )
    state = live_site.judge_api("GET", f"/tournaments/{tid}/state")
    where = {a["id"]: a["province"] for a in state["armies"] if a["province"]}
    clan = {a["id"]: a["clan"] for a in state["armies"]}
    board = map_from_dict(live_site.api("GET", f"/tournaments/{tid}/map"))
    # R7: an army marches into a neighbouring province held by another clan's army.
    guest, host = next(
        (code, other)
        for code, province in sorted(where.items())
        for other, there in sorted(where.items())
        if clan[other] != clan[code] and board.adjacent(province, there)
    )
    live_site.judge_api(
        "PUT", f"/tournaments/{tid}/armies/{guest}/order", {"kind": "move", "path": [where[host]]}
    )
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    return made


def shoot(page: Page, name: str) -> None:
    """Screenshots at a phone's, a tablet's and a projector's width, each checked to fit."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for device, (width, height) in WIDTHS.items():
        page.set_viewport_size({"width": width, "height": height})
        assert page.evaluate(OUT_OF_PLACE) == [], f"{name} at {width} px"
        page.screenshot(
            path=str(SCREENSHOTS / f"{name}-{device}.png"), full_page=True, animations="disabled"
        )


@pytest.mark.parametrize("language", ["en", "ru"])
def test_issue_32_the_turn_pack_prints_a_slip_per_general_in_both_languages(
    new_page: Callable[..., Page], live_site: LiveServer, language: str
) -> None:
    made = paper_tournament(live_site, f"Browser: turn pack {language}")
    generals = sorted(p["army"] for p in made["players"] if p["army"])
    page = new_page("desktop", locale=language)
    judge_sign_in(page, live_site)

    page.goto(f"{T}/{made['id']}/turn-pack")

    slips = page.locator("article.slip")
    expect(slips).to_have_count(len(generals))
    # The order of the paper orders' form: clan order, then army code.
    expect(slips.first).to_have_attribute("data-army", "crab-1")
    army = "Армия" if language == "ru" else "Army"
    expect(slips.first.locator(".slip-facts dt").nth(1)).to_contain_text(army)
    expect(slips.first).to_contain_text("Army · Армия" if language == "en" else "Армия · Army")
    crab = page.locator("#slip-crab-1")
    expect(crab.locator(".choice")).to_have_count(2)  # Hida and Kaiu: he cannot know
    expect(crab).to_contain_text("Daimyo")
    expect(page.locator("#slip-scorpion-1 .slip-swap .box-line")).to_have_count(2)
    unicorn_twos = page.locator("#slip-unicorn-1 .choice").filter(has_text=re.compile("→"))
    expect(unicorn_twos.first).to_be_visible()
    expect(page.locator("#board-armies tbody tr")).to_have_count(len(generals))
    expect(page.locator("#board-tables tbody tr")).to_have_count(1)
    expect(page.locator("#print-pack")).to_be_visible()
    snap(page, f"paper-turn-pack-{language}")
    shoot(page, f"paper-turn-pack-{language}")

    # On paper: no header, no button, the slips two across.
    page.emulate_media(media="print")
    page.set_viewport_size({"width": 794, "height": 1123})  # A4 at 96 dpi
    expect(page.locator("#print-pack")).to_be_hidden()
    expect(page.locator(".site-header")).to_be_hidden()
    first, second = (slips.nth(i).bounding_box() for i in range(2))
    assert first is not None and second is not None
    assert first["y"] == second["y"] and second["x"] > first["x"]
    page.screenshot(
        path=str(SCREENSHOTS / f"paper-turn-pack-{language}-print.png"),
        full_page=True,
        animations="disabled",
    )
    if language == "en":
        page.pdf(path=str(SCREENSHOTS / "paper-turn-pack.pdf"), format="A4")


def test_issue_32_slips_typed_with_the_keyboard_are_stored_and_a_refusal_says_why(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = paper_tournament(live_site, "Browser: paper orders")
    tid = made["id"]
    page = new_page("desktop")
    judge_sign_in(page, live_site)
    page.goto(f"{T}/{tid}/paper-orders")
    keys = page.keyboard

    # Row 1, crab-1: box 1 is Hida, which the Lion holds now (R9): refused, with the reason.
    expect(page.locator("#paper-choice-crab-1")).to_be_focused()
    keys.press("1")
    expect(page.locator("#paper-row-crab-1 .paper-hint")).to_contain_text("Hida")
    keys.press("Enter")
    # Row 2, crab-2: box 1, Hold.
    expect(page.locator("#paper-choice-crab-2")).to_be_focused()
    keys.press("1")
    keys.press("Enter")
    # Row 3, crane-1: box 2, the first province on its slip.
    keys.press("2")
    keys.press("Enter")
    # Row 4, crane-2: box 2, and "does not claim" (Tab, Space).
    keys.press("2")
    keys.press("Tab")
    keys.press("Space")
    keys.press("Enter")
    # Row 5 is left at "no slip"; row 6, dragon-2: Hold.
    keys.press("Enter")
    expect(page.locator("#paper-choice-dragon-2")).to_be_focused()
    keys.press("1")
    keys.press("Enter")

    refused = page.locator("#paper-row-crab-1")
    expect(refused).to_have_class(re.compile(r"\bis-refused\b"))
    expect(refused.locator(".paper-refusal")).to_contain_text("Refused")
    expect(refused.locator(".paper-refusal")).to_contain_text("Hida")
    for army, text in (
        ("crab-2", "Hold"),
        ("crane-1", "✓ Move to "),
        ("crane-2", "does not claim"),
        ("dragon-2", "Hold"),
    ):
        expect(page.locator(f"#paper-row-{army} .paper-stored")).to_contain_text(text)
        expect(page.locator(f"#paper-row-{army} .paper-stored")).to_have_class(
            re.compile(r"\bis-ok\b")
        )
    expect(page.locator("#paper-summary")).to_have_text("4 stored, 1 refused, 0 waiting.")
    expect(page.locator("#paper-choice-dragon-1")).to_have_value("")
    snap(page, "paper-orders-entered")
    shoot(page, "paper-orders-entered")

    # The console's orders this turn: entered by a judge.
    page.goto(f"{T}/{tid}/judge/")
    orders = page.locator("#orders-body")
    expect(orders.locator("tr[data-army='crab-2']")).to_contain_text("hold")
    expect(orders.locator("tr[data-army='crane-2']")).to_contain_text("does not claim")
    expect(orders.locator("tr[data-army='dragon-2']")).to_contain_text("judge")
    expect(orders.locator("tr[data-army='crab-1']")).not_to_contain_text("reform in")
    expect(page.locator("#turn-pack-link")).to_be_visible()
    expect(page.locator("#paper-orders-link")).to_be_visible()


def test_issue_32_the_paper_orders_form_in_russian(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = paper_tournament(live_site, "Browser: paper orders ru")
    page = new_page("desktop", locale="ru")
    judge_sign_in(page, live_site)

    page.goto(f"{T}/{made['id']}/paper-orders")
    page.keyboard.press("1")
    page.keyboard.press("Enter")

    expect(page.locator("#paper-row-crab-1 .paper-refusal")).to_contain_text("Отклонено")
    shoot(page, "paper-orders-ru")
