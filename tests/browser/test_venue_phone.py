"""The issue's "done when", in a real browser: ``make venue``, a judge prints the join
sheet from the console in one click, and a phone on the Wi-Fi opens a card's link and gives
an order.

The phone reaches the laptop by the name the venue's router gives it (``referee.lan``,
``SITE_URL``); Chromium resolves that name to loopback, so no traffic leaves the machine.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

import pytest
from playwright.sync_api import Browser, Playwright, expect

from sl5r.public_url import qr_svg
from tests.browser.conftest import CHROMIUM_ARGS, DEVICES, SCREENSHOTS, TIMEOUT_MS
from tests.venue_server import Venue, free_port

VENUE_NAME = "referee.lan"
# A General whose army is not at the demo's battle table, so he may move.
PLAYER = "Doji Hoturi"


@pytest.fixture
def venue_browser(playwright_driver: Playwright, chromium_path: str) -> Iterator[Browser]:
    launched = playwright_driver.chromium.launch(
        executable_path=chromium_path,
        headless=True,
        args=[*CHROMIUM_ARGS, f"--host-resolver-rules=MAP {VENUE_NAME} 127.0.0.1"],
    )
    yield launched
    launched.close()


def test_a_phone_scans_a_printed_card_and_gives_an_order(
    start_venue: Callable[..., Venue], venue_browser: Browser
) -> None:
    # given: the organiser's `make venue`, the laptop known as referee.lan on the Wi-Fi
    port = free_port()
    site = f"http://{VENUE_NAME}:{port}"
    venue = start_venue(port=port, extra={"SITE_URL": site})
    judge = venue_browser.new_context(viewport={"width": 1920, "height": 1080})
    judge.set_default_timeout(TIMEOUT_MS)
    # Record the print dialog instead of opening it (headless Chromium has none).
    judge.add_init_script("window.print = () => { window.__printed = true; };")
    console = judge.new_page()
    console.goto(f"http://127.0.0.1:{port}/admin/login/?next=/referees/tournaments/1/judge/")
    console.fill("#id_username", "judge")
    console.fill("#id_password", venue.judge_password)
    console.locator("input[type=submit]").click()
    expect(console).to_have_url(re.compile(r"/referees/tournaments/1/judge/$"))

    # when: one click prints the join sheet
    with judge.expect_page() as opened:
        console.locator("#print-join-sheet").click()
    sheet = opened.value
    sheet.wait_for_load_state("load")
    expect(sheet.locator(".join-card").first).to_be_visible()
    sheet.wait_for_function("window.__printed === true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    sheet.screenshot(path=str(SCREENSHOTS / "venue-join-sheet-desktop.png"))
    card = sheet.locator(".join-card", has_text=PLAYER)
    link = card.locator(".url").inner_text().strip()

    # then: the card's link and its QR code carry the venue's address, not 127.0.0.1
    assert link.startswith(f"{site}/join/"), link
    # (the browser re-serialises the SVG, so compare the code's modules, its path)
    modules = re.search(r' d="([^"]+)"', str(qr_svg(link)))
    assert modules is not None
    assert card.locator("svg path").get_attribute("d") == modules.group(1)

    # and a phone on the Wi-Fi opens it (as scanning the code does) and gives an order
    phone = venue_browser.new_context(**DEVICES["phone"])
    phone.set_default_timeout(TIMEOUT_MS)
    page = phone.new_page()
    page.goto(link)
    expect(page).to_have_url(re.compile(rf"^{re.escape(site)}/referees/tournaments/1/general/$"))
    expect(page.locator("#army-line strong")).to_be_visible()
    destination = page.locator("#destinations button").first
    province = destination.inner_text().strip()
    destination.tap()
    page.locator("#send-button").tap()
    expect(page.locator("#order-message")).to_have_class(re.compile(r"\bis-ok\b"))
    expect(page.locator("#stored-order")).to_contain_text(province)
    page.screenshot(path=str(SCREENSHOTS / "venue-phone-order-phone.png"))
    judge.close()
    phone.close()
