"""A judge signs in on the site's own page, finds his tournaments at home, signs out; and
the API docs' "Try it out" works with that session. On a phone and a desktop."""

from __future__ import annotations

import json
import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap

pytestmark = pytest.mark.browser


def sign_in(page: Page, live_site: LiveServer, next_url: str = "") -> None:
    judge = live_site.data["judge"]
    page.goto("/accounts/sign-in/" + (f"?next={next_url}" if next_url else ""))
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator(".stacked-form button[type=submit]").click()


def fits_the_width(page: Page) -> bool:
    """Nothing sticks out sideways: no horizontal scrolling."""
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def test_a_judge_signs_in_on_his_phone_and_finds_his_tournaments(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    page = new_page("phone")
    page.goto("/")
    page.locator(".site-nav a", has_text="Judge sign-in").click()
    expect(page).to_have_url(re.compile(r"/accounts/sign-in/$"))
    assert fits_the_width(page)
    snap(page, "sign-in")

    page.locator("#id_username").fill(live_site.data["judge"]["username"])
    page.locator("#id_password").fill("not his password")
    page.locator(".stacked-form button[type=submit]").click()
    expect(page.locator(".form-errors")).to_be_visible()

    page.locator("#id_password").fill(live_site.data["judge"]["password"])
    page.locator(".stacked-form button[type=submit]").click()
    expect(page).to_have_url(re.compile(r"/referees/judge/$"))
    header = page.locator(".site-header")
    expect(header.locator(".site-user")).to_have_text(live_site.data["judge"]["username"])
    expect(header.get_by_role("button", name="Sign out")).to_be_visible()
    assert fits_the_width(page)
    clock = live_site.data["clock"]["id"]
    card = page.locator(f'.tournament-card[data-tournament="{clock}"]')
    expect(card.locator(".tournament-turn")).to_have_text(re.compile(r"^1( / \d+)?$"))
    snap(page, "judge-home")

    card.get_by_role("link", name="Console").click()
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{clock}/judge/$"))

    page.locator(".site-header").get_by_role("button", name="Sign out").click()
    expect(page).to_have_url(re.compile(r"/$"))
    expect(page.locator(".site-nav a", has_text="Judge sign-in")).to_be_visible()
    page.goto(f"/referees/tournaments/{clock}/judge/")
    expect(page).to_have_url(re.compile(r"/accounts/sign-in/\?next="))


def test_the_public_home_shows_tournaments_under_way(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    page = new_page("phone")
    page.goto("/")

    screen = live_site.data["screen"]["id"]
    card = page.locator(f'#under-way-title ~ .tournament-list [data-tournament="{screen}"]')
    expect(card.get_by_role("link", name="Big screen")).to_be_visible()
    assert fits_the_width(page)
    snap(page, "public-home")


def test_try_it_out_in_the_api_docs_uses_the_judges_session(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Swagger UI's "Try it out" on POST /api/tournaments: 201, not 403 ``csrf``."""
    page = new_page("desktop")
    sign_in(page, live_site)
    expect(page).to_have_url(re.compile(r"/referees/judge/$"))

    page.goto("/api/docs")
    operation = page.locator("#operations-set-up-referees_api_tournament_create")
    operation.locator(".opblock-summary").click()
    operation.get_by_role("button", name="Try it out").click()
    body = {"name": "Browser: made in the API docs", "player_count": 16}
    operation.locator("textarea.body-param__text").fill(json.dumps(body))
    with page.expect_response(
        lambda r: r.url.endswith("/api/tournaments") and r.request.method == "POST"
    ) as answer:
        operation.get_by_role("button", name="Execute").click()

    response = answer.value
    assert response.request.headers.get("x-csrftoken"), "Swagger sent no CSRF token"
    assert response.status == 201, response.text()
    assert response.json()["name"] == body["name"]
