"""A General's page in a real browser: giving an order, in Russian, and seeing only his own.

The data (tournaments, join links) comes from ``scenario.py``; see ``conftest.py``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from playwright.sync_api import Page, Response, expect

from tests.browser.conftest import LiveServer, snap

pytestmark = pytest.mark.browser

LOCALE_PO = Path(__file__).resolve().parents[2] / "locale" / "ru" / "LC_MESSAGES" / "django.po"


def join(page: Page, token: str, tournament_id: int) -> None:
    """Open the join link as a player would (scanning his card): on to his General page."""
    page.goto(f"/join/{token}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tournament_id}/general/$"))


def wait_for_state(page: Page) -> None:
    """The state has arrived and is drawn: his army's line and the countdown."""
    expect(page.locator("#army-line strong")).to_be_visible()
    # The countdown is drawn on its next tick (every 250 ms), not with the state.
    expect(page.locator("#clock-time")).to_have_text(re.compile(r"^\d+:\d\d"))


def test_a_general_sends_an_order_from_his_phone(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Tap a destination, send: the page shows the stored order and the server has it."""
    game = live_site.data["order"]
    page = new_page("phone")

    join(page, game["token"], game["id"])
    wait_for_state(page)
    destination = page.locator("#destinations button").first
    province_name = destination.inner_text().strip()
    destination.tap()
    expect(page.locator("#destinations button").first).to_have_attribute("aria-pressed", "true")
    expect(page.locator("#choice-summary")).to_contain_text(province_name)
    page.locator("#send-button").tap()

    expect(page.locator("#order-message")).to_have_class(re.compile(r"\bis-ok\b"))
    expect(page.locator("#stored-order")).to_contain_text(province_name)
    expect(page.locator("#withdraw-button")).to_be_visible()
    snap(page, "general-order-sent")
    state = live_site.judge_api("GET", f"/tournaments/{game['id']}/state")
    orders = [o for o in state["orders"] if o["army"] == game["army"]]
    assert len(orders) == 1, state["orders"]
    names = {
        p["id"]: p.get("name") or p["id"]
        for p in live_site.api("GET", f"/tournaments/{game['id']}/map")["provinces"]
    }
    assert orders[0]["kind"] == "move"
    assert [names[p] for p in orders[0]["path"]] == [province_name]
    assert orders[0]["by_judge"] is False


def test_the_general_page_speaks_russian(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """A phone set to Russian gets the page in Russian (Accept-Language, LocaleMiddleware)."""
    # The translation is being completed; these two are in the catalog already.
    catalog = LOCALE_PO.read_text(encoding="utf-8")
    assert 'msgid "Crab"\nmsgstr "Краб"' in catalog
    assert 'msgid "Map"\nmsgstr "Карта"' in catalog
    game = live_site.data["russian"]
    page = new_page("phone", locale="ru-RU")

    join(page, game["token"], game["id"])

    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator(".player-head .who")).to_contain_text("Краб")
    expect(page.locator("#map-heading")).to_have_text("Карта")
    wait_for_state(page)
    snap(page, "general-russian")


def test_a_general_under_a_daimyo_sees_no_other_army(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R1.1: nothing of another army is in his page: not its text, its SVG, its attributes,
    nor any response or websocket message the page received."""
    game = live_site.data["daimyo"]
    others: list[str] = game["others"]
    page = new_page("phone")
    responses: list[Response] = []
    frames: list[str] = []
    page.on("response", lambda response: responses.append(response))
    page.on(
        "websocket",
        lambda ws: ws.on("framereceived", lambda payload: frames.append(str(payload))),
    )

    with page.expect_response(
        lambda r: r.url.endswith(f"/api/tournaments/{game['id']}/state") and r.ok
    ):
        join(page, game["token"], game["id"])
    wait_for_state(page)
    expect(page.locator("#live-status")).to_have_text("Live")
    expect(page.locator("#army-line")).to_contain_text(game["army"])
    markers = page.locator("#war-map g.army-marker")
    expect(markers).to_have_count(1)
    expect(markers).to_have_attribute("data-armies", game["army"])
    # His clan-mate's province, tapped on the map: the panel lists no army there.
    page.locator(
        f'#war-map path.province[data-province="{game["clanmate_province"]}"]'
    ).dispatch_event("click")
    expect(page.locator("#province-panel")).to_be_visible()
    snap(page, "general-under-daimyo")

    html = page.content()
    text = page.evaluate("document.documentElement.textContent")
    svg = page.locator("#war-map").evaluate("node => node.outerHTML")
    received = _bodies(responses)
    assert any(url.endswith("/state") for url, _ in received), [u for u, _ in received]
    assert frames, "no websocket message arrived"
    leaks: dict[str, list[str]] = {}
    for code in others:
        where = [
            name
            for name, content in (("DOM", html), ("text", text), ("SVG", svg))
            if code in content
        ]
        where += [url for url, body in received if code in body]
        where += [f"websocket: {frame}" for frame in frames if code in frame]
        if where:
            leaks[code] = where
    assert not leaks, f"other armies are visible to {game['army']}: {leaks}"
    assert game["army"] in html  # the check above would see a code if there were one


def _bodies(responses: list[Response]) -> list[tuple[str, str]]:
    """Every response body the page received, as text (redirects have none)."""
    found: list[tuple[str, str]] = []
    for response in responses:
        if 300 <= response.status < 400:
            continue
        body = response.body()
        found.append((response.url, body.decode("utf-8", errors="replace")))
    return found


def test_a_daimyo_sees_his_generals_orders_live(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R1.1: the Daimyo's page goes live, counts down, and lists his Generals' orders."""
    game = live_site.data["daimyo"]
    page = new_page("desktop")

    page.goto(f"/join/{game['daimyo_token']}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{game['id']}/clan/$"))
    expect(page.locator("#live-status")).to_have_text(re.compile(r"^Live$"))
    expect(page.locator("#clock-time")).to_have_text(re.compile(r"^\d+:\d\d"))
    # Crab 2 was given a move in the scenario; the Daimyo sees it in his Generals' table.
    row = page.locator("section[aria-labelledby=generals-heading] tbody tr", has_text="crab-2")
    expect(row).to_contain_text("Move to")
    snap(page, "clan-daimyo")
