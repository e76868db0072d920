"""R11 on the judge's console: the log reads as sentences, in English and in Russian, and
its filters ask the server for one kind of entry."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap
from tests.browser.page_states import tournament_running

pytestmark = pytest.mark.browser

RAW = re.compile(r"\[object Object\]|[{}]|\b[a-z]+_[a-z_]+\b")


def _console(page: Page, live_site: LiveServer, tid: int) -> None:
    judge = live_site.data["judge"]
    console = f"/referees/tournaments/{tid}/judge/"
    page.goto(f"/admin/login/?next={console}")
    page.locator("#id_username").fill(judge["username"])
    page.locator("#id_password").fill(judge["password"])
    page.locator("input[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(console)}$"))


def test_r11_the_console_log_reads_as_sentences_and_filters_by_kind(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_running(live_site, "Browser: log")
    tid = made["id"]
    live_site.judge_api(
        "POST",
        f"/tournaments/{tid}/corrections/control",
        {"province": "crab-kaiu", "clan": "lion", "reason": "paper map"},
    )
    live_site.judge_api("POST", f"/tournaments/{tid}/announcements", {"text": "Lunch at 13:00"})
    page = new_page("desktop")
    _console(page, live_site, tid)

    rows = page.locator("#log-body tr")
    expect(rows.first).to_contain_text("announced: “Lunch at 13:00”")
    expect(page.locator("#log-body")).to_contain_text("corrected who controls Kaiu Lands")
    texts = rows.all_inner_texts()
    assert texts and not [t for t in texts if RAW.search(t)], texts
    snap(page, "console-log-sentences")

    page.locator("#log-filters select[name=kind]").select_option("corrections")
    expect(rows).to_have_count(1)
    expect(rows.first).to_contain_text("Reason given: “paper map”")
    page.locator("#log-filters button[type=reset]").click()
    expect(page.locator("#log-body")).to_contain_text("Lunch at 13:00")


def test_r11_the_console_log_in_russian_has_no_raw_codes(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_running(live_site, "Browser: журнал")
    page = new_page("desktop", locale="ru-RU")
    _console(page, live_site, made["id"])

    rows = page.locator("#log-body tr")
    expect(rows.first).to_be_visible()
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    texts = rows.all_inner_texts()
    assert len(texts) > 5 and not [t for t in texts if RAW.search(t)], texts
    snap(page, "console-log-russian")
