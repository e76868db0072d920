"""A laptop on two networks: the judge chooses which address the links carry (issue 31).

A laptop with Wi-Fi to the venue and a cable elsewhere printed the address of the interface
with the default route, which the phones could not reach. Under ``make venue`` the console
lists every address of the laptop with its QR code; the judge picks one, and the join links,
QR codes and sheets carry it at once, without a restart, until he picks another.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from django.test import Client

from referees.models import LogEntry
from sl5r.public_url import site_url_current
from tests.referees.conftest import Api, Game

CABLE = "http://10.20.0.5:8000"  # the default route's: the phones cannot reach it
WIFI = "http://192.168.8.23:8000"  # the venue's Wi-Fi


@pytest.fixture
def two_networks(settings: Any, tmp_path: Path) -> Path:
    settings.SL5R_VENUE = True
    settings.SL5R_VENUE_DIR = tmp_path / "venue"
    settings.SL5R_SITE_URL = CABLE
    settings.SL5R_SITE_CANDIDATES = [CABLE, WIFI]
    return Path(settings.SL5R_VENUE_DIR)


def join_urls(api: Api, game: Game, key: str) -> set[str]:
    players = api.get(f"/tournaments/{game.id}/players", token=key).json()
    return {p["join_url"].split("/join/", 1)[0] for p in players if p["join_url"]}


def test_the_judge_chooses_the_wifi_address_and_every_link_carries_it_at_once(
    api: Api, game16: Game, judge_key: str, two_networks: Path
) -> None:
    assert join_urls(api, game16, judge_key) == {CABLE}

    chosen = api.post(f"/tournaments/{game16.id}/venue-address", {"site": WIFI}, token=judge_key)

    assert chosen.status_code == 200, chosen.content
    assert site_url_current() == WIFI
    assert join_urls(api, game16, judge_key) == {WIFI}
    changed = LogEntry.objects.get(tournament_id=game16.id, action="site_changed")
    assert (changed.data["before"], changed.data["after"]) == (CABLE, WIFI)
    assert (two_networks / "site_url").read_text() == WIFI + "\n"  # the next start compares


def test_an_address_the_laptop_does_not_have_is_refused_and_nothing_changes(
    api: Api, game16: Game, judge_key: str, two_networks: Path
) -> None:
    refused = api.post(
        f"/tournaments/{game16.id}/venue-address",
        {"site": "http://203.0.113.9:8000"},
        token=judge_key,
    )

    assert refused.status_code == 400
    assert WIFI in refused.json()["detail"] and CABLE in refused.json()["detail"]
    assert site_url_current() == CABLE
    assert not LogEntry.objects.filter(action="site_changed").exists()


def test_the_console_lists_each_address_with_its_code_and_says_which_the_links_carry(
    client: Client, game16: Game, two_networks: Path
) -> None:
    client.force_login(game16.judge)

    page = client.get(f"/referees/tournaments/{game16.id}/judge/").content.decode()

    assert 'id="venue-addresses"' in page
    assert page.count("<svg") >= 2  # a QR code per address (and the war map)
    assert f'data-site="{WIFI}"' in page  # the other one is offered
    assert f'data-site="{CABLE}"' not in page  # the current one is marked instead
    assert "on the links now" in page


def test_a_laptop_with_one_address_shows_no_choice(
    client: Client, game16: Game, settings: Any
) -> None:
    settings.SL5R_VENUE = True
    settings.SL5R_SITE_CANDIDATES = [CABLE]
    client.force_login(game16.judge)

    page = client.get(f"/referees/tournaments/{game16.id}/judge/").content.decode()

    assert 'id="venue-addresses"' not in page
