"""A battle table on a General's phone (R7, R8, R13): from his page to a game that updates live.

After turn 1 two armies of different clans stand in one province (``scenario.py``, story
"battle"). The General of the army that was there opens his table from his page, calls for
battle, sees the computed set-up, enters his stronghold; the other General enters his over
the API (another phone), the table begins, he gains honor and ends his turn, and the other
General's actions appear on his page without a reload.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer, snap

pytestmark = pytest.mark.browser


def join(page: Page, token: str, tournament_id: int) -> None:
    page.goto(f"/join/{token}")
    expect(page).to_have_url(re.compile(rf"/referees/tournaments/{tournament_id}/general/$"))


def card(page: Page, army: str) -> Any:
    return page.locator(f'#player-cards .player-card[data-army="{army}"]')


def test_a_general_plays_his_battle_table_on_his_phone(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["battle"]
    mine, other = game["army"], game["other"]["army"]
    table_api = f"/tournaments/{game['id']}"
    page = new_page("phone")

    # His page says where his table is, and that he cannot give orders in a battle (R4).
    join(page, game["token"], game["id"])
    link = page.locator("#battle-link")
    expect(link).to_be_visible()
    expect(page.locator("#battle-link-text")).to_contain_text("(R7)")
    link.tap()
    expect(page).to_have_url(re.compile(rf"/tournaments/{game['id']}/battles/\d+/$"))
    battle_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    expect(page.locator("#live-status")).to_have_text("Live")
    page.evaluate("window.__sameDocument = true")

    # The meeting: he calls for battle (R7).
    expect(page.locator("#meeting-panel")).to_be_visible()
    page.locator('#vote-buttons [data-vote="battle"]').tap()
    page.locator("#confirm-dialog").get_by_role("button", name="Yes, confirm").tap()
    expect(page.locator("#battle-message")).to_have_class(re.compile(r"\bis-ok\b"))
    expect(page.locator("#meeting-panel")).to_be_hidden()
    expect(page.locator("#status-line")).to_contain_text("Battle")

    # The computed set-up: seating with its draw, one card per army (R7, R10, R13).
    expect(page.locator("#setup-panel")).to_be_visible()
    expect(page.locator("#seating-line")).to_contain_text("Drawn at random (R7).")
    expect(page.locator("#draw-list li")).to_have_count(1)
    expect(page.locator("#setup-cards .setup-card")).to_have_count(2)
    mine_card = page.locator(f'#setup-cards .setup-card[data-army="{mine}"]')
    expect(mine_card).to_contain_text("Small Farms")
    expect(mine_card).to_contain_text("Fate cards")

    # He enters his stronghold; the other General enters his from his own phone.
    form = page.locator("#stronghold-form")
    form.locator('input[name="honor"]').fill("7")
    form.locator('input[name="province_strength"]').fill("5")
    form.locator('input[name="gold"]').fill("5")
    form.locator('button[type="submit"]').tap()
    expect(page.locator("#battle-message")).to_have_text("Stronghold entered.")
    expect(form).to_be_hidden()
    other_token = game["other"]["token"]
    live_site.api(
        "POST",
        f"{table_api}/battles/{battle_id}/actions",
        token=other_token,
        body={"type": "stronghold", "honor": 5, "province_strength": 4, "gold": 5},
    )
    begin = page.locator("#begin-button")
    expect(begin).to_be_visible()  # the other phone's stronghold arrived live
    expect(page.locator(f'#setup-cards .setup-card[data-army="{other}"]')).to_contain_text("5")

    # The battle begins: highest family honor starts (R13).
    begin.tap()
    expect(page.locator("#turn-who")).to_have_text("Your turn")
    expect(page.locator("#turn-phase")).to_contain_text("Straighten")
    expect(page.locator("#starting-line")).to_contain_text(mine)
    expect(card(page, mine).locator(".honor-value")).to_have_text("7")
    card(page, mine).get_by_role("button", name="+1").tap()
    expect(card(page, mine).locator(".honor-value")).to_have_text("8")
    page.get_by_role("button", name="Next: Events").tap()
    expect(page.locator("#turn-phase")).to_contain_text("Events")
    page.get_by_role("button", name="End turn").tap()
    expect(page.locator("#turn-who")).to_contain_text(f"Turn of {other}")
    expect(page.locator("#turn-buttons button")).to_have_count(0)  # not his turn

    # The other General plays: his honor and a province lost show up without a reload.
    for action in (
        {"type": "honor", "army": other, "delta": 2},
        {"type": "province", "army": other, "delta": -1},
    ):
        live_site.api(
            "POST", f"{table_api}/battles/{battle_id}/actions", token=other_token, body=action
        )
    expect(card(page, other).locator(".honor-value")).to_have_text("7")
    expect(card(page, other).locator(".province-value")).to_contain_text("3")
    assert page.evaluate("window.__sameDocument") is True
    snap(page, "battle-table")

    # A refusal is shown as the API gave it, not swallowed (a race with the other phone).
    refusal = "it is the other General's turn"
    page.route(
        f"**/api{table_api}/battles/{battle_id}/actions",
        lambda route: route.fulfill(status=422, json={"detail": refusal, "code": "illegal_action"}),
    )
    card(page, mine).get_by_role("button", name="+1").tap()
    expect(page.locator("#battle-message")).to_have_class(re.compile(r"\bis-error\b"))
    expect(page.locator("#battle-message")).to_contain_text(refusal)
    expect(card(page, mine).locator(".honor-value")).to_have_text("8")


def test_a_bushido_table_takes_the_tactical_test_and_the_models(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    """R14: the other General calls for battle; the starting phase is played on the phone."""
    game = live_site.data["bushido"]
    other = game["other"]
    rows = live_site.api("GET", f"/tournaments/{game['id']}/battles", token=other["token"])
    path = f"/tournaments/{game['id']}/battles/{rows[0]['id']}"
    live_site.api("POST", f"{path}/vote", token=other["token"], body={"vote": "battle"})
    page = new_page("phone")
    join(page, game["token"], game["id"])
    page.locator("#battle-link").tap()

    expect(page.locator("#bushido-panel")).to_be_visible()
    expect(page.locator("#bushido-sides")).to_contain_text("Game 1")
    expect(page.locator("#bushido-phase")).to_contain_text("Starting")
    expect(page.locator("#bushido-turn")).to_have_text("Turn 1 of 4")
    mine = page.locator(f'#bushido-body .player-card:has-text("{game["army"]}")')
    page.locator("#bushido-body .button-row button").first.tap()
    expect(page.locator("#bushido-body")).to_contain_text("Tactical test won by")
    mine.locator("input").fill("5")
    mine.get_by_role("button", name="Set").tap()
    expect(mine.locator(".counter-value").first).to_have_text("5")
    live_site.api(
        "POST",
        f"{path}/actions",
        token=other["token"],
        body={"type": "models", "army": other["army"], "count": 3},
    )
    expect(page.locator("#bushido-body")).to_contain_text("gets 2 pass tokens")
    page.get_by_role("button", name="Next: Main").tap()
    expect(page.locator("#bushido-phase")).to_contain_text("Main")
    snap(page, "battle-table-bushido")


def test_the_battle_table_speaks_russian(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["battle"]
    page = new_page("phone", locale="ru-RU")
    join(page, game["token"], game["id"])
    link = page.locator("#battle-link")
    expect(link).to_be_visible()
    expect(link).to_have_text("Открыть стол битвы")

    link.tap()

    expect(page.locator("html")).to_have_attribute("lang", "ru")
    expect(page.locator("#battle-title")).to_contain_text("Стол битвы")
    expect(page.locator("#armies-heading")).to_have_text("За столом")
    expect(page.locator("#status-line")).to_have_text(re.compile("[А-Яа-яЁё]"))
    snap(page, "battle-table-russian")
