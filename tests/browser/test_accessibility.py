"""axe-core on every page of the site, in English and in Russian: no critical or serious
violation (WCAG 2 A/AA as axe checks it: contrast, names, keyboard access to scroll boxes).

axe-core is the ``axe.min.js`` that the ``axe-playwright-python`` package bundles
(requirements-dev.txt); the test evaluates it in the page through the browser's debugging
protocol, so the site never serves it and its CSP stays as strict as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.resources import files
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.page_states import (
    tournament_declaring,
    tournament_ended_in_turn,
    tournament_in_setup,
)

pytestmark = pytest.mark.browser

BLOCKING = {"critical", "serious"}
AXE_SOURCE = files("axe_playwright_python").joinpath("axe.min.js").read_text(encoding="utf-8")
LANGUAGES = ("en", "ru")


@dataclass(frozen=True)
class Visit:
    """How to reach a page: a judge signed in, a General's or Daimyo's join link, or nobody."""

    path: str
    judge: bool = False
    token: str | None = None
    ready: str = "body"


@pytest.fixture(scope="module")
def states(live_site: LiveServer) -> Iterator[dict[str, Any]]:
    yield {
        "setup": tournament_in_setup(live_site, "Browser: a11y set-up"),
        "declaring": tournament_declaring(live_site, "Browser: a11y positions"),
        "ended": tournament_ended_in_turn(live_site, "Browser: a11y ended", turn=2),
    }


def battle_path(live_site: LiveServer) -> tuple[str, str]:
    game = live_site.data["battle"]
    rows = live_site.api("GET", f"/tournaments/{game['id']}/battles", token=game["token"])
    return f"/tournaments/{game['id']}/battles/{rows[0]['id']}/", game["token"]


def visits(live_site: LiveServer, states: dict[str, Any]) -> dict[str, Visit]:
    data = live_site.data
    t = "/referees/tournaments"
    setup, declaring, ended = states["setup"], states["declaring"], states["ended"]
    playing = data["clock"]["id"]
    battle, battle_token = battle_path(live_site)
    console_ready = "#live-status[data-status=live]"
    return {
        "home": Visit("/"),
        "sign-in": Visit("/accounts/sign-in/"),
        "judge-home": Visit("/referees/judge/", judge=True),
        "new-tournament": Visit(f"{t}/new", judge=True),
        "console-setup": Visit(f"{t}/{setup['id']}/judge/", judge=True, ready=console_ready),
        "console-positions": Visit(
            f"{t}/{declaring['id']}/judge/", judge=True, ready=console_ready
        ),
        "console-playing": Visit(f"{t}/{playing}/judge/", judge=True, ready=console_ready),
        "console-ended": Visit(f"{t}/{ended['id']}/judge/", judge=True, ready=console_ready),
        "judges": Visit(f"{t}/{setup['id']}/judges/", judge=True),
        "players-add": Visit(f"{t}/{setup['id']}/players/add", judge=True),
        "player-edit": Visit(f"{t}/{setup['id']}/players/{setup['players'][0]['id']}/", judge=True),
        "big-screen": Visit(f"{t}/{data['screen']['id']}/screen/"),
        "big-screen-ended": Visit(f"{t}/{ended['id']}/screen/"),
        "history": Visit(f"{t}/{data['screen']['id']}/history/", judge=True),
        "join-sheet": Visit(f"{t}/{setup['id']}/join-sheet", judge=True),
        "general": Visit(f"{t}/{data['order']['id']}/general/", token=data["order"]["token"]),
        "clan": Visit(f"{t}/{data['daimyo']['id']}/clan/", token=data["daimyo"]["daimyo_token"]),
        "positions": Visit(f"{t}/{declaring['id']}/positions/", judge=True),
        "battle-table": Visit(battle, token=battle_token),
        "map": Visit("/maps/rokugan/"),
    }


PAGES = (
    "home",
    "sign-in",
    "judge-home",
    "new-tournament",
    "console-setup",
    "console-positions",
    "console-playing",
    "console-ended",
    "judges",
    "players-add",
    "player-edit",
    "big-screen",
    "big-screen-ended",
    "history",
    "join-sheet",
    "general",
    "clan",
    "positions",
    "battle-table",
    "map",
)


def open_as(page: Page, live_site: LiveServer, visit: Visit) -> None:
    if visit.judge:
        judge = live_site.data["judge"]
        page.goto("/accounts/sign-in/")
        page.locator("#id_username").fill(judge["username"])
        page.locator("#id_password").fill(judge["password"])
        page.locator(".stacked-form button[type=submit]").click()
        expect(page).to_have_url(re.compile(r"/referees/judge/$"))
        page.goto(visit.path)
    elif visit.token:
        page.goto(f"/join/{visit.token}")
        page.goto(visit.path)
    else:
        page.goto(visit.path)
    page.wait_for_load_state("load")
    expect(page.locator(visit.ready).first).to_be_attached()


def blocking_violations(page: Page) -> list[str]:
    """axe-core's critical and serious violations: rule, impact, and where."""
    page.evaluate(AXE_SOURCE)
    results = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    found = []
    for violation in results["violations"]:
        if violation["impact"] not in BLOCKING:
            continue
        targets = [" ".join(map(str, node["target"])) for node in violation["nodes"][:5]]
        found.append(
            f"{violation['id']} ({violation['impact']}, {len(violation['nodes'])} nodes):"
            f" {violation['help']} — {'; '.join(targets)}"
        )
    return found


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", PAGES)
def test_every_page_has_no_serious_accessibility_violation(
    new_page: Callable[..., Page],
    live_site: LiveServer,
    states: dict[str, Any],
    name: str,
    language: str,
) -> None:
    visit = visits(live_site, states)[name]
    page = new_page("desktop", locale=language)
    open_as(page, live_site, visit)
    expect(page.locator("html")).to_have_attribute("lang", re.compile(rf"^{language}"))
    problems = blocking_violations(page)
    assert not problems, f"{name} ({language}):\n" + "\n".join(problems)
