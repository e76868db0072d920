"""A General's table page shows the commitment of its draws' seed, and no seed (R11).

Read-only on the scenario's "battle" story: whatever other stories did to that table, the
page shows exactly what the API gives this General (``draws.commitment``, ``draws.seed``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import LiveServer

pytestmark = pytest.mark.browser


def test_r11_the_table_page_shows_the_commitment_of_its_seed_on_a_phone(
    new_page: Callable[..., Page], live_site: LiveServer
) -> None:
    game = live_site.data["battle"]
    page = new_page("phone")
    page.goto(f"/join/{game['token']}")
    page.locator("#battle-link").tap()
    expect(page).to_have_url(re.compile(rf"/tournaments/{game['id']}/battles/\d+/$"))
    battle_id = int(page.url.rstrip("/").rsplit("/", 1)[1])
    expect(page.locator("#live-status")).to_have_text("Live")
    row = live_site.api(
        "GET", f"/tournaments/{game['id']}/battles/{battle_id}", token=game["token"]
    )
    commitment = row["draws"]["commitment"]
    assert re.fullmatch(r"[0-9a-f]{64}", commitment)
    line = page.locator("#battle-commitment")
    expect(line).to_be_visible()
    expect(line).to_contain_text("sealed by commitment")
    expect(page.locator("#battle-commitment-value")).to_have_text(commitment)
    if row["draws"]["seed"] is None:
        expect(page.locator("#battle-seed")).to_be_hidden()
    else:
        expect(page.locator("#battle-seed-value")).to_have_text(row["draws"]["seed"])
