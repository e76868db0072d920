"""A way back from every mistake (issue 30, points 5, 6, 7 and 18), as a judge meets them.

- Point 5: "End the game" pressed by mistake is taken back from the console ("Reopen the
  game…", with a reason): the unplayed turn opens again, paused, the stopped tables go on, the
  log says so. Until then the undo dialog says it cannot undo, instead of offering an undo
  and answering 409; when a table changed since the turn, it says so up front, naming the
  province by its name.
- Point 6: the undo dialog offers the time the turn really had left when it was resolved.
- Point 7: the forms that change something redirect, so the back button and a reload never
  post them again (the players list, the judges page).
- Point 18: a pasted line naming a clan and a role gets that place, even below a line left
  to R1.

The console is used on a tablet (820 px), the set-up pages on a phone; the table-changed undo
and the pasted list are in Russian. Tournaments are made here through the judge's API
(``page_states.py``); each story then uses the pages only.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Dialog, Page, Request, expect

from tests.browser.conftest import LiveServer, judge_sign_in, snap
from tests.browser.page_states import tournament_running

pytestmark = pytest.mark.browser

TABLET = {"width": 820, "height": 1180}


def clock_text(seconds: float) -> str:
    """``formatClock`` in format.js: whole seconds rounded up, hours only when there are."""
    whole = max(0, -int(-seconds // 1))
    hours, minutes, secs = whole // 3600, whole % 3600 // 60, whole % 60
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def fits_the_width(page: Page) -> bool:
    return bool(page.evaluate("document.documentElement.scrollWidth <= window.innerWidth"))


def sign_in(page: Page, live_site: LiveServer, then: str) -> None:
    """The judge signs in on the site's own page, lands on his home, then opens ``then``."""
    judge_sign_in(page, live_site)
    page.goto(then)


def console_on_a_tablet(page: Page, live_site: LiveServer, tid: int) -> None:
    page.set_viewport_size(TABLET)
    sign_in(page, live_site, f"/referees/tournaments/{tid}/judge/")
    expect(page.locator("#live-status")).to_have_attribute("data-status", "live")


def answer_next_dialog(page: Page, text: str | None = None) -> None:
    """The next confirm() or prompt() the page opens is accepted (with ``text`` for a
    prompt), as the judge would press OK."""

    def accept(dialog: Dialog) -> None:
        if text is None:
            dialog.accept()
        else:
            dialog.accept(text)

    page.once("dialog", accept)


def clock(live_site: LiveServer, tid: int) -> dict[str, Any]:
    clock_now: dict[str, Any] = live_site.judge_api("GET", f"/tournaments/{tid}/state")[
        "tournament"
    ]["clock"]
    return clock_now


def a_meeting_after_turn_1(live_site: LiveServer, name: str) -> dict[str, Any]:
    """A running tournament whose turn 1 was resolved with two clans' armies in one
    province (R7): the meeting's table is open in turn 2. The move is a judge's paper order."""
    made = tournament_running(live_site, name)
    tid = made["id"]
    game_map = live_site.api("GET", f"/tournaments/{tid}/map")
    impassable = {p["id"] for p in game_map["provinces"] if p.get("impassable")}
    neighbours: dict[str, set[str]] = {}
    for a, b in game_map["borders"]:
        neighbours.setdefault(a, set()).add(b)
        neighbours.setdefault(b, set()).add(a)
    armies = live_site.judge_api("GET", f"/tournaments/{tid}/state")["armies"]
    where = {army["province"]: army for army in armies if army["province"]}
    host, guest = next(
        (army, where[province])
        for army in sorted(armies, key=lambda a: a["id"])
        if army["province"] and army["province"] not in impassable
        for province in sorted(neighbours.get(army["province"], ()))
        if province in where and where[province]["clan"] != army["clan"]
    )
    live_site.judge_api(
        "PUT",
        f"/tournaments/{tid}/armies/{guest['id']}/order",
        {"kind": "move", "path": [host["province"]]},
    )
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/resolve-now?turn=1")
    tables = live_site.judge_api("GET", f"/tournaments/{tid}/battles")
    assert len(tables) == 1 and tables[0]["status"] == "meeting", tables
    return {
        **made,
        "battle": tables[0]["id"],
        "province": host["province"],
        "province_name": tables[0]["province_name"],
        "host": host["id"],
        "guest": guest["id"],
    }


