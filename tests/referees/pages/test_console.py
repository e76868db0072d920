"""The judge console, the big screen and the history pages (referees/pages/console.py,
screen.py and history.py)."""

from __future__ import annotations

import json
import re
from datetime import datetime
from datetime import timezone as dt_timezone
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees import services
from referees.services import OrderInput
from strategic_map.models import Army
from tests.referees.conftest import MIXED_LINEUP, MIXED_PLAYERS, Game

pytestmark = pytest.mark.django_db


def url(name: str, game: Game) -> str:
    return reverse(f"referees:{name}", args=[game.id])


def army_codes(game: Game) -> list[str]:
    return list(
        Army.objects.filter(campaign=game.tournament.campaign).values_list("code", flat=True)
    )


def json_script(html: str, element_id: str) -> Any:
    found = re.search(
        rf'<script id="{element_id}" type="application/json">(.*?)</script>', html, re.S
    )
    assert found, f"no #{element_id} in the page"
    return json.loads(found.group(1))


def resolve(game: Game, turns: int = 1) -> None:
    for _ in range(turns):
        services.clock_resolve_now(
            tournament_id=game.id, actor=game.judge_actor, now=timezone.now()
        )


def crab_moves_out(game: Game) -> str:
    """The first Crab army moves from its castle into Shinomen Mori (unaligned)."""
    code = game.player("crab").army.code
    services.order_enter(
        tournament_id=game.id,
        army_code=code,
        order=OrderInput(kind="move", path=("shinomen-mori",)),
        actor=game.judge_actor,
        now=timezone.now(),
    )
    return code


# --- The judge console ------------------------------------------------------------------------


def test_the_console_opens_for_a_judge(client: Client, game16: Game) -> None:
    client.force_login(game16.judge)

    response = client.get(url("judge", game16))

    assert response.status_code == 200
    html = response.content.decode()
    assert game16.tournament.name in html
    assert 'src="/static/js/judge.js"' in html
    assert 'id="judge-map"' in html  # the drawn map
    config = json_script(html, "judge-config")
    assert config["api"] == f"/api/tournaments/{game16.id}"
    assert len(config["players"]) == 16
    assert all(p["join_url"] for p in config["players"])
    assert config["strings"]["paused"] == "Paused"
    state = json_script(html, "initial-state")
    assert state["viewer"]["kind"] == "judge"
    assert {a["id"] for a in state["armies"]} == set(army_codes(game16))
    assert reverse("referees:join_sheet", args=[game16.id]) in html


def test_the_console_refuses_a_user_who_is_not_its_judge(
    client: Client, game16: Game, other_user: Any
) -> None:
    client.force_login(other_user)

    response = client.get(url("judge", game16))

    assert response.status_code == 403
    assert "judge-config" not in response.content.decode()


def test_the_console_sends_an_anonymous_visitor_to_the_login(client: Client, game16: Game) -> None:
    response = client.get(url("judge", game16))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("sign_in"))
    assert "next=" in response["Location"]


def test_the_console_of_an_unknown_tournament_is_404(client: Client, game16: Game) -> None:
    client.force_login(game16.judge)

    response = client.get(reverse("referees:judge", args=[game16.id + 1000]))

    assert response.status_code == 404


def test_a_superuser_may_open_any_console(
    client: Client, game16: Game, django_user_model: Any
) -> None:
    admin = django_user_model.objects.create_superuser(username="root", password="pw-123456789")
    client.force_login(admin)

    assert client.get(url("judge", game16)).status_code == 200


def test_the_console_during_set_up_lists_the_players(client: Client, make_game: Any) -> None:
    game = make_game(16, phase="setup")
    client.force_login(game.judge)

    response = client.get(url("judge", game))

    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="register-form"' in html
    assert json_script(html, "initial-state")["tournament"]["clock"]["phase"] == "setup"


# --- The big screen ------------------------------------------------------------------------------


def test_the_screen_opens_for_anyone_and_shows_the_map_without_a_daimyo(
    client: Client, game16: Game
) -> None:
    response = client.get(url("screen", game16))

    assert response.status_code == 200
    html = response.content.decode()
    assert game16.tournament.name in html
    assert "Turn 1 of 14" in html
    assert 'id="screen-war-map"' in html
    state = json_script(html, "screen-state")
    assert state["viewer"]["kind"] == "public"
    assert state["viewer"]["sees_all_armies"] is True


@pytest.mark.parametrize(
    ("players", "lineup"),
    [(24, None), (MIXED_PLAYERS, MIXED_LINEUP)],
    ids=["daimyo-everywhere", "mixed"],
)
def test_the_screen_of_a_tournament_with_a_daimyo_holds_no_army(
    client: Client, make_game: Any, players: int, lineup: Any
) -> None:
    # given a tournament where a clan has a Daimyo, with orders and a played turn
    game = make_game(players, lineup=lineup)
    for code in army_codes(game):
        services.order_enter(
            tournament_id=game.id,
            army_code=code,
            order=OrderInput(kind="hold"),
            actor=game.judge_actor,
            now=timezone.now(),
        )
    resolve(game)

    # when anyone opens the big screen
    html = client.get(url("screen", game)).content.decode()

    # then no army id is anywhere in it, and no map is drawn
    codes = army_codes(game)
    assert codes
    assert [code for code in codes if code in html] == []
    assert 'id="screen-war-map"' not in html
    assert json_script(html, "screen-state")["viewer"]["sees_all_armies"] is False


