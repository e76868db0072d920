"""Announcements (POST /api/tournaments/{id}/announcements) and the history of scores."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.models import Announcement, LogEntry
from referees.reading.history import score_history
from referees.reading.messages import LATEST_ANNOUNCEMENTS
from referees.reading.state import tournament_state
from referees.services import TournamentError
from sl5r.api_errors import error_status
from strategic_map.models import Turn
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def post(api: Api, game: Game, text: str, **kwargs: object):  # type: ignore[no-untyped-def]
    return api.post(f"/tournaments/{game.id}/announcements", {"text": text}, **kwargs)


def public_state(api: Api, game: Game) -> dict:  # type: ignore[type-arg]
    response = api.get(f"/tournaments/{game.id}/state")
    assert response.status_code == 200, response.content
    return response.json()  # type: ignore[no-any-return]


# --- Posting -------------------------------------------------------------------------------------


def test_a_judge_posts_an_announcement_everyone_reads_it(
    api: Api, game16: Game, judge_key: str
) -> None:
    # given a running tournament
    version = game16.tournament.campaign.version

    # when its judge posts an announcement
    response = post(api, game16, "  Lunch at 13:00 in the hall  ", token=judge_key)

    # then it is stored, trimmed, and in the public state with its time
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["text"] == "Lunch at 13:00 in the hall"
    assert body["author"] == "judge judge"
    state = public_state(api, game16)
    assert [a["text"] for a in state["announcements"]] == ["Lunch at 13:00 in the hall"]
    assert state["announcements"][0]["at"]
    assert "author" not in state["announcements"][0]
    assert state["tournament"]["version"] > version


def test_an_announcement_is_logged_with_its_author(api: Api, game16: Game, judge_key: str) -> None:
    post(api, game16, "Turn 3 starts late", token=judge_key)

    entry = LogEntry.objects.filter(tournament=game16.tournament, action="announcement").get()
    assert entry.actor == "judge judge"
    assert entry.data["text"] == "Turn 3 starts late"
    assert entry.turn == 1
    assert entry.data["announcement"] == Announcement.objects.get().pk


def test_a_judges_browser_session_posts_with_the_csrf_header(game16: Game) -> None:
    """The console posts with the session cookie and X-CSRFToken from GET /api/csrf."""
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(game16.judge)
    api = Api(browser)
    path = f"/tournaments/{game16.id}/announcements"

    refused = api.post(path, {"text": "no token"})
    token = api.get("/csrf").json()["csrf_token"]
    accepted = api.post(path, {"text": "with token"}, headers={"X-CSRFToken": token})

    assert refused.status_code == 403
    assert accepted.status_code == 201, accepted.content
    assert list(Announcement.objects.values_list("text", flat=True)) == ["with token"]


def test_only_a_judge_may_post(api: Api, client: Client, game16: Game, other_user) -> None:  # type: ignore[no-untyped-def]
    general = game16.player("crab")

    as_player = post(api, game16, "I am the judge now", token=game16.token(general))
    client.force_login(other_user)
    as_stranger = post(api, game16, "Me too")
    client.logout()
    anonymous = post(api, game16, "And me")

    assert as_player.status_code == 403
    assert as_player.json()["code"] == "forbidden"
    assert as_stranger.status_code == 403
    assert anonymous.status_code in (401, 403)
    assert not Announcement.objects.exists()


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_announcement_is_refused_with_422(
    api: Api, game16: Game, judge_key: str, text: str
) -> None:
    response = post(api, game16, text, token=judge_key)

    assert response.status_code == 422, response.content
    assert response.json()["detail"].startswith("text:")
    assert not Announcement.objects.exists()
    assert not LogEntry.objects.filter(action="announcement").exists()


def test_a_too_long_announcement_is_refused(game16: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        services.announcement_post(
            tournament_id=game16.id,
            text="x" * (services.MAX_ANNOUNCEMENT + 1),
            actor=game16.judge_actor,
            now=timezone.now(),
        )
    assert error_status(refused.value) == 422


def test_the_state_holds_the_latest_five_newest_first(game16: Game) -> None:
    start = timezone.now()
    for n in range(7):
        services.announcement_post(
            tournament_id=game16.id,
            text=f"message {n}",
            actor=game16.judge_actor,
            now=start + timezone.timedelta(seconds=n),
        )

    state = tournament_state(
        tournament=game16.refresh(), viewer=Viewer.public(), now=timezone.now()
    )

    assert [a["text"] for a in state["announcements"]] == [
        f"message {n}" for n in range(6, 6 - LATEST_ANNOUNCEMENTS, -1)
    ]


def test_announcements_reach_players_under_a_daimyo_too(
    api: Api, game24: Game, judge_key: str
) -> None:
    post(api, game24, "Battles resume at 15:00", token=judge_key)
    general = game24.player("lion")

    state = api.get(f"/tournaments/{game24.id}/state", token=game24.token(general)).json()

    assert [a["text"] for a in state["announcements"]] == ["Battles resume at 15:00"]


# --- The history of scores --------------------------------------------------------------------


def resolve(game: Game, turns: int) -> None:
    for _ in range(turns):
        services.clock_resolve_now(
            tournament_id=game.id, actor=game.judge_actor, now=timezone.now()
        )


def test_score_history_after_two_resolved_turns(make_game: Callable[..., Game]) -> None:
    # given a game in which the Crab take an unaligned province in turn 1
    game = make_game(16)
    crab = game.player("crab").army.code
    province = game.province_of(crab)
    services.order_enter(
        tournament_id=game.id,
        army_code=crab,
        order=services.OrderInput(kind="move", path=("shinomen-mori",)),
        actor=game.judge_actor,
        now=timezone.now(),
    )
    assert province == "crab-hida"  # shinomen-mori (unaligned) is next to it

    # when two turns are resolved
    resolve(game, 2)

    # then the history has the start and both turns, as the turns' results say
    history = score_history(tournament=game.refresh())
    assert [h["turn"] for h in history] == [0, 1, 2]
    results = {
        t.number: t.result["scores"]
        for t in Turn.objects.filter(campaign=game.tournament.campaign, status="resolved")
    }
    assert history[1]["scores"] == results[1]
    assert history[2]["scores"] == results[2]
    assert history[0]["scores"]["crab"] == history[1]["scores"]["crab"] - 1
    assert set(history[0]["scores"]) == set(results[1])


def test_score_history_leaves_out_an_undone_turn(game16: Game) -> None:
    resolve(game16, 2)
    services.clock_undo(
        tournament_id=game16.id, actor=game16.judge_actor, now=timezone.now(), reason="test"
    )

    assert [h["turn"] for h in score_history(tournament=game16.refresh())] == [0, 1]


def test_judges_see_the_score_history_always_the_public_at_the_end(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(24)  # R1.1: a Daimyo in every clan, so the public sees no board
    resolve(game, 2)

    judge_during = api.get(f"/tournaments/{game.id}/state", token=judge_key).json()
    public_during = public_state(api, game)
    services.clock_end(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())
    public_after = public_state(api, game)

    assert [h["turn"] for h in judge_during["score_history"]] == [0, 1, 2]
    assert "score_history" not in public_during
    assert "scores" not in public_during
    assert [h["turn"] for h in public_after["score_history"]] == [0, 1, 2]
    assert public_after["scores"]


def test_r1_1_where_no_clan_has_a_daimyo_the_public_sees_the_points_so_far(
    api: Api, game16: Game, judge_key: str
) -> None:
    resolve(game16, 2)

    judge_during = api.get(f"/tournaments/{game16.id}/state", token=judge_key).json()
    public_during = public_state(api, game16)

    assert public_during["scores"] == judge_during["scores"]
    assert [h["turn"] for h in public_during["score_history"]] == [0, 1, 2]
