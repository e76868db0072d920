"""The Content-Security-Policy in Chromium: the main pages load and run without a violation.

Every page is opened in a browser that records ``securitypolicyviolation`` events (from an
init script, which the policy does not govern) and console errors; a page that needed an
inline script or style, an image or a connection from elsewhere would show one. The pages'
own websockets (``connect-src 'self'`` covering ``ws:`` on the same host and port) must
come up "Live".
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import ConsoleMessage, Page, expect

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser

RECORD_VIOLATIONS = """
window.__cspViolations = [];
document.addEventListener("securitypolicyviolation", (event) => {
  window.__cspViolations.push(
    `${event.effectiveDirective} blocked ${event.blockedURI || "inline"}` +
      ` (${event.sourceFile}:${event.lineNumber})`
  );
});
"""
SETTLE_MS = 500


def watched(new_page: Callable[..., Page], device: str = "desktop") -> tuple[Page, list[str]]:
    page = new_page(device)
    page.add_init_script(RECORD_VIOLATIONS)
    errors: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        # Chromium reports a blocked resource as "Refused to load … because it violates
        # the following Content Security Policy directive"; other errors (a 404 for the
        # admin's /favicon.ico) are not this test's business, and script errors fail
        # every browser test anyway (new_page).
        if "Content Security Policy" in message.text or "Refused to" in message.text:
            errors.append(f"{page.url}: {message.text}")

    page.on("console", on_console)
    return page, errors


def violations(page: Page) -> list[str]:
    page.wait_for_timeout(SETTLE_MS)
    found: list[Any] = page.evaluate("window.__cspViolations || []")
    return [f"{page.url}: {v}" for v in found]


def sign_in(page: Page, live_site: LiveServer, next_url: str) -> None:
    judge = live_site.data["judge"]
    page.goto(f"/admin/login/?next={next_url}")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("input[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(next_url)}$"))


def test_the_main_pages_load_without_a_csp_violation(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    daimyo = live_site.data["daimyo"]
    bushido = live_site.data["bushido"]
    tid = daimyo["id"]
    battles = live_site.judge_api("GET", f"/tournaments/{bushido['id']}/battles")
    items = battles["battles"] if isinstance(battles, dict) else battles
    battle_id = items[0]["id"]
    found: list[str] = []

    # the judge's pages, signed in
    judge, judge_errors = watched(new_page)
    console = f"/referees/tournaments/{tid}/judge/"
    sign_in(judge, live_site, console)
    expect(judge.locator("#live-status")).to_have_attribute("data-status", "live")
    found += violations(judge)
    for path, live in (
        (f"/referees/tournaments/{tid}/screen/", True),
        (f"/referees/tournaments/{tid}/join-sheet", False),
        (f"/referees/tournaments/{tid}/history/", False),
        (f"/tournaments/{bushido['id']}/battles/{battle_id}/", True),
        (f"/tournaments/{bushido['id']}/battles/small-farms/", False),
        ("/", False),
        ("/maps/rokugan/", False),
        ("/admin/", False),
        ("/api/docs", False),
    ):
        if live:
            # the page's own socket opens and says hello
            with judge.expect_websocket() as socket:
                judge.goto(path)
            socket.value.wait_for_event("framereceived")
        else:
            judge.goto(path)
        if path == "/api/docs":
            # Swagger UI draws the operations from /api/openapi.json
            expect(judge.locator(".opblock").first).to_be_visible()
        found += violations(judge)

    # a General's phone and his Daimyo's clan page
    general, general_errors = watched(new_page, "phone")
    general.goto(f"/join/{daimyo['token']}")
    expect(general).to_have_url(re.compile(rf"/referees/tournaments/{tid}/general/$"))
    expect(general.locator("#live-status")).to_have_text("Live")
    found += violations(general)
    clan, clan_errors = watched(new_page, "phone")
    clan.goto(f"/join/{daimyo['daimyo_token']}")
    expect(clan).to_have_url(re.compile(rf"/referees/tournaments/{tid}/clan/$"))
    expect(clan.locator("#live-status")).to_have_text("Live")
    found += violations(clan)

    assert not found, "CSP violations:\n" + "\n".join(found)
    errors = judge_errors + general_errors + clan_errors
    assert not errors, "console errors:\n" + "\n".join(errors)


def test_the_policy_header_is_on_the_pages_the_browser_gets(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    page, _ = watched(new_page)
    response = page.goto("/")
    assert response is not None
    policy = response.headers["content-security-policy"]
    assert "script-src 'self'" in policy
    assert "connect-src 'self'" in policy

    # and the browser enforces it: an inline style is refused, and recorded (so the test
    # above would see a violation)
    page.evaluate(
        "document.head.appendChild(Object.assign(document.createElement('style'),"
        " {textContent: 'body { color: red; }'}))"
    )
    assert any("style-src" in v for v in violations(page))