# --- Point 5 ---------------------------------------------------------------------------------


def test_a_game_ended_by_mistake_is_reopened_paused_on_its_unplayed_turn_with_its_table(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 30, point 5 (R4, R8, R11): after "End the game" by mistake the undo dialog says
    at once that the game must be reopened first (it offered the undo and answered 409);
    "Reopen the game…" asks why, opens the unplayed turn again paused with its orders, the
    table the end stopped goes on as it was, and the log has the reopening with its reason.
    Then the undo is offered with nothing of the stop and the resumption to discard."""
    game = a_meeting_after_turn_1(live_site, "Way back: reopened")
    tid = game["id"]
    # A paper order in turn 2, the turn the end leaves unplayed: it must come back with it.
    paper_army = next(
        p["army"]
        for p in game["players"]
        if p["army"] and p["army"] not in (game["host"], game["guest"])
    )
    live_site.judge_api("PUT", f"/tournaments/{tid}/armies/{paper_army}/order", {"kind": "hold"})
    page = new_page("desktop")
    console_on_a_tablet(page, live_site, tid)
    tables = page.locator("#battle-tables")
    table = tables.locator(f'li[data-battle="{game["battle"]}"]')
    expect(table).to_have_attribute("data-status", "meeting")
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^2\b"))

    # The mis-click, confirmed: the game ends and its table stops (R8).
    answer_next_dialog(page)
    page.locator("#btn-end").click()
    reopen = page.locator("#btn-reopen")
    expect(reopen).to_be_visible()
    expect(page.locator("#btn-end")).to_be_hidden()
    expect(tables).to_contain_text("No open tables")

    # The undo says why it cannot be done before the judge confirms anything.
    page.locator("#btn-undo").click()
    dialog = page.locator("#undo-dialog")
    expect(dialog).to_be_visible()
    refused = page.locator("#undo-refused")
    expect(refused).to_be_visible()
    expect(refused).to_contain_text("reopen it first")
    expect(refused).to_contain_text("Reopen the game")
    expect(page.locator("#undo-confirm")).to_be_disabled()
    snap(page, "way-back-undo-refused-after-end")
    page.screenshot(path="artifacts/screenshots/way-back-undo-refused-after-end-820.png")
    page.locator("#undo-cancel").click()
    expect(dialog).to_be_hidden()

    # "Reopen the game…" asks for the reason that goes in the log.
    reason = "pressed End the game by mistake"
    answer_next_dialog(page, reason)
    reopen.click()
    expect(page.locator("#clock-paused")).to_be_visible()
    expect(page.locator("#btn-resume")).to_be_visible()
    expect(reopen).to_be_hidden()
    expect(page.locator("#btn-end")).to_be_visible()
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^2 / 20$"))
    paused = clock(live_site, tid)
    assert paused["phase"] == "running" and paused["paused"] is True
    assert 120 <= paused["remaining"] <= 3600
    expect(page.locator("#countdown")).to_have_text(clock_text(paused["remaining"]))
    expect(table).to_have_attribute("data-status", "meeting")
    expect(table).to_contain_text(game["province_name"])
    expect(page.locator("#orders-body")).to_contain_text(paper_army)
    log = page.locator("#log-body")
    expect(log).to_contain_text("reopened the game: turn 2 is open again, paused")
    expect(log).to_contain_text(reason)
    expect(log).to_contain_text(f"The table in {game['province_name']} goes on")
    assert fits_the_width(page)
    snap(page, "way-back-reopened-console")
    page.screenshot(path="artifacts/screenshots/way-back-reopened-console-820.png", full_page=True)

    # Now the undo of turn 1 is offered, and the stop and its taking back are not listed.
    page.locator("#btn-undo").click()
    expect(dialog).to_be_visible()
    expect(page.locator("#undo-title")).to_have_text(re.compile(r"\b1\b"))
    expect(refused).to_be_hidden()
    expect(page.locator("#undo-confirm")).to_be_enabled()
    expect(page.locator("#undo-items li")).not_to_have_count(0)
    expect(page.locator("#undo-items")).not_to_contain_text("table stopped")
    expect(page.locator("#undo-items")).not_to_contain_text("table resumed")
    page.locator("#undo-cancel").click()
    expect(dialog).to_be_hidden()


def test_the_undo_dialog_says_up_front_that_a_table_changed_naming_its_province_in_russian(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 30, point 5 (R4, R7): once a battle has begun at a table turn 1 opened, the
    undo of turn 1 cannot be done; the dialog says so before the judge confirms, naming the
    province as the pages name it ("Akodo Lands", not "lion-akodo"), and offers no undo."""
    game = a_meeting_after_turn_1(live_site, "Way back: table changed")
    tid = game["id"]
    # A General calls for battle (R7): the table has changed since turn 1 was resolved.
    live_site.judge_api(
        "POST",
        f"/tournaments/{tid}/battles/{game['battle']}/vote",
        {"vote": "battle", "army": game["host"]},
    )
    page = new_page("desktop", locale="ru-RU")
    console_on_a_tablet(page, live_site, tid)
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator(f'#battle-tables li[data-battle="{game["battle"]}"]')).to_have_attribute(
        "data-status", "battle"
    )

    page.locator("#btn-undo").click()
    dialog = page.locator("#undo-dialog")
    expect(dialog).to_be_visible()
    refused = page.locator("#undo-refused")
    expect(refused).to_be_visible()
    expect(refused).to_contain_text(
        f"стол в провинции {game['province_name']} изменился после того, как ход 1"
    )
    expect(refused).not_to_contain_text(game["province"])
    expect(page.locator("#undo-confirm")).to_be_disabled()
    box = dialog.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= TABLET["width"]
    snap(page, "way-back-undo-table-changed-ru")
    page.screenshot(path="artifacts/screenshots/way-back-undo-table-changed-ru-820.png")
    page.locator("#undo-cancel").click()
    expect(dialog).to_be_hidden()
    assert live_site.judge_api("GET", f"/tournaments/{tid}/clock/undo")["problem"]