def test_the_screen_at_the_end_shows_the_standings_and_the_score_history(
    client: Client, game16: Game
) -> None:
    # given a game of two turns, ended by the judge
    crab_moves_out(game16)
    resolve(game16, 2)
    services.clock_end(tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now())

    # when the screen is shown
    html = client.get(url("screen", game16)).content.decode()

    # then the standings break each clan's points down (R12): the Crane first (five home
    # provinces, three castles), then the Crab with the province it took
    state = json_script(html, "screen-state")
    assert [h["turn"] for h in state["score_history"]] == [0, 1, 2]
    crab = state["scores"]["crab"]
    assert crab == {"home_provinces": 4, "other_provinces": 1, "castles": 2, "total": 11}
    body = html.split('id="standings-body"', 1)[1].split("</tbody>", 1)[0]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    assert len(rows) == 8
    cells = [re.sub(r"<[^>]+>", " ", row).split() for row in rows]
    assert cells[0] == ["1", "Crane", "10", "0", "3", "13"]
    assert cells[1] == ["2", "Crab", "8", "1", "2", "11"]
    assert cells[2][0] == "3"  # the other six share the third place with 10 points each
    assert {row[0] for row in cells[2:]} == {"3"}
    assert "Final standings" in html
    assert 'id="screen-final"' in html and 'id="screen-final" hidden' not in html


def test_the_screen_shows_announcement_times_in_the_tournaments_time_zone(
    client: Client, make_game: Any
) -> None:
    game = make_game(16, time_zone="Asia/Tokyo")
    services.announcement_post(
        tournament_id=game.id,
        text="Dinner is served",
        actor=game.judge_actor,
        now=datetime(2030, 5, 1, 9, 30, tzinfo=dt_timezone.utc),
    )

    html = client.get(url("screen", game)).content.decode()

    assert "Dinner is served" in html
    assert ">18:30</time>" in html  # 09:30 UTC is 18:30 in Tokyo


def test_the_screen_escapes_announcements(client: Client, game16: Game) -> None:
    services.announcement_post(
        tournament_id=game16.id,
        text="<script>alert(1)</script>",
        actor=game16.judge_actor,
        now=timezone.now(),
    )

    html = client.get(url("screen", game16)).content.decode()

    assert "<script>alert(1)</script>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


# --- The history -------------------------------------------------------------------------------


def test_the_history_shows_a_judge_every_played_turn(client: Client, game16: Game) -> None:
    code = crab_moves_out(game16)
    resolve(game16, 2)
    client.force_login(game16.judge)

    first = client.get(url("history", game16) + "?turn=1")
    latest = client.get(url("history", game16))

    assert first.status_code == 200
    html = first.content.decode()
    assert "Turn 1 as played" in html
    assert code in html
    assert "Shinomen Mori" in html
    assert "moved" in html
    assert "judge judge" in html  # who entered the order
    assert 'href="?turn=2"' in html and 'id="next-turn"' in html
    assert 'id="previous-turn"' not in html
    assert 'id="history-war-map"' in html
    config = json_script(html, "history-config")
    assert {"army": code, "clan": "crab"}.items() <= config["state"]["orders"][0].items()
    assert latest.status_code == 200
    assert "Turn 2 as played" in latest.content.decode()
    assert 'id="previous-turn"' in latest.content.decode()


def test_the_history_before_any_turn_says_so(client: Client, game16: Game) -> None:
    client.force_login(game16.judge)

    response = client.get(url("history", game16))

    assert response.status_code == 200
    assert "No turn has been played yet." in response.content.decode()


def test_the_history_is_public_where_no_clan_has_a_daimyo(client: Client, game16: Game) -> None:
    crab_moves_out(game16)
    resolve(game16)

    response = client.get(url("history", game16))

    assert response.status_code == 200
    html = response.content.decode()
    assert "Turn 1 as played" in html
    assert "judge judge" not in html  # who entered orders is for judges


def test_the_history_under_a_daimyo_is_for_judges_only(
    client: Client, game24: Game, other_user: Any
) -> None:
    resolve(game24)

    anonymous = client.get(url("history", game24))
    client.force_login(other_user)
    stranger = client.get(url("history", game24))
    client.force_login(game24.judge)
    judge = client.get(url("history", game24))

    assert anonymous.status_code == 302
    assert anonymous["Location"].startswith(reverse("sign_in"))
    assert stranger.status_code == 403
    assert not any(code in stranger.content.decode() for code in army_codes(game24))
    assert judge.status_code == 200
    assert "Turn 1 as played" in judge.content.decode()


def test_after_end_the_game_every_page_says_after_which_turn_it_ended(
    client: Client, game16: Game
) -> None:
    """Issue 30: ended during turn 3, the big screen said "Turn 3", the home "3 / N" and
    the console "2 / N". Turn 2 was the last played: "Ended after turn 2" everywhere."""
    judge = game16.judge_actor
    for number in (1, 2):
        services.clock_resolve_now(
            tournament_id=game16.id, actor=judge, now=timezone.now(), turn=number
        )
    services.clock_end(tournament_id=game16.id, actor=judge, now=timezone.now())
    total = game16.refresh().turns_total
    words = f"Ended after turn 2 of {total}" if total else "Ended after turn 2"

    client.force_login(game16.judge)
    console = client.get(url("judge", game16)).content.decode()
    screen = client.get(url("screen", game16)).content.decode()
    home = client.get(reverse("home")).content.decode()
    state = json_script(console, "initial-state")

    assert f'<dd id="turn-label">{words}</dd>' in console
    assert f'<p class="screen-turn" id="screen-turn">{words}</p>' in screen
    assert f'<dd class="tournament-turn">{words}</dd>' in home
    assert state["tournament"]["ended_after_turn"] == 2
