"""The start (R3) in a real browser: a Daimyo of a 32-player tournament declares his clan's
starting positions on his tablet, the judge's console shows the clan as declared, and the
page follows the phase as the judge moves on.

The tournament is made here through the judge's API (the server is ``conftest.live_site``):
R1 gives 32 players three Generals and a Daimyo per clan. Clan planning is long, so that
only the judge ends it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from sl5r.rules.roles import lineup_propose
from tests.browser.conftest import SCREENSHOTS, TIMEOUT_MS, LiveServer, snap

pytestmark = pytest.mark.browser

TABLET: dict[str, Any] = {
    "viewport": {"width": 820, "height": 1180},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 2,
}
HOUR = 3600


@pytest.fixture
def tablet(browser: Browser, live_site: LiveServer) -> Iterator[Callable[[], Page]]:
    """A page on a tablet-sized touch screen (a fresh profile each); script errors fail."""
    contexts = []
    errors: list[str] = []

    def make() -> Page:
        context = browser.new_context(base_url=live_site.url, **TABLET)
        context.set_default_timeout(TIMEOUT_MS)
        contexts.append(context)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
        return page

    yield make
    for context in contexts:
        context.close()
    assert not errors, "script errors in the page:\n" + "\n".join(errors)


def tournament_32(live_site: LiveServer) -> dict[str, Any]:
    """A 32-player tournament in clan planning; its id and each player's join token."""
    created = live_site.judge_api(
        "POST",
        "/tournaments",
        {
            "name": "Browser: positions",
            "player_count": 32,
            "planning_seconds": HOUR,
            "negotiation_seconds": HOUR,
            "turn_seconds": HOUR,
        },
    )
    tid = created["id"]
    people: dict[tuple[str, str, int], dict[str, Any]] = {}
    for clan, roles in lineup_propose(32).clans.items():
        for number, role in enumerate(roles, start=1):
            player = live_site.judge_api(
                "POST",
                f"/tournaments/{tid}/players",
                {"name": f"{clan.title()} {role.value} {number}", "clan": clan, "role": role.value},
            )
            people[(clan, role.value, number)] = player
    live_site.judge_api("POST", f"/tournaments/{tid}/start")
    return {"id": tid, "people": people}


