"""Consent at a battle table on two phones (R8, R13), and the winner's page after the battle.

General A proposes "Province lost" on B's card; B's phone shows the proposal and B confirms
it; the count changes on both phones. A proposes an honor change, withdraws it, and it
disappears from B's phone. B's own −20 honor is asked in the page's dialog (he cancels); B
loses his last province himself, through the page's confirm
dialog; the battle ends mid-turn, and A's General page stops speaking of a meeting at once.
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


def provinces(page: Page, army: str) -> Any:
    return card(page, army).locator(".province-value")


def test_r13_a_change_to_the_other_players_count_waits_for_his_confirmation(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["consent"]
    b = game["other"]["army"]
    a_token, b_token = game["token"], game["other"]["token"]
    tid = game["id"]
    rows = live_site.api("GET", f"/tournaments/{tid}/battles", token=a_token)
    table = f"/tournaments/{tid}/battles/{rows[0]['id']}"

    def api(token: str, body: dict[str, Any]) -> Any:
        return live_site.api("POST", f"{table}/actions", token=token, body=body)

    # The battle is called and begun from the API (the story of test_battle_table.py).
    live_site.api("POST", f"{table}/vote", token=a_token, body={"vote": "battle"})
    for token in (a_token, b_token):
        api(token, {"type": "stronghold", "honor": 6, "province_strength": 5, "gold": 5})
    api(a_token, {"type": "begin"})

    # A's General page, open beside the table: his army is in a battle (R4).
    general_a = new_page("phone")
    join(general_a, a_token, tid)
    expect(general_a.locator("#army-line")).to_contain_text("in a battle")

    phone_a, phone_b = new_page("phone"), new_page("phone")
    phone_a.context.add_cookies(general_a.context.cookies())  # A's second tab, signed in
    join(phone_b, b_token, tid)
    for phone in (phone_a, phone_b):
        phone.goto(f"{table}/")
        expect(phone.locator("#live-status")).to_have_text("Live")
        expect(provinces(phone, b)).to_contain_text("4 of 4")

    # A taps "Province lost" on B's card: a proposal, nothing changes yet.
    card(phone_a, b).get_by_role("button", name="Province lost").tap()
    expect(phone_a.locator("#battle-message")).to_contain_text("takes effect when")
    panel_b = phone_b.locator("#proposals-panel")
    expect(panel_b).to_be_visible()
    expect(panel_b).to_contain_text("loses a province")
    expect(phone_a.locator("#proposals-panel")).to_contain_text("Waiting for")
    expect(phone_a.locator("#proposals-panel").get_by_role("button", name="Confirm")).to_have_count(
        0
    )
    expect(provinces(phone_a, b)).to_contain_text("4 of 4")
    expect(provinces(phone_b, b)).to_contain_text("4 of 4")
    snap(phone_b, "battle-consent-proposal")

    # B confirms on his phone: the count changes on both.
    panel_b.get_by_role("button", name="Confirm").tap()
    expect(provinces(phone_b, b)).to_contain_text("3 of 4")
    expect(provinces(phone_a, b)).to_contain_text("3 of 4")
    expect(panel_b).to_be_hidden()
    expect(phone_a.locator("#proposals-panel")).to_be_hidden()

    # A proposes +1 honor for B, then withdraws it: it disappears from B's phone.
    honor_b = card(phone_b, b).locator(".honor-value")
    before = honor_b.inner_text()
    card(phone_a, b).get_by_role("button", name=f"{b}: family honor +1").tap()
    expect(panel_b).to_contain_text("family honor +1")
    phone_a.locator("#proposals-panel").get_by_role("button", name="Withdraw").tap()
    expect(panel_b.locator("#proposal-list li")).to_have_count(0)
    expect(honor_b).to_have_text(before)
    # Issue 30: both phones say what came of it, rather than a proposal that just vanished.
    for phone in (phone_a, phone_b):
        expect(phone.locator("#proposals-answered")).to_contain_text("Withdrawn: nothing changed")
    snap(phone_a, "battle-consent-withdrawn")

    # B takes his own honor down to −20: the server asks, the page's dialog asks him (R8).
    card(phone_b, b).locator("input.honor-input").fill("-26")
    card(phone_b, b).get_by_role("button", name="Change").tap()
    dialog = phone_b.locator("#confirm-dialog")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("ends the game")
    dialog.get_by_role("button", name="Cancel").tap()
    expect(dialog).to_be_hidden()
    expect(honor_b).to_have_text(before)

    # B loses his own last province: the page's dialog asks first (R8).
    for _ in range(2):
        api(b_token, {"type": "province", "army": b, "delta": -1})
    expect(provinces(phone_b, b)).to_contain_text("1 of 4")
    card(phone_b, b).get_by_role("button", name="Province lost").tap()
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("last province")
    snap(phone_b, "battle-consent-dialog")
    dialog.get_by_role("button", name="Cancel").tap()
    expect(dialog).to_be_hidden()
    expect(provinces(phone_b, b)).to_contain_text("1 of 4")
    card(phone_b, b).get_by_role("button", name="Province lost").tap()
    dialog.get_by_role("button", name="Yes, confirm").tap()
    expect(phone_a.locator("#outcome-panel")).to_be_visible()
    expect(phone_a.locator("#status-line")).to_contain_text("nded")

    # The battle ended mid-turn: the winner's page says so at once, not "a meeting" (R8).
    line = general_a.locator("#army-line")
    expect(line).not_to_contain_text("in a battle")
    expect(line).not_to_contain_text("meeting")
    expect(general_a.locator("#battle-link-panel")).to_be_hidden()
    snap(general_a, "battle-consent-winner-page")
