"""A new judge's one-time sign-in link: choose a password once, then sign in with it."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.shortcuts import resolve_url
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees.services.judges import JudgeInvitation, judge_invite
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

NEW_PASSWORD = "lantern-harbour-77"


@pytest.fixture
def game(make_game: Callable[..., Game]) -> Game:
    return make_game(16, phase="setup")


@pytest.fixture
def invitation(game: Game) -> JudgeInvitation:
    return judge_invite(
        tournament_id=game.id, username="second", actor=game.judge_actor, now=timezone.now()
    )


def _set_password_url(invitation: JudgeInvitation) -> str:
    return reverse("judge_welcome", kwargs={"uidb64": invitation.uidb64, "token": "set-password"})


def _choose_password(client: Client, invitation: JudgeInvitation) -> None:
    opened = client.get(invitation.path)
    assert opened.status_code == 302
    assert opened["Location"] == _set_password_url(invitation)
    chosen = client.post(
        _set_password_url(invitation),
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert chosen.status_code == 302, chosen.content.decode()
    assert chosen["Location"] == resolve_url(settings.LOGIN_REDIRECT_URL)


def test_the_link_leads_to_a_password_form_without_the_token_in_the_address(
    client: Client, invitation: JudgeInvitation
) -> None:
    opened = client.get(invitation.path, follow=True)
    assert opened.status_code == 200
    assert opened.redirect_chain == [(_set_password_url(invitation), 302)]
    page = opened.content.decode()
    assert "second" in page
    assert 'name="new_password1"' in page
    assert invitation.token not in page
    assert "no-store" in opened["Cache-Control"] or "max-age=0" in opened["Cache-Control"]


def test_choosing_a_password_signs_the_new_judge_in_and_he_can_open_the_console(
    client: Client, game: Game, invitation: JudgeInvitation
) -> None:
    _choose_password(client, invitation)
    user = get_user_model().objects.get(username="second")
    assert user.check_password(NEW_PASSWORD)
    assert int(client.session["_auth_user_id"]) == user.pk
    assert client.get(reverse("referees:judge", args=[game.id])).status_code == 200


def test_the_link_works_once_a_second_use_is_refused_with_410(
    client: Client, invitation: JudgeInvitation
) -> None:
    _choose_password(client, invitation)
    again = Client().get(invitation.path)
    assert again.status_code == 410
    assert "ask a judge" in again.content.decode().lower()


def test_merely_opening_the_link_does_not_spend_it(invitation: JudgeInvitation) -> None:
    # A chat app's link preview fetches the page; the new judge must still get in after it.
    assert Client().get(invitation.path).status_code == 302
    _choose_password(Client(), invitation)


@pytest.mark.parametrize(
    "path",
    [
        "/accounts/welcome/Mg/not-a-token/",
        "/accounts/welcome/!!!/abc-def/",
        "/accounts/welcome/OTk5OTk5/abc-def/",
        "/accounts/welcome/Mg/set-password/",
        # An id too large for the database, and bytes that are no text.
        "/accounts/welcome/OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5OTk5/abc-def/",
        "/accounts/welcome/__4/abc-def/",
    ],
)
def test_a_forged_link_is_refused_with_410_not_500(client: Client, path: str) -> None:
    answer = client.get(path)
    assert answer.status_code == 410
    assert "not valid" in answer.content.decode()


def test_a_forged_token_for_a_real_account_is_refused(
    client: Client, invitation: JudgeInvitation
) -> None:
    # One character changed: a token that already ends in "0" must not be sent back as it is.
    last = "1" if invitation.token.endswith("0") else "0"
    answer = client.get(f"/accounts/welcome/{invitation.uidb64}/{invitation.token[:-1]}{last}/")
    assert answer.status_code == 410


def test_the_password_form_without_having_opened_the_link_is_refused(
    invitation: JudgeInvitation,
) -> None:
    answer = Client().post(
        _set_password_url(invitation),
        {"new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert answer.status_code == 410
    assert not get_user_model().objects.get(username="second").has_usable_password()


def test_a_weak_password_is_refused_and_the_link_still_works(
    client: Client, invitation: JudgeInvitation
) -> None:
    client.get(invitation.path)
    answer = client.post(
        _set_password_url(invitation), {"new_password1": "123", "new_password2": "123"}
    )
    assert answer.status_code == 200
    assert "_auth_user_id" not in client.session
    _choose_password(Client(), invitation)


def test_a_disabled_accounts_link_signs_nobody_in(
    client: Client, invitation: JudgeInvitation
) -> None:
    get_user_model().objects.filter(pk=invitation.user.pk).update(is_active=False)
    assert client.get(invitation.path).status_code == 410


def test_after_choosing_a_password_he_signs_in_with_it_on_the_sign_in_page(
    invitation: JudgeInvitation,
) -> None:
    _choose_password(Client(), invitation)
    browser = Client()
    answer = browser.post(
        reverse(settings.LOGIN_URL), {"username": "second", "password": NEW_PASSWORD}
    )
    assert answer.status_code == 302
    assert int(browser.session["_auth_user_id"]) == invitation.user.pk
