"""A state read at an unchanged version costs what a cache hit costs (issue 42): one
statement for the tournament and the caller's link, checked on every read, so that a
revoked or replaced link is refused at the very next one."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from referees import services
from referees.kernel.visibility import Viewer
from referees.reading.state import tournament_state_kept
from tests.battles.conftest import general, meet
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def state_path(game: Game) -> str:
    return f"/tournaments/{game.id}/state"


def test_a_generals_state_read_at_an_unchanged_version_is_one_statement(
    api: Api, game16: Game
) -> None:
    general = game16.player("crab")
    token = game16.token(general)
    first = api.get(state_path(game16), token=token)
    assert first.status_code == 200
    with CaptureQueriesContext(connection) as queries:
        again = api.get(state_path(game16), token=token)
    assert again.status_code == 200
    assert again.json()["viewer"]["player"]["id"] == general.pk
    assert len(queries.captured_queries) == 1, [q["sql"][:80] for q in queries.captured_queries]


def test_the_publics_state_read_at_an_unchanged_version_is_one_statement(
    api: Api, game16: Game
) -> None:
    assert api.get(state_path(game16)).status_code == 200
    with CaptureQueriesContext(connection) as queries:
        assert api.get(state_path(game16)).status_code == 200
    assert len(queries.captured_queries) == 1


def test_a_revoked_link_is_refused_on_the_next_read_although_the_last_was_kept(
    api: Api, game16: Game
) -> None:
    general = game16.player("crab")
    token = game16.token(general)
    for _ in range(2):  # built, then kept
        assert api.get(state_path(game16), token=token).status_code == 200
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())

    response = api.get(state_path(game16), token=token)

    assert response.status_code == 401
    assert response.json()["code"] == "bad_token"


def test_a_replaced_link_is_refused_and_the_new_one_reads_at_once(api: Api, game16: Game) -> None:
    general = game16.player("crab")
    old = game16.token(general)
    assert api.get(state_path(game16), token=old).status_code == 200
    new = services.player_token_reissue(
        player=general, actor=game16.judge_actor, now=timezone.now()
    )

    assert api.get(state_path(game16), token=old).status_code == 401
    response = api.get(state_path(game16), token=new)
    assert response.status_code == 200
    assert response.json()["viewer"]["player"]["id"] == general.pk


def test_a_revoked_session_reads_the_public_view_and_is_logged_out(
    client: Client, game16: Game
) -> None:
    general = game16.player("crab")
    api = Api(client)
    api.post("/join", {"token": game16.token(general)})
    kept = api.get(state_path(game16)).json()
    assert kept["viewer"]["player"]["id"] == general.pk
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())

    response = api.get(state_path(game16))

    assert response.status_code == 200
    assert response.json()["viewer"].get("player") is None
    assert api.get("/me").json()["player"] is None


def test_a_link_of_another_tournament_reads_the_public_view(
    api: Api, game16: Game, make_game: object
) -> None:
    other = make_game()  # type: ignore[operator]
    token = other.token(other.player("crab"))
    response = api.get(state_path(game16), token=token)
    assert response.status_code == 200
    assert response.json()["viewer"].get("player") is None


def test_a_missing_tournament_is_404(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))
    response = api.get(f"/tournaments/{game16.id + 999}/state", token=token)
    assert response.status_code == 404


def test_a_kept_state_reads_as_the_checked_one_it_was_built_as(
    api: Api, game16: Game, judge_key: str
) -> None:
    """Issue 42: a kept view is written as it is, not checked against ``StateOut`` again on
    every read; for a judge, a General at a battle table and the public it is the same
    answer (type and JSON, but for the clock brought to now) as the checked one that built
    it."""
    meet(game16)  # a played turn and a table: the keys only some viewers get are there
    lion = general(game16, "lion-1")
    viewers = [
        (judge_key, Viewer.judge(label=f"judge {game16.judge.get_username()}")),
        (game16.token(lion), Viewer.of_player(lion)),
        (None, Viewer.public()),
    ]
    for token, viewer in viewers:
        cache.clear()
        built = api.get(state_path(game16), token=token)
        tournament = game16.refresh()
        assert tournament_state_kept(tournament=tournament, viewer=viewer, now=timezone.now())
        kept = api.get(state_path(game16), token=token)

        assert (built.status_code, kept.status_code) == (200, 200)
        assert kept["Content-Type"] == built["Content-Type"]
        built_state, kept_state = built.json(), kept.json()
        built_clock = built_state["tournament"].pop("clock")
        kept_clock = kept_state["tournament"].pop("clock")
        assert kept_state == built_state
        assert kept_clock.keys() == built_clock.keys()
