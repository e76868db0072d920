"""The organiser's morning, from the pages alone (issue 13's story).

A judge signs in on the site's own page, creates a 16-player tournament from his home,
pastes the 16 players, opens the join sheet with every QR code, invites a second judge,
and starts the tournament; the second judge opens his one-time link on his own device,
chooses a password, finds the tournament at his home and pauses the clock. No API, no
admin, no command. The same pages in Russian at the end.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap

pytestmark = pytest.mark.browser

PROJECTOR = {"width": 1920, "height": 1080}
LAPTOP = {"width": 1280, "height": 800}

# Names only for ten of them, a clan for four, a clan and a role for two: R1 proposes the rest.
PLAYERS = "\n".join(
    [
        "Hida Kisada; crab; general",
        "Doji Hoturi; crane",
        "Mirumoto Hitomi; dragon",
        "Matsu Tsuko; lion",
        "Shiba Tsukune; phoenix; general",
        "Bayushi Kachiko",
        "Kuni Yori",
        "Otaku Kamoko",
        "Hida Yakamo",
        "Kakita Toshimoko",
        "Togashi Mitsu",
        "Akodo Toturi",
        "Isawa Kaede",
        "Bayushi Aramoro",
        "Iuchi Karasu",
        "Moto Gaheris",
    ]
)


def fits_the_width(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def sign_in(page: Page, username: str, password: str) -> None:
    page.locator(".site-nav a", has_text="Judge sign-in").click()
    expect(page).to_have_url(re.compile(r"/accounts/sign-in/"))
    page.locator("#id_username").fill(username)
    page.locator("#id_password").fill(password)
    page.get_by_role("button", name="Sign in").click()


def test_an_organiser_sets_up_and_starts_a_16_player_tournament_with_a_second_judge(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    judge = live_site.data["judge"]
    page = new_page("desktop")
    page.set_viewport_size(LAPTOP)

    # Signed in on the site's own page, he lands on his home: his tournaments, "New tournament".
    page.goto("/")
    sign_in(page, judge["username"], judge["password"])
    expect(page).to_have_url(re.compile(r"/referees/judge/$"))
    page.locator("#new-tournament").click()

    # The form shows the line-up 16 players give before anything is created.
    form = page.locator("#tournament-form")
    form.locator("[name=name]").fill("Winter Court 2026")
    form.locator("[name=player_count]").fill("16")
    form.locator("[name=player_count]").blur()
    expect(page.locator("#lineup-body")).to_contain_text("Crab")
    expect(page.locator("#lineup-body")).not_to_contain_text("Daimyo")
    snap(page, "organiser-new-tournament")
    page.locator("#tournament-submit").click()
    expect(page).to_have_url(re.compile(r"/referees/tournaments/\d+/judge/$"))
    tournament_id = int(re.search(r"/tournaments/(\d+)/", page.url).group(1))  # type: ignore[union-attr]
    expect(page.locator("h1")).to_have_text("Winter Court 2026")

    # A Daimyo in a 16-player game is refused with the reason, and nothing is stored.
    page.locator("#players-add-link").click()
    page.locator("#roster-lines").fill("Hida Kisada; crab; daimyo")
    page.locator("#roster-preview-button").click()
    expect(page.locator("#roster-line-1")).to_contain_text("Daimyo")
    expect(page.locator("#roster-register-button")).to_have_count(0)

    # The 16 pasted players: the preview proposes what is missing; all are stored at once.
    page.locator("#roster-lines").fill(PLAYERS)
    page.locator("#roster-preview-button").click()
    expect(page.locator("#roster-table tbody tr.is-fine")).to_have_count(16)
    expect(page.locator("#roster-table tbody tr.has-problem")).to_have_count(0)
    snap(page, "organiser-paste-preview")
    page.locator("#roster-register-button").click()
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tournament_id}/judge/"))
    expect(page.locator("#players-body tr")).to_have_count(16)

    # The join sheet: one QR code and link per player, ready to print.
    sheet = new_page("desktop")
    sheet.context.add_cookies(page.context.cookies())
    sheet.goto(f"/referees/tournaments/{tournament_id}/join-sheet")
    expect(sheet.locator("svg")).to_have_count(16)
    expect(sheet.locator("body")).to_contain_text("Hida Kisada")
    snap(sheet, "organiser-join-sheet")

    # A second judge, invited by user name: his one-time link is shown once.
    page.goto(f"/referees/tournaments/{tournament_id}/judge/")
    page.locator("#judges-link").click()
    page.locator("#judge-invite-form input[type=text]").first.fill("second-judge")
    page.locator("#judge-invite-form button[type=submit]").click()
    link = page.locator("#invitation-url").input_value()
    assert "/accounts/welcome/" in link
    snap(page, "organiser-judges")
    page.reload()
    expect(page.locator("#invitation-url")).to_have_count(0)
    expect(page.locator("#judges-list")).to_contain_text("second-judge")

    # Every registered player fits R1, so the start is accepted: clan planning runs.
    page.goto(f"/referees/tournaments/{tournament_id}/judge/")
    page.locator("#btn-start").click()
    expect(page.locator("#phase-label")).to_have_text(re.compile("planning", re.I))

    # On his own device the second judge opens the link once, chooses a password, and is in.
    second = new_page("phone")
    second.goto(link.replace(live_site.url, ""))
    passwords = second.locator("#welcome-form input[type=password]")
    expect(passwords).to_have_count(2)
    passwords.nth(0).fill("winter-court-second-1")
    passwords.nth(1).fill("winter-court-second-1")
    second.get_by_role("button", name="Set my password and sign in").click()
    expect(second.locator(".site-user")).to_have_text("second-judge")
    second.goto("/referees/judge/")
    expect(second.locator("body")).to_contain_text("Winter Court 2026")
    assert fits_the_width(second)
    second.get_by_role("link", name=re.compile("console", re.I)).first.click()
    expect(second).to_have_url(re.compile(rf"/referees/tournaments/{tournament_id}/judge/"))
    # Pressed once the console has its state (before, the button is not wired yet).
    expect(second.locator("#live-status")).to_have_attribute("data-status", "live")
    second.locator("#btn-pause").click()
    expect(second.locator("#clock-paused")).to_be_visible()
    # The first judge's console sees the pause live.
    expect(page.locator("#clock-paused")).to_be_visible()
    expect(page.locator("#log-body")).to_contain_text("second-judge")

    # The link worked once: a second use is refused with a page that says so.
    again = new_page("phone")
    response = again.goto(link.replace(live_site.url, ""))
    assert response is not None and response.status == 410

    # The projector and Russian.
    page.set_viewport_size(PROJECTOR)
    assert fits_the_width(page)
    snap(page, "organiser-console")
    russian = new_page("desktop", locale="ru-RU")
    russian.context.add_cookies(page.context.cookies())
    russian.goto("/referees/judge/")
    expect(russian.locator("html")).to_have_attribute("lang", "ru")
    expect(russian.locator("#new-tournament")).to_have_text("Новый турнир")
    snap(russian, "organiser-home-ru")


def test_the_organisers_pages_fit_a_phone_in_russian(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    judge = live_site.data["judge"]
    page = new_page("phone", locale="ru-RU")
    page.goto("/accounts/sign-in/")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("form button[type=submit]").last.click()
    expect(page).to_have_url(re.compile(r"/referees/judge/$"))
    assert fits_the_width(page)
    page.locator("#new-tournament").click()
    # 20 players: the line-up names the smaller clans (R1 b), the longest lines of the form.
    page.locator("[name=player_count]").fill("20")
    page.locator("[name=player_count]").blur()
    expect(page.locator("#lineup-body tr")).to_have_count(8)
    expect(page.locator("#lineup-body")).to_contain_text("Даймё")
    assert fits_the_width(page)
    # The table itself fits too: its note column is not left past the edge, to scroll to.
    wrap = page.locator("#lineup-table-wrap")
    widths = wrap.evaluate("w => [w.scrollWidth, w.clientWidth]")
    assert widths[0] <= widths[1], f"the line-up table scrolls: {widths}"
    snap(page, "organiser-new-tournament-ru")