# --- Point 6 ---------------------------------------------------------------------------------


def test_the_undo_dialog_offers_the_time_the_turn_really_had_left_and_says_when_it_was_too_little(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 30, point 6 (R4): a turn resolved early with 1:17 left is offered back with
    1:17 (the dialog said 2:00, the least it reopens with); one resolved with under a minute
    left says how little it had and that it reopens with 2:00."""
    game = tournament_running(live_site, "Way back: time left")
    tid = game["id"]
    # The clock is held so that the time left at the resolution does not depend on when
    # the judge presses the button: about 1:17 of a one-hour turn.
    live_site.judge_api("POST", f"/tournaments/{tid}/clock/pause")
    live_site.judge_api(
        "POST",
        f"/tournaments/{tid}/clock/extend",
        {"seconds": round(77 - clock(live_site, tid)["remaining"])},
    )
    held = clock(live_site, tid)["remaining"]
    left = round(held)  # what the resolution records as the time the turn had left
    assert 60 <= left < 120, held
    page = new_page("desktop")
    console_on_a_tablet(page, live_site, tid)
    countdown = page.locator("#countdown")
    expect(countdown).to_have_text(clock_text(held))

    answer_next_dialog(page)
    page.locator("#btn-resolve").click()
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^2 / 20$"))

    page.locator("#btn-undo").click()
    dialog = page.locator("#undo-dialog")
    expect(dialog).to_be_visible()
    expect(page.locator("#undo-left")).to_have_text(f"the time it had left: {clock_text(left)}")
    expect(page.locator("#undo-full")).to_have_text("a full turn: 1:00:00")
    expect(page.locator('input[name="time"][value="left"]')).to_be_checked()
    preview = live_site.judge_api("GET", f"/tournaments/{tid}/clock/undo")
    assert (preview["left_seconds"], preview["default_seconds"]) == (left, left), preview
    snap(page, "way-back-undo-time-left")
    page.screenshot(path="artifacts/screenshots/way-back-undo-time-left-820.png")
    page.locator("#undo-reason").fill("resolved by mistake")
    page.locator("#undo-confirm").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^1 / 20$"))
    expect(page.locator("#clock-paused")).to_be_visible()
    expect(countdown).to_have_text(clock_text(left))

    # A minute off, then resolved again: it had under a minute, too little to play out.
    page.locator('[data-action="extend"][data-seconds="-60"]').click()
    expect(countdown).to_have_text(clock_text(left - 60))
    answer_next_dialog(page)
    page.locator("#btn-resolve").click()
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^2 / 20$"))

    page.locator("#btn-undo").click()
    expect(dialog).to_be_visible()
    expect(page.locator("#undo-left")).to_have_text(
        f"it had {clock_text(left - 60)} left, too little to play: 2:00"
    )
    preview = live_site.judge_api("GET", f"/tournaments/{tid}/clock/undo")
    assert (preview["left_seconds"], preview["default_seconds"]) == (left - 60, 120), preview
    page.screenshot(path="artifacts/screenshots/way-back-undo-too-little-820.png")
    page.locator("#undo-reason").fill("resolved by mistake again")
    page.locator("#undo-confirm").click()
    expect(dialog).to_be_hidden()
    expect(page.locator("#turn-label")).to_have_text(re.compile(r"^1 / 20$"))
    expect(countdown).to_have_text("2:00")


# --- Point 7 ---------------------------------------------------------------------------------


def empty_tournament_in_setup(live_site: LiveServer, name: str, players: int) -> int:
    """A tournament in set-up with nobody registered yet: its id."""
    created = live_site.judge_api(
        "POST",
        "/tournaments",
        {
            "name": name,
            "player_count": players,
            "planning_seconds": 3600,
            "negotiation_seconds": 3600,
            "turn_seconds": 3600,
            "turns_total": 8,
        },
    )
    return int(created["id"])


def navigations(page: Page) -> list[Request]:
    """Every request that loads a page in the tab from now on (not fetches or images)."""
    seen: list[Request] = []
    page.on("request", lambda r: seen.append(r) if r.is_navigation_request() else None)
    return seen


def test_the_back_button_and_a_reload_after_registering_pasted_players_never_post_again(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 30, point 7 (R1): the paste preview is a page of its own after a redirect, so
    reloading it, and the back button from the console after "Register these players",
    load it again (GET 200) instead of posting the form a second time ("Confirm form
    resubmission", then a 409); the players are registered once."""
    tid = empty_tournament_in_setup(live_site, "Way back: pasted players", 8)
    add = f"/referees/tournaments/{tid}/players/add"
    page = new_page("phone")
    sign_in(page, live_site, add)
    loaded = navigations(page)
    names = [f"Way back player {n}" for n in range(1, 9)]
    page.locator("#roster-lines").fill("\n".join(names))
    page.locator("#roster-preview-button").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(add)}\?preview=1$"))
    expect(page.locator("#roster-table tbody tr.is-fine")).to_have_count(8)

    # A reload of the preview shows it again, read, not posted.
    reloaded = page.reload()
    assert reloaded is not None and reloaded.request.method == "GET" and reloaded.status == 200
    expect(page.locator("#roster-table tbody tr.is-fine")).to_have_count(8)
    register = page.locator("#roster-register-button")
    expect(register).to_have_text("Register these 8 players")
    snap(page, "way-back-paste-preview")
    register.click()
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/judge/$"))
    expect(page.locator("body")).to_contain_text("8 players registered.")
    expect(page.locator("#players-body tr")).to_have_count(8)

    # The back button: the preview page again, empty now that the list is registered.
    back = page.go_back()
    assert back is not None and back.request.method == "GET" and back.status == 200
    expect(page).to_have_url(re.compile(rf"{re.escape(add)}\?preview=1$"))
    expect(page.locator("#roster-form")).to_be_visible()
    expect(page.locator("#roster-register-button")).to_have_count(0)
    expect(page.locator("#roster-problem")).to_have_count(0)
    assert fits_the_width(page)
    snap(page, "way-back-paste-back")
    again = page.reload()
    assert again is not None and again.request.method == "GET" and again.status == 200

    # Two posts in all: the preview's and the register's (from the preview's page).
    posted = [r.url.removeprefix(live_site.url) for r in loaded if r.method == "POST"]
    assert posted == [add, f"{add}?preview=1"], posted
    players = live_site.judge_api("GET", f"/tournaments/{tid}/players")
    assert sorted(p["name"] for p in players) == sorted(names)


