"""A judge called from the table (issue 32), in a real browser.

A General at his battle table calls a judge on his phone (in Russian); the call shows on
every judge's console (a desktop in English, a second judge's tablet) with where he is and
why; the second judge takes it ("on my way": the caller reads his name), the first judge is
told the call is taken, and the second judge closes it with a note the caller reads. A
repeated tap is one call; another General and the big screen see nothing of it (R1.1).
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable
from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, judge_sign_in, snap
from tests.browser.page_states import tournament_running, tournament_with_table

TABLET = {"width": 820, "height": 1180}
PROJECTOR = {"width": 1920, "height": 1080}
PHONE = {"width": 390, "height": 844}
WORDS = "my opponent keeps a card hidden"


def fits_the_width(page: Page) -> bool:
    width: Any = page.evaluate("document.documentElement.scrollWidth")
    return int(width) <= int(page.viewport_size["width"]) if page.viewport_size else False


def second_judge(new_page: Callable[..., Page], live_site: LiveServer, tid: int) -> Page:
    """A second judge of the tournament, invited by the first, signed in on a tablet."""
    name = f"judge-{uuid.uuid4().hex[:6]}"
    invited = live_site.judge_api(
        "POST", f"/tournaments/{tid}/judges", {"username": name, "invite": True}
    )
    page = new_page("desktop")
    page.set_viewport_size(TABLET)
    page.goto(invited["sign_in_url"].replace(live_site.url, ""))
    passwords = page.locator("#welcome-form input[type=password]")
    passwords.nth(0).fill("second-judge-pass-1")
    passwords.nth(1).fill("second-judge-pass-1")
    page.locator("#welcome-form button[type=submit]").click()
    expect(page.locator(".site-user")).to_have_text(name)
    page.goto(f"/referees/tournaments/{tid}/judge/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")
    return page


def test_a_call_from_the_table_is_taken_and_closed_by_a_second_judge(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_with_table(live_site, "Browser: judge calls")
    tid, table = made["id"], made["table"]

    # The first judge's console, on a projector-size screen, in English.
    console = new_page("desktop")
    console.set_viewport_size(PROJECTOR)
    judge_sign_in(console, live_site)
    console.goto(f"/referees/tournaments/{tid}/judge/")
    expect(console.locator("#live-status")).to_have_attribute("data-status", "live")
    expect(console.locator("#calls-open")).to_contain_text("No calls for a judge.")
    other = second_judge(new_page, live_site, tid)

    # The General at the table, on his phone, in Russian.
    phone = new_page("phone", locale="ru-RU")
    phone.goto(f"/join/{made['host']}")
    phone.goto(f"/tournaments/{tid}/battles/{table}/")
    expect(phone.locator("#judge-call")).to_be_visible()
    call = phone.locator("#judge-call")
    call.locator("summary").click()
    call.get_by_label("Спор").check()
    phone.locator("#call-text").fill("Он сыграл две карты за ход")
    phone.locator("#call-send").click()
    expect(phone.locator("#call-status")).to_contain_text("Ваш вызов ждёт судью (спор")
    expect(phone.locator("#call-open")).to_be_hidden()
    assert fits_the_width(phone)
    snap(phone, "call-phone-waiting")

    # Both consoles show the call live: who, at which table, why, how long ago.
    for page in (console, other):
        item = page.locator("#calls-open li[data-call]")
        expect(item).to_have_count(1)
        expect(item).to_contain_text(re.compile(r"at the table in \S"))
        expect(item).to_contain_text("a dispute")
        expect(item).to_contain_text("“Он сыграл две карты за ход”")
        expect(item).to_contain_text("just now")
        expect(page.locator("#calls-count")).to_have_text("1")
    assert console.title().startswith("(1) ")
    snap(console, "call-console-waiting")

    # The second judge takes it: the caller reads his name; the first judge sees it taken.
    other.locator("#calls-open button[data-take]").click()
    expect(other.locator("#calls-open li[data-call]")).to_contain_text("you are on the way")
    expect(console.locator("#calls-open li[data-call]")).to_contain_text("is on the way")
    expect(console.locator("#calls-open button[data-take]")).to_be_hidden()
    expect(phone.locator("#call-status")).to_contain_text(re.compile(r"Судья judge-\w+ идёт"))
    assert fits_the_width(other)
    snap(other, "call-console-taken")

    # He closes it with a note; the caller reads the note, the queue empties.
    other.locator("#calls-open input[data-note]").fill("Одна карта за ход (R13)")
    other.locator("#calls-open form.call-close button").click()
    for page in (console, other):
        expect(page.locator("#calls-open")).to_contain_text("No calls for a judge.")
        expect(page.locator("#calls-recent-box")).to_be_visible()
    expect(phone.locator("#call-status")).to_contain_text("закрыл ваш вызов")
    expect(phone.locator("#call-note")).to_have_text("“Одна карта за ход (R13)”")
    expect(phone.locator("#call-open")).to_be_visible()
    assert console.title() == console.title().removeprefix("(1) ")
    snap(phone, "call-phone-closed")

    # The log says each step.
    console.locator("#log-filters select[name=kind]").select_option("messages")
    expect(console.locator("#log-body")).to_contain_text("called a judge to")
    expect(console.locator("#log-body")).to_contain_text("took the call of")
    expect(console.locator("#log-body")).to_contain_text("closed the call of")


def test_a_repeated_call_is_one_and_nobody_else_sees_it(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_with_table(live_site, "Browser: one call")
    tid = made["id"]
    state = live_site.judge_api("GET", f"/tournaments/{tid}/state")
    calling = made["guest"]

    phone = new_page("phone")
    phone.goto(f"/join/{calling}")
    expect(phone).to_have_url(re.compile(r"/general/$"))
    phone.locator("#judge-call summary").click()
    phone.locator("#call-text").fill(WORDS)
    phone.locator("#call-send").click()
    expect(phone.locator("#call-status")).to_contain_text("Your call is waiting")
    # A second phone of the same player (or a second tap): the same single call.
    again = live_site.api("POST", f"/tournaments/{tid}/calls", token=calling, body={})
    calls = live_site.judge_api("GET", f"/tournaments/{tid}/calls")
    assert [c["id"] for c in calls] == [again["id"]]

    # The General withdraws it; the judges see it as withdrawn.
    phone.locator("#call-withdraw").click()
    expect(phone.locator("#call-status")).to_have_text("You withdrew your call.")
    assert live_site.judge_api("GET", f"/tournaments/{tid}/calls")[0]["withdrawn"] is True

    # R1.1: the host's page and the big screen show nothing of it.
    host = new_page("phone")
    host.goto(f"/join/{made['host']}")
    expect(host.locator("#live-status")).not_to_have_text("")
    expect(host.locator("#call-status")).to_be_hidden()
    screen = new_page("desktop")
    screen.set_viewport_size(PROJECTOR)
    screen.goto(f"/referees/tournaments/{tid}/screen/")
    expect(screen.locator("#screen-clock, body").first).to_be_visible()
    assert WORDS not in screen.content()
    public = live_site.api("GET", f"/tournaments/{tid}/state")
    assert "calls" not in public and "call" not in public
    assert WORDS not in str(live_site.api("GET", f"/tournaments/{tid}/state", token=made["host"]))
    assert state["tournament"]["id"] == tid


def test_the_call_button_fits_every_width_in_both_languages(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    made = tournament_with_table(live_site, "Browser: call widths")
    for locale in ("en-GB", "ru-RU"):
        page = new_page("phone", locale=locale)
        page.goto(f"/join/{made['guest']}")
        page.locator("#judge-call summary").click()
        for size in (PHONE, TABLET, PROJECTOR):
            page.set_viewport_size(size)
            expect(page.locator("#call-send")).to_be_visible()
            assert fits_the_width(page), (locale, size)
        snap(page, f"call-form-{locale}")


def test_the_console_says_who_has_not_ordered_yet(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 32: the judge sees who has not ordered without leaving the console."""
    made = tournament_running(live_site, "Browser: who has not ordered")
    tid = made["id"]
    general = next(p for p in made["players"] if p["army"] == "crab-1")
    console = new_page("desktop")
    judge_sign_in(console, live_site)
    console.goto(f"/referees/tournaments/{tid}/judge/")
    summary = console.locator("#orders-summary")
    expect(summary).to_contain_text("0 of 16 ordered · no order yet: crab-1, crab-2")

    live_site.api(
        "PUT", f"/tournaments/{tid}/orders/mine", token=general["token"], body={"kind": "hold"}
    )

    expect(summary).to_contain_text("1 of 16 ordered · no order yet: crab-2, crane-1")
