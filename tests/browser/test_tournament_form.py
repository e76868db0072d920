"""A judge creates a tournament from his home on a phone: the line-up R1 gives follows the
count and its choices as he types (static/js/tournament_form.js, GET /api/lineup), a count
R1 cannot seat says so, and creating lands on the new tournament's console."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap
from tests.browser.test_sign_in import fits_the_width, sign_in

pytestmark = pytest.mark.browser


def roles_of(page: Page, clan: str) -> str:
    return page.locator(f'#lineup-body tr[data-clan="{clan}"] td').first.inner_text()


def test_r1_the_line_up_follows_the_count_as_the_judge_types_and_he_creates_the_tournament(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    page = new_page("phone")
    sign_in(page, live_site)
    page.locator("#new-tournament").click()
    expect(page).to_have_url(re.compile(r"/referees/tournaments/new$"))
    # With the script, the table follows the form: no button to ask for it.
    expect(page.locator("#lineup-preview-button")).to_be_hidden()
    expect(page.locator('#lineup-body tr[data-clan="crab"] td').first).to_have_text("2 Generals")

    page.locator("#id_player_count").fill("20")
    smaller = page.locator("#lineup-body tr.is-smaller")
    expect(smaller).to_have_count(4)
    expect(page.locator("#lineup-notes")).to_contain_text("any clans may be the smaller ones")
    assert roles_of(page, "crab") == "2 Generals, 1 Daimyo"

    page.get_by_label("(a) leave the Shadowlands out").check()
    expect(page.locator('#lineup-body tr[data-clan="shadowlands"]')).to_have_class("is-left-out")
    expect(smaller).to_have_count(1)

    page.locator("#id_player_count").fill("50")
    expect(page.locator("#lineup-problem")).to_contain_text("R1 cannot seat this count")
    expect(page.locator("#lineup-table-wrap")).to_be_hidden()

    page.locator("#id_player_count").fill("24")
    page.get_by_label("3 Generals").check()
    expect(page.locator('#lineup-body tr[data-clan="lion"] td').first).to_have_text("3 Generals")
    expect(page.locator("#lineup-problem")).to_be_hidden()

    # The end time appears only when the game ends at a time.
    expect(page.locator("#field-ends_at")).to_be_hidden()
    page.get_by_label("at a time", exact=True).check()
    expect(page.locator("#field-ends_at")).to_be_visible()
    expect(page.locator("#field-turns_total")).to_be_hidden()
    page.get_by_label("after a number of turns", exact=True).check()
    assert fits_the_width(page)
    snap(page, "tournament-new")

    page.locator("#id_name").fill("Phone Court")
    page.locator("#tournament-submit").click()
    expect(page).to_have_url(re.compile(r"/referees/tournaments/\d+/judge/$"))
    expect(page.locator("h1")).to_have_text("Phone Court")
    expect(page.locator("#settings-link")).to_be_visible()