def test_a_reload_after_invite_on_the_judges_page_never_posts_again_and_the_link_is_shown_once(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 30, point 7: "Invite", "New sign-in link" and "Make the key" redirect to the
    judges page, which shows the one-time link (or the key) once; a reload reads the page
    (GET 200) instead of posting the form again (the reload answered 409 and hid the link)."""
    tid = empty_tournament_in_setup(live_site, "Way back: judges", 8)
    judges = f"/referees/tournaments/{tid}/judges/"
    page = new_page("phone")
    sign_in(page, live_site, judges)
    loaded = navigations(page)

    page.locator("#judge-invite-form input[type=text]").first.fill("way-back-judge")
    page.locator("#judge-invite-form button[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(judges)}$"))
    link = page.locator("#invitation-url")
    first = link.input_value()
    assert "/accounts/welcome/" in first
    snap(page, "way-back-judges-invited")
    reloaded = page.reload()
    assert reloaded is not None and reloaded.request.method == "GET" and reloaded.status == 200
    expect(link).to_have_count(0)
    expect(page.locator("#judges-problem")).to_have_count(0)
    invited = page.locator("#judges-list li", has_text="way-back-judge")
    expect(invited).to_have_count(1)

    # A new link for him: shown once too.
    invited.get_by_role("button", name="New sign-in link").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(judges)}$"))
    second = link.input_value()
    assert "/accounts/welcome/" in second and second != first
    reloaded = page.reload()
    assert reloaded is not None and reloaded.request.method == "GET" and reloaded.status == 200
    expect(link).to_have_count(0)
    expect(page.locator("#judges-problem")).to_have_count(0)

    # A new API key: the same.
    page.locator("#key-create-form input[type=text]").first.fill("way back script")
    page.locator("#key-create-form button[type=submit]").click()
    expect(page).to_have_url(re.compile(rf"{re.escape(judges)}$"))
    expect(page.locator("#issued-key-value")).to_have_count(1)
    reloaded = page.reload()
    assert reloaded is not None and reloaded.request.method == "GET" and reloaded.status == 200
    expect(page.locator("#issued-key-value")).to_have_count(0)
    expect(page.locator("#keys-table")).to_contain_text("way back script")
    assert fits_the_width(page)

    posted = [r.url.removeprefix(live_site.url) for r in loaded if r.method == "POST"]
    assert posted == [f"{judges}invite", f"{judges}link", f"{judges}keys"], posted


# --- Point 18 --------------------------------------------------------------------------------


def test_a_pasted_line_naming_its_clan_and_role_gets_that_place_below_lines_left_to_r1(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """Issue 30, point 18 (R1): in an 8-player game (one General a clan) seven lines left to
    R1 come before "Хида Кисада; Краб; Генерал". His line is placed as asked, and R1 proposes
    the other clans for the rest (the first line took the Crab and his line was refused).
    On a phone, in Russian."""
    tid = empty_tournament_in_setup(live_site, "Way back: R1 fill", 8)
    page = new_page("phone", locale="ru-RU")
    sign_in(page, live_site, f"/referees/tournaments/{tid}/judge/")
    expect(page.locator("html")).to_have_attribute("lang", "ru")
    page.locator("#players-add-link").click()
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/players/add$"))
    lines = [
        "Отаку Камоко",
        "Додзи Хотуру",
        "Мирумото Хитоми",
        "Мацу Цуко",
        "Сиба Цукунэ",
        "Баюси Качико",
        "Иучи Карасу",
        "Хида Кисада; Краб; Генерал",
    ]
    page.locator("#roster-lines").fill("\n".join(lines))
    page.locator("#roster-preview-button").click()

    expect(page.locator("#roster-table tbody tr.is-fine")).to_have_count(8)
    expect(page.locator("#roster-table tbody tr.has-problem")).to_have_count(0)
    asked = page.locator("#roster-line-8")
    expect(asked).to_contain_text("Краб")
    expect(asked).to_contain_text("Генерал")
    expect(asked).to_contain_text("crab-1")
    expect(asked).not_to_contain_text("предложено")
    first = page.locator("#roster-line-1")
    expect(first).not_to_contain_text("Краб")
    expect(first).to_contain_text("предложено")
    assert fits_the_width(page)
    snap(page, "way-back-r1-fill-ru")
    page.locator("#roster-preview").screenshot(
        path="artifacts/screenshots/way-back-r1-fill-ru-preview-390.png"
    )
    page.locator("#roster-register-button").click()
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tid}/judge/$"))
    expect(page.locator("#players-body tr")).to_have_count(8)

    players = {p["name"]: p for p in live_site.judge_api("GET", f"/tournaments/{tid}/players")}
    kisada = players["Хида Кисада"]
    assert (kisada["clan"], kisada["role"], kisada["army"]) == ("crab", "general", "crab-1")
    assert sorted(p["clan"] for p in players.values()) == sorted(
        ["crab", "crane", "dragon", "lion", "phoenix", "scorpion", "shadowlands", "unicorn"]
    )
