"""The judges of a tournament and their API keys, as services (referees/services/judges.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from referees.kernel.access import judge_key_user
from referees.kernel.core import Actor, TournamentError
from referees.models import JudgeKey, LogEntry, Tournament
from referees.services.judges import (
    judge_add,
    judge_invite,
    judge_key_issue,
    judge_key_revoke,
    judge_link_renew,
    judge_remove,
    tournament_judges,
    welcome_link_user,
)
from sl5r.api_errors import error_status
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


@pytest.fixture
def game(make_game: Callable[..., Game]) -> Game:
    return make_game(16, phase="setup")


def _log(game: Game, action: str) -> list[LogEntry]:
    return list(LogEntry.objects.filter(tournament=game.tournament, action=action))


def _names(game: Game) -> list[str]:
    return [u.get_username() for u in tournament_judges(tournament=game.refresh())]


# --- Adding an existing account ----------------------------------------------------------------


def test_judge_add_makes_an_existing_account_a_judge_and_logs_it(
    game: Game, other_user: AbstractBaseUser
) -> None:
    judge_add(
        tournament_id=game.id, username=" bystander ", actor=game.judge_actor, now=timezone.now()
    )
    assert _names(game) == ["bystander", "judge"]
    (line,) = _log(game, "judge_added")
    assert line.actor == "judge judge"
    assert line.data == {"judge": "bystander", "user": other_user.pk}


def test_judge_add_finds_an_account_typed_in_another_case_or_full_width(
    game: Game, other_user: AbstractBaseUser
) -> None:
    added = judge_add(
        tournament_id=game.id,
        username="ＢＹＳＴＡＮＤＥＲ",
        actor=game.judge_actor,
        now=timezone.now(),
    )
    assert added == other_user
    assert _names(game) == ["bystander", "judge"]


def test_judge_add_refuses_an_unknown_name_naming_it(game: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_add(
            tournament_id=game.id, username="nobody", actor=game.judge_actor, now=timezone.now()
        )
    assert error_status(refused.value) == 404
    assert '"nobody"' in refused.value.message
    assert _names(game) == ["judge"]
    assert not _log(game, "judge_added")


def test_judge_add_refuses_a_judge_already_there(game: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_add(
            tournament_id=game.id, username="judge", actor=game.judge_actor, now=timezone.now()
        )
    assert (error_status(refused.value), refused.value.code) == (409, "already_judge")


def test_judge_add_refuses_a_disabled_account(game: Game, other_user: AbstractBaseUser) -> None:
    other_user.is_active = False
    other_user.save()
    with pytest.raises(TournamentError) as refused:
        judge_add(
            tournament_id=game.id, username="bystander", actor=game.judge_actor, now=timezone.now()
        )
    assert refused.value.code == "inactive"


def test_judge_add_refuses_an_empty_name(game: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_add(tournament_id=game.id, username="  ", actor=game.judge_actor, now=timezone.now())
    assert refused.value.message.startswith("username:")


def test_judge_add_refuses_an_unknown_tournament(other_user: AbstractBaseUser) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_add(
            tournament_id=999,
            username="bystander",
            actor=Actor.of_user(other_user),
            now=timezone.now(),
        )
    assert error_status(refused.value) == 404


# --- Inviting a new judge ----------------------------------------------------------------------


def test_judge_invite_makes_an_account_without_password_and_a_working_link(game: Game) -> None:
    invitation = judge_invite(
        tournament_id=game.id, username="second", actor=game.judge_actor, now=timezone.now()
    )
    user = invitation.user
    assert user.is_active and not user.has_usable_password()
    assert _names(game) == ["judge", "second"]
    assert invitation.path == f"/accounts/welcome/{invitation.uidb64}/{invitation.token}/"
    assert welcome_link_user(uidb64=invitation.uidb64, token=invitation.token) == user


def test_judge_invite_logs_the_name_and_never_the_link(game: Game) -> None:
    invitation = judge_invite(
        tournament_id=game.id, username="second", actor=game.judge_actor, now=timezone.now()
    )
    (line,) = _log(game, "judge_invited")
    assert line.data == {"judge": "second", "user": invitation.user.pk}
    everything = json.dumps([e.data for e in LogEntry.objects.all()]) + "".join(
        e.reason for e in LogEntry.objects.all()
    )
    assert invitation.token not in everything


@pytest.mark.parametrize("name", ["judge", "JUDGE"])
def test_judge_invite_refuses_a_name_taken_in_any_case(game: Game, name: str) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_invite(
            tournament_id=game.id, username=name, actor=game.judge_actor, now=timezone.now()
        )
    assert (error_status(refused.value), refused.value.code) == (409, "username_taken")
    assert _names(game) == ["judge"]


@pytest.mark.parametrize("name", ["", "has space", "x" * 151, "semi;colon"])
def test_judge_invite_refuses_a_name_that_is_not_a_user_name(game: Game, name: str) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_invite(
            tournament_id=game.id, username=name, actor=game.judge_actor, now=timezone.now()
        )
    assert error_status(refused.value) == 400
    assert refused.value.message.startswith("username:")
    assert not _log(game, "judge_invited")


def test_a_forged_or_mangled_link_names_nobody(game: Game) -> None:
    invitation = judge_invite(
        tournament_id=game.id, username="second", actor=game.judge_actor, now=timezone.now()
    )
    assert welcome_link_user(uidb64=invitation.uidb64, token=invitation.token + "x") is None
    assert welcome_link_user(uidb64="!!", token=invitation.token) is None
    assert welcome_link_user(uidb64="OTk5OTk", token=invitation.token) is None


def test_the_link_dies_once_the_account_has_a_password(game: Game) -> None:
    invitation = judge_invite(
        tournament_id=game.id, username="second", actor=game.judge_actor, now=timezone.now()
    )
    invitation.user.set_password("a-good-long-password-1")
    invitation.user.save()
    assert welcome_link_user(uidb64=invitation.uidb64, token=invitation.token) is None


def test_judge_link_renew_gives_a_pending_judge_a_new_link(game: Game) -> None:
    invited = judge_invite(
        tournament_id=game.id, username="second", actor=game.judge_actor, now=timezone.now()
    )
    renewed = judge_link_renew(
        tournament_id=game.id, user_id=invited.user.pk, actor=game.judge_actor, now=timezone.now()
    )
    assert welcome_link_user(uidb64=renewed.uidb64, token=renewed.token) == invited.user
    # The lost link is dead, even one made within the same second as the new one.
    assert renewed.token != invited.token
    assert welcome_link_user(uidb64=invited.uidb64, token=invited.token) is None
    (line,) = _log(game, "judge_link_renewed")
    assert line.data == {"judge": "second", "user": invited.user.pk}


def test_judge_link_renew_refuses_an_account_with_a_password(game: Game) -> None:
    # A judge may not make himself a way into another judge's account.
    with pytest.raises(TournamentError) as refused:
        judge_link_renew(
            tournament_id=game.id, user_id=game.judge.pk, actor=game.judge_actor, now=timezone.now()
        )
    assert refused.value.code == "has_password"


def test_a_pending_judge_cannot_be_added_to_another_tournament(
    game: Game, rival_tournament: Tournament, other_user: AbstractBaseUser
) -> None:
    # given: the judge invites a newcomer, who has not opened his link yet
    judge_invite(
        tournament_id=game.id, username="newcomer", actor=game.judge_actor, now=timezone.now()
    )

    # when: the judge of another tournament adds the same name to his
    with pytest.raises(TournamentError) as refused:
        judge_add(
            tournament_id=rival_tournament.pk,
            username="newcomer",
            actor=Actor.of_user(other_user),
            now=timezone.now(),
        )

    # then: refused, and the newcomer judges only the tournament that invited him
    assert refused.value.code == "invitation_pending"
    assert error_status(refused.value) == 409
    assert "has not signed in with his invitation yet" in str(refused.value)
    assert not rival_tournament.judges.filter(username="newcomer").exists()


def test_no_link_is_made_for_a_passwordless_account_that_judges_elsewhere(
    game: Game, rival_tournament: Tournament, other_user: AbstractBaseUser
) -> None:
    # given: a passwordless account judging two tournaments (made so in the admin)
    invited = judge_invite(
        tournament_id=game.id, username="newcomer", actor=game.judge_actor, now=timezone.now()
    )
    rival_tournament.judges.add(invited.user)

    # then: neither tournament's judges may hand out a link for him
    for tournament_id, actor in (
        (rival_tournament.pk, Actor.of_user(other_user)),
        (game.id, game.judge_actor),
    ):
        with pytest.raises(TournamentError) as refused:
            judge_link_renew(
                tournament_id=tournament_id,
                user_id=invited.user.pk,
                actor=actor,
                now=timezone.now(),
            )
        assert refused.value.code == "judges_elsewhere"
        assert error_status(refused.value) == 403
    assert not LogEntry.objects.filter(action="judge_link_renewed").exists()
    # and the link the invitee was given still works
    assert welcome_link_user(uidb64=invited.uidb64, token=invited.token) == invited.user


def test_an_account_with_a_password_added_elsewhere_gives_the_adder_no_link(
    game: Game, rival_tournament: Tournament, other_user: AbstractBaseUser
) -> None:
    judge_add(
        tournament_id=rival_tournament.pk,
        username="judge",
        actor=Actor.of_user(other_user),
        now=timezone.now(),
    )
    with pytest.raises(TournamentError) as refused:
        judge_link_renew(
            tournament_id=rival_tournament.pk,
            user_id=game.judge.pk,
            actor=Actor.of_user(other_user),
            now=timezone.now(),
        )
    assert refused.value.code in {"has_password", "judges_elsewhere"}


# --- Removing ----------------------------------------------------------------------------------


def test_judge_remove_takes_a_judge_off_and_logs_it(
    game: Game, other_user: AbstractBaseUser
) -> None:
    now = timezone.now()
    judge_add(tournament_id=game.id, username="bystander", actor=game.judge_actor, now=now)
    judge_remove(tournament_id=game.id, user_id=other_user.pk, actor=game.judge_actor, now=now)
    assert _names(game) == ["judge"]
    (line,) = _log(game, "judge_removed")
    assert line.data == {"judge": "bystander", "user": other_user.pk}


def test_judge_remove_never_takes_the_last_judge(game: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_remove(
            tournament_id=game.id, user_id=game.judge.pk, actor=game.judge_actor, now=timezone.now()
        )
    assert (error_status(refused.value), refused.value.code) == (409, "last_judge")
    assert _names(game) == ["judge"]
    assert not _log(game, "judge_removed")


def test_judge_remove_refuses_someone_who_is_not_a_judge(
    game: Game, other_user: AbstractBaseUser
) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_remove(
            tournament_id=game.id, user_id=other_user.pk, actor=game.judge_actor, now=timezone.now()
        )
    assert error_status(refused.value) == 404


# --- API keys ----------------------------------------------------------------------------------


def test_judge_key_issue_makes_a_working_key_and_logs_it_without_the_key(game: Game) -> None:
    issued = judge_key_issue(
        user=game.judge,
        tournament_id=game.id,
        label=" laptop ",
        actor=game.judge_actor,
        now=timezone.now(),
    )
    assert judge_key_user(issued.key) == game.judge
    assert issued.judge_key.label == "laptop"
    (line,) = _log(game, "judge_key_created")
    assert line.data == {"key_id": issued.judge_key.pk, "label": "laptop"}
    assert issued.key not in json.dumps([e.data for e in LogEntry.objects.all()])


def test_judge_key_issue_refuses_a_label_too_long(game: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_key_issue(
            user=game.judge,
            tournament_id=game.id,
            label="x" * 121,
            actor=game.judge_actor,
            now=timezone.now(),
        )
    assert refused.value.message.startswith("label:")
    assert not JudgeKey.objects.exists()


def test_judge_key_revoke_stops_the_key_at_once(game: Game, api: Api) -> None:
    now = timezone.now()
    issued = judge_key_issue(
        user=game.judge, tournament_id=game.id, label="", actor=game.judge_actor, now=now
    )
    assert api.get(f"/tournaments/{game.id}/state", token=issued.key).status_code == 200
    judge_key_revoke(
        user=game.judge,
        key_id=issued.judge_key.pk,
        tournament_id=game.id,
        actor=game.judge_actor,
        now=now,
    )
    assert judge_key_user(issued.key) is None
    answer = api.get(f"/tournaments/{game.id}/state", token=issued.key)
    assert answer.status_code == 401
    (line,) = _log(game, "judge_key_revoked")
    assert line.data == {"key_id": issued.judge_key.pk, "label": ""}


def test_judge_key_revoke_refuses_a_key_twice(game: Game) -> None:
    now = timezone.now()
    issued = judge_key_issue(
        user=game.judge, tournament_id=game.id, label="", actor=game.judge_actor, now=now
    )
    kwargs: dict[str, Any] = {
        "user": game.judge,
        "key_id": issued.judge_key.pk,
        "tournament_id": game.id,
        "actor": game.judge_actor,
        "now": now,
    }
    judge_key_revoke(**kwargs)
    with pytest.raises(TournamentError) as refused:
        judge_key_revoke(**kwargs)
    assert (error_status(refused.value), refused.value.code) == (409, "revoked")


def test_judge_key_revoke_refuses_another_users_key(
    game: Game, other_user: AbstractBaseUser
) -> None:
    now = timezone.now()
    issued = judge_key_issue(
        user=other_user, tournament_id=game.id, label="", actor=game.judge_actor, now=now
    )
    with pytest.raises(TournamentError) as refused:
        judge_key_revoke(
            user=game.judge,
            key_id=issued.judge_key.pk,
            tournament_id=game.id,
            actor=game.judge_actor,
            now=now,
        )
    assert error_status(refused.value) == 404
    assert judge_key_user(issued.key) == other_user
