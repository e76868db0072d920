"""``/api/tournaments/{id}/judges``: the judges page's services, for scripts."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client

from referees.kernel.access import judge_key_create
from referees.models import LogEntry, Tournament
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


@pytest.fixture
def game(make_game: Callable[..., Game]) -> Game:
    return make_game(16, phase="setup")


def _path(game: Game, rest: str = "") -> str:
    return f"/tournaments/{game.id}/judges{rest}"


def test_a_judge_lists_adds_and_removes_judges(
    api: Api, game: Game, judge_key: str, other_user: AbstractBaseUser
) -> None:
    listed = api.get(_path(game), token=judge_key)
    assert listed.status_code == 200
    assert [j["username"] for j in listed.json()] == ["judge"]

    added = api.post(_path(game), {"username": "bystander"}, token=judge_key)
    assert added.status_code == 201
    assert added.json() == {
        "id": other_user.pk,
        "username": "bystander",
        "pending": False,
        "sign_in_url": None,
    }

    removed = api.delete(_path(game, f"/{other_user.pk}"), token=judge_key)
    assert removed.status_code == 200
    assert [j["username"] for j in removed.json()] == ["judge"]
    actions = LogEntry.objects.filter(tournament=game.tournament, action__startswith="judge_")
    assert [e.action for e in actions.order_by("id")] == ["judge_added", "judge_removed"]


def test_an_invitation_answers_its_link_once_and_it_signs_the_new_judge_in(
    api: Api, game: Game, judge_key: str
) -> None:
    invited = api.post(_path(game), {"username": "second", "invite": True}, token=judge_key)
    assert invited.status_code == 201
    body = invited.json()
    assert body["pending"] is True
    assert body["sign_in_url"].startswith("http://testserver/accounts/welcome/")
    listed = api.get(_path(game), token=judge_key).json()
    assert all(j["sign_in_url"] is None for j in listed)
    opened = Client().get(body["sign_in_url"].removeprefix("http://testserver"))
    assert opened.status_code == 302


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"username": "ghost"}, 404, "not_found"),
        ({"username": "judge"}, 409, "already_judge"),
        ({"username": "judge", "invite": True}, 409, "username_taken"),
        ({"username": "has space", "invite": True}, 400, "username"),
    ],
)
def test_a_refused_addition_says_why(
    api: Api, game: Game, judge_key: str, payload: dict[str, object], status: int, code: str
) -> None:
    answer = api.post(_path(game), payload, token=judge_key)
    assert answer.status_code == status
    assert answer.json()["code"] == code
    assert answer.json()["detail"].startswith("username:")


def test_the_last_judge_is_never_removed(api: Api, game: Game, judge_key: str) -> None:
    answer = api.delete(_path(game, f"/{game.judge.pk}"), token=judge_key)
    assert answer.status_code == 409
    assert answer.json()["code"] == "last_judge"


def test_someone_who_is_not_a_judge_may_do_none_of_it(
    api: Api, game: Game, other_user: AbstractBaseUser
) -> None:
    key = judge_key_create(user=other_user).key
    assert api.get(_path(game), token=key).status_code == 403
    assert api.post(_path(game), {"username": "bystander"}, token=key).status_code == 403
    assert api.delete(_path(game, f"/{game.judge.pk}"), token=key).status_code == 403
    assert api.get(_path(game)).status_code == 401
    assert list(game.refresh().judges.values_list("username", flat=True)) == ["judge"]


def test_a_judge_cannot_take_in_another_tournaments_invited_judge(
    api: Api,
    game: Game,
    judge_key: str,
    other_user: AbstractBaseUser,
    rival_tournament: Tournament,
) -> None:
    """Issue 29: a judge of one tournament added another's pending invitee to his own and
    then made himself a sign-in link for him."""
    # given: this tournament's judge invites a newcomer
    invited = api.post(_path(game), {"username": "newcomer", "invite": True}, token=judge_key)
    assert invited.status_code == 201

    # when: the judge of another tournament adds the same name to his
    rival_key = judge_key_create(user=other_user, label="rival").key
    answer = api.post(
        f"/tournaments/{rival_tournament.pk}/judges", {"username": "newcomer"}, token=rival_key
    )

    # then
    assert answer.status_code == 409
    assert answer.json()["code"] == "invitation_pending"
    assert answer.json()["detail"].startswith('username: "newcomer" has not signed in')
    assert not rival_tournament.judges.filter(username="newcomer").exists()
    opened = Client().get(invited.json()["sign_in_url"].removeprefix("http://testserver"))
    assert opened.status_code == 302
