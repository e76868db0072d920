"""What a player's page says before the turns (R3): now, next, and who declares."""

from __future__ import annotations

import html
import re
from collections.abc import Callable

import pytest
from django.test import Client
from django.utils import timezone

from referees import services
from referees.models import Player
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db


def join(client: Client, game: Game, player: Player) -> None:
    assert client.get(f"/join/{game.token(player)}").status_code == 302


def page_of(client: Client, game: Game, player: Player) -> str:
    join(client, game, player)
    kind = "general" if player.role == "general" else "clan"
    response = client.get(f"/referees/tournaments/{game.id}/{kind}/")
    assert response.status_code == 200
    return html.unescape(response.content.decode())


def positions_link(game: Game) -> str:
    return f'href="/referees/tournaments/{game.id}/positions/"'


def test_r3_in_set_up_the_general_is_told_the_tournament_has_not_started(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="setup")

    page = page_of(client, game, game.player("crab"))

    assert 'id="start-now">The tournament has not started yet.' in page
    assert "5 minutes of clan planning" in page
    assert "15 minutes of negotiation, then turn 1" in page


def test_r3_1_in_planning_a_general_under_a_daimyo_is_told_who_declares(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(32, phase="planning")
    daimyo = game.player("crab", "daimyo")

    page = page_of(client, game, game.player("crab"))

    assert "Clan planning: your clan decides where its armies start." in page
    assert f"{daimyo.name}, your Daimyo, declares the starting positions for the Crab." in page
    assert "Clan planning ends in " in page
    assert "then 15 minutes of negotiation, then turn 1" in page
    assert positions_link(game) not in page
    assert "Your clan has not declared its starting positions yet." in page


def test_r3_1_in_planning_a_general_without_daimyo_gets_the_link_to_declare(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="planning")

    page = page_of(client, game, game.player("crab"))

    assert "Your clan has no Daimyo: its Generals declare for the Crab" in page
    assert positions_link(game) in page
    assert "Declare your starting positions" in page
    assert "Starting positions declared ✓ (change until clan planning ends, in {time})" in page


def test_r3_1_the_daimyos_clan_page_links_to_the_positions_page(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(32, phase="planning")

    page = page_of(client, game, game.player("crab", "daimyo"))

    assert "You declare the starting positions for the Crab." in page
    assert positions_link(game) in page


def test_r3_in_deployment_the_page_says_the_clans_declare_now(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(32, phase="planning")
    services.tournament_advance(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())

    page = page_of(client, game, game.player("crab"))

    assert 'id="start-now">Clan planning is over: the clans that have not declared' in page
    assert "Next: 15 minutes of negotiation once every clan has declared" in page


def test_r1_1_in_negotiation_a_general_under_a_daimyo_is_told_he_does_not_negotiate(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(32, phase="negotiation")

    page = page_of(client, game, game.player("crab"))

    assert "a General whose clan has a Daimyo does not negotiate (R1.1)" in page
    assert re.search(r'id="start-next">Turn 1 starts in \d\d:\d\d\.', page)


def test_r1_1_in_negotiation_a_general_without_daimyo_negotiates(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="negotiation")

    page = page_of(client, game, game.player("crab"))

    assert 'id="start-now">Negotiation. Alliances are made now: talk with the other clans.' in page
    assert "Turn 1 starts in {time}." in page


def test_r1_1_in_negotiation_the_karo_talks_only_to_his_clan(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(40, phase="negotiation")

    page = page_of(client, game, game.player("crab", "karo"))

    assert "as Karo you talk only to your own clan (R1.1)" in page


def test_the_start_panel_is_hidden_once_the_turns_run(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="running")

    page = page_of(client, game, game.player("crab"))

    assert 'id="start-now"></p>' in page
    assert 'hidden>\n  <h2 id="start-heading">' in page