def snap_tablet(page: Page, name: str) -> None:
    """The page as the tablet shows it (``snap`` adds the phone and desktop sizes)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}-tablet.png"), full_page=True)
    snap(page, name)


def sign_in_judge(page: Page, live_site: LiveServer, next_url: str) -> None:
    judge = live_site.data["judge"]
    page.goto(f"/admin/login/?next={next_url}")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("input[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(next_url)}$"))


def declare_others(live_site: LiveServer, tid: int) -> None:
    """The judge declares for every clan but the Crab, castles first (R3.2)."""
    provinces = live_site.api("GET", f"/tournaments/{tid}/map")["provinces"]
    for clan in lineup_propose(32).clans:
        if clan == "crab":
            continue
        homes = [p for p in provinces if p.get("home_clan") == clan and not p.get("impassable")]
        homes.sort(key=lambda p: not p.get("castle"))
        codes = [f"{clan}-{n}" for n in (1, 2, 3)]
        positions = {code: home["id"] for code, home in zip(codes, homes, strict=False)}
        live_site.judge_api("PUT", f"/tournaments/{tid}/positions/{clan}", {"positions": positions})


def test_a_daimyo_declares_his_clans_starting_positions_on_his_tablet(
    tablet: Callable[[], Page], new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = tournament_32(live_site)
    tid = game["id"]
    daimyo = game["people"][("crab", "daimyo", 4)]
    general = game["people"][("crab", "general", 1)]

    # His General's phone says what happens now: the Daimyo declares (R3.1).
    phone = new_page("phone")
    phone.goto(f"/join/{general['token']}")
    expect(phone.locator("#start-now")).to_contain_text(
        f"{daimyo['name']}, your Daimyo, declares the starting positions for the Crab."
    )
    expect(phone.locator("#start-next")).to_contain_text(re.compile(r"ends in (\d+:)?\d\d:\d\d"))
    expect(phone.locator("#start-status")).to_have_text(
        "Your clan has not declared its starting positions yet."
    )
    expect(phone.locator("#army-line")).to_contain_text("not on the map yet")
    expect(phone.locator("#positions-link")).to_have_count(0)
    expect(phone.locator("#clock-turn")).to_have_text("Clan planning")
    expect(phone.locator("#clock-time")).to_have_text(re.compile(r"^\d+:\d\d"))
    snap(phone, "positions-general-planning")

    # The Daimyo joins with his link: his clan page sends him to declare.
    page = tablet()
    page.goto(f"/join/{daimyo['token']}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/clan/$"))
    link = page.locator("#positions-link")
    expect(link).to_have_text("Declare your starting positions")
    snap_tablet(page, "positions-clan-page-planning")
    link.tap()
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/positions/$"))
    expect(page.locator("#live-status")).to_have_text("Live")

    # The clan's four home provinces are outlined; its two castles are on the map.
    expect(page.locator("#zoom-button")).to_have_text("Whole map")
    highlights = page.locator("#war-map g.map-highlights path.highlight")
    expect(highlights).to_have_count(4)
    for province in ("crab-hida", "crab-kaiu"):
        expect(
            page.locator(f'#war-map .map-castles use[data-province="{province}"]')
        ).to_have_count(1)
    expect(page.locator("#position-crab-1 option")).to_have_count(5)

    # A plain province before a castle one: refused, with the reason (R3.2).
    page.locator('.position-row[data-army="crab-1"] .position-army').tap()
    page.locator('#war-map path.province[data-province="crab-hiruma"]').dispatch_event("click")
    expect(page.locator("#position-crab-1")).to_have_value("crab-hiruma")
    page.locator("#position-crab-2").select_option("crab-hida")
    page.locator("#position-crab-3").select_option("crab-yasuki")
    page.locator("#declare-button").tap()
    message = page.locator("#positions-message")
    expect(message).to_have_class(re.compile(r"\bis-error\b"))
    expect(message).to_have_text(
        "Not declared: castle provinces first: Kaiu Lands must be used before a province "
        "without a castle"
    )
    snap_tablet(page, "positions-refused")
    state = live_site.judge_api("GET", f"/tournaments/{tid}/state")
    assert state["declared_clans"]["crab"] is False

    # Castles first: Kaiu for the first army, tapped on the map.
    page.locator('.position-row[data-army="crab-1"] .position-army').tap()
    page.locator('#war-map path.province[data-province="crab-kaiu"]').dispatch_event("click")
    expect(page.locator("#position-crab-1")).to_have_value("crab-kaiu")
    page.locator("#declare-button").tap()
    expect(message).to_have_class(re.compile(r"\bis-ok\b"))
    expect(page.locator('[data-declared-for="crab-1"]')).to_have_text("Declared: Kaiu Lands")
    expect(page.locator("#war-map g.army-marker")).to_have_count(3)
    snap_tablet(page, "positions-declared")
    state = live_site.judge_api("GET", f"/tournaments/{tid}/state")
    placed = {a["id"]: a["province"] for a in state["armies"]}
    assert placed == {"crab-1": "crab-kaiu", "crab-2": "crab-hida", "crab-3": "crab-yasuki"}
    assert state["declared_clans"]["crab"] is True

    # The judge's console lists the Crab as declared, the others not yet.
    console = new_page("desktop")
    sign_in_judge(console, live_site, f"/referees/tournaments/{tid}/judge/")
    expect(console.locator('#declared-clans li[data-clan="crab"]')).to_have_class("is-declared")
    expect(console.locator('#declared-clans li[data-clan="crane"]')).to_have_class("is-undeclared")
    snap(console, "positions-judge-console")

    # The General hears of it live; the Daimyo's clan page says he may still change them.
    expect(phone.locator("#start-status")).to_have_text(
        "Your clan has declared its starting positions ✓"
    )
    expect(phone.locator("#army-line strong")).to_have_text(re.compile(r"\w"))

    # The judge ends clan planning: the page follows, still open (deployment).
    live_site.judge_api("POST", f"/tournaments/{tid}/advance")
    status = page.locator("#positions-status")
    expect(status).to_contain_text("Clan planning is over: declare now")
    expect(page.locator("#declare-button")).to_be_visible()

    # Every other clan declared: negotiation begins, the positions are fixed.
    declare_others(live_site, tid)
    expect(status).to_contain_text("The starting positions are fixed")
    expect(page.locator("#position-crab-1")).to_be_disabled()
    expect(page.locator("#declare-button")).to_be_hidden()
    snap_tablet(page, "positions-fixed")
    expect(phone.locator("#start-now")).to_contain_text(
        "a General whose clan has a Daimyo does not negotiate (R1.1)"
    )
    expect(phone.locator("#start-next")).to_contain_text(re.compile(r"Turn 1 starts in \d"))
    snap(phone, "positions-general-negotiation")
