"""The history of a turn shows its battles beside its orders and draws (R7, R8, R9)."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.battles.conftest import fight, lose_provinces, meet, resolve, vote
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db


def _history(client: Client, game: Game, turn: int) -> str:
    client.force_login(game.judge)
    response = client.get(reverse("referees:history", args=[game.id]) + f"?turn={turn}")
    assert response.status_code == 200
    return response.content.decode()


def _battles(html: str) -> str:
    start = html.index('id="history-battles"')
    return html[start : html.index("</section>", start)]


def test_r8_the_history_shows_a_battle_opened_fought_and_its_casualties(
    client: Client, game16: Game
) -> None:
    battle = meet(game16)  # turn 1: the Unicorn marches into Akodo Lands
    fight(game16, battle)
    lose_provinces(game16, battle, "lion-1")  # decided in turn 2
    resolve(game16)

    opened = _battles(_history(client, game16, 1))
    decided = _battles(_history(client, game16, 2))

    assert "Akodo Lands" in opened and "lion-1" in opened and "unicorn-2" in opened
    assert "Table opened after turn 1." in opened
    assert "Fought" in opened
    for html in (opened, decided):
        assert "unicorn-2 (Unicorn general 2) won" in html
        assert "lion-1 (Lion general 1) destroyed, may reform from turn 4" in html
    assert "decided in this one" in decided


def test_r7_the_history_shows_a_meeting_that_made_peace(client: Client, game16: Game) -> None:
    battle = meet(game16)
    vote(game16, battle, "lion-1", "peace")
    vote(game16, battle, "unicorn-2", "peace")

    html = _battles(_history(client, game16, 1))

    assert "Akodo Lands" in html and "No battle: peace." in html


def test_the_history_of_a_quiet_turn_says_no_table_opened(client: Client, game16: Game) -> None:
    resolve(game16)

    assert "No battle tables this turn." in _battles(_history(client, game16, 1))
