"""What the state tells the players after a battle (issue 30, "every player told what
happened to him"): the map, the orders list, a General's own view."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.reading.state import tournament_state
from tests.battles.conftest import PROVINCE, fight, lose_provinces, meet
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db


def _meetings(game: Game, viewer: Viewer) -> list[str]:
    state = tournament_state(tournament=game.refresh(), viewer=viewer, now=timezone.now())
    return [m["province"] for m in state["meetings"]]


def test_a_battle_that_ended_with_one_clan_left_leaves_no_swords_on_the_map(
    game16: Game,
) -> None:
    """R6-R8: the crossed swords stayed on the province after the battle ended, because the
    state still sent last turn's meeting with one army left in it."""
    battle = fight(game16, meet(game16))
    unicorn = Viewer(kind="player", player=game16.player("unicorn", n=2))
    assert _meetings(game16, Viewer.judge()) == [PROVINCE]
    assert _meetings(game16, unicorn) == [PROVINCE]

    lose_provinces(game16, battle, "lion-1")  # the Unicorn wins, the Lion is destroyed

    assert _meetings(game16, Viewer.judge()) == []
    assert _meetings(game16, unicorn) == []


def test_after_the_end_players_and_the_public_see_the_standings_and_the_played_turns(
    client: Client, game_mixed: Game
) -> None:
    """Issue 30 (R12): a General under a Daimyo saw "The game is over" and nothing else, and
    the public home's "Played turns" led to the judge sign-in. Before the end, R1.1 holds."""
    game = game_mixed  # the Crab have a Daimyo: their General sees his own army only
    general = Viewer(kind="player", player=game.player("crab"))
    history = reverse("referees:history", args=[game.id])
    services.clock_resolve_now(
        tournament_id=game.id, actor=game.judge_actor, now=timezone.now(), turn=1
    )
    before = tournament_state(tournament=game.refresh(), viewer=general, now=timezone.now())
    assert not before["viewer"]["sees_all_armies"]
    assert [a["id"] for a in before["armies"]] == ["crab-1"]
    assert "scores" not in before
    assert client.get(history).status_code == 302  # judges only, until the end

    services.clock_end(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())

    after = tournament_state(tournament=game.refresh(), viewer=general, now=timezone.now())
    public = tournament_state(tournament=game.refresh(), viewer=Viewer.public(), now=timezone.now())
    armies = len(game.board()["armies"])
    for state in (after, public):
        assert state["viewer"]["sees_all_armies"]
        assert len(state["armies"]) == armies
        assert set(state["scores"]) and state["tournament"]["ended_after_turn"] == 1
    page = client.get(history)
    assert page.status_code == 200
    assert "crab-1" in page.content.decode()


def test_the_public_home_links_the_played_turns_only_where_the_public_may_read_them(
    client: Client, game_mixed: Game, game16: Game
) -> None:
    """Issue 30's walk: with a Daimyo in the game (R1.1) the public home's "Played turns"
    led spectators to the judge sign-in. It is offered where no clan has a Daimyo, and
    everywhere once the game is over (R12)."""
    history = {g.id: reverse("referees:history", args=[g.id]) for g in (game_mixed, game16)}

    def linked() -> set[int]:
        page = client.get("/").content.decode()
        return {tid for tid, url in history.items() if f'href="{url}"' in page}

    assert linked() == {game16.id}
    services.clock_end(
        tournament_id=game_mixed.id, actor=game_mixed.judge_actor, now=timezone.now()
    )
    assert client.get(history[game_mixed.id]).status_code == 200
    assert game_mixed.id in {
        tid for tid in history if f'href="{history[tid]}"' in client.get("/").content.decode()
    }


def test_after_the_end_no_army_is_in_a_battle_and_the_map_shows_no_swords(
    game16: Game,
) -> None:
    """Issue 30's walk: after "End the game" a General still read "your army is in a battle"
    and the maps kept the stopped tables' swords."""
    fight(game16, meet(game16))
    assert _meetings(game16, Viewer.judge()) == [PROVINCE]
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())

    for viewer in (Viewer.judge(), Viewer.public()):
        state = tournament_state(tournament=game16.refresh(), viewer=viewer, now=timezone.now())
        assert state["meetings"] == []
        assert not any(a["in_battle"] for a in state["armies"])
