"""The judges page: judges added, invited and removed, API keys made and revoked, by forms."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees.kernel.access import judge_key_user
from referees.models import JudgeKey, LogEntry, Tournament
from referees.services.judges import judge_add, judge_key_issue, tournament_judges
from tests.referees.conftest import JUDGE_PASSWORD, Api, Game

pytestmark = pytest.mark.django_db


@pytest.fixture
def game(make_game: Callable[..., Game]) -> Game:
    return make_game(16, phase="setup")


@pytest.fixture
def judge_client(client: Client, game: Game) -> Client:
    assert client.login(username="judge", password=JUDGE_PASSWORD)
    return client


def _url(name: str, game: Game, *args: Any) -> str:
    return reverse(f"referees:{name}", args=[game.id, *args])


def _ask(name: str, game: Game, pk: int) -> str:
    """The address of a removal's or a revocation's "are you sure" page."""
    return f"{_url(name, game)}?{'key' if name == 'judge_key_revoke' else 'judge'}={pk}"


def _names(game: Game) -> list[str]:
    return [u.get_username() for u in tournament_judges(tournament=game.refresh())]


def test_the_page_lists_the_judges_and_offers_the_forms(judge_client: Client, game: Game) -> None:
    page = judge_client.get(_url("judges", game))
    assert page.status_code == 200
    html = page.content.decode()
    assert 'id="judge-add-form"' in html
    assert 'id="judge-invite-form"' in html
    assert 'id="key-create-form"' in html
    assert "judge" in html
    # The only judge cannot be removed: no button for it.
    assert _ask("judge_remove", game, game.judge.pk) not in html


def test_the_page_sends_a_signed_out_visitor_to_the_sign_in_page(
    client: Client, game: Game
) -> None:
    answer = client.get(_url("judges", game))
    assert answer.status_code == 302
    assert answer["Location"].startswith(reverse("sign_in"))


def test_a_signed_in_non_judge_is_refused_everything_with_403(
    client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    issued = judge_key_issue(
        user=other_user, tournament_id=game.id, label="", actor=game.judge_actor, now=timezone.now()
    )
    assert client.login(username="bystander", password="bystander-password-1")
    before = LogEntry.objects.count()
    attempts = [
        ("get", _url("judges", game), {}),
        ("post", _url("judge_add", game), {"add-username": "bystander"}),
        ("post", _url("judge_invite", game), {"invite-username": "intruder"}),
        ("get", _ask("judge_remove", game, game.judge.pk), {}),
        ("post", _url("judge_remove", game), {"judge": game.judge.pk}),
        ("post", _url("judge_link", game), {"judge": game.judge.pk}),
        ("post", _url("judge_key_create", game), {"key-label": "x"}),
        ("get", _ask("judge_key_revoke", game, issued.judge_key.pk), {}),
        ("post", _url("judge_key_revoke", game), {"key": issued.judge_key.pk}),
    ]
    for method, url, data in attempts:
        answer = getattr(client, method)(url, data)
        assert answer.status_code == 403, url
    assert _names(game) == ["judge"]
    assert LogEntry.objects.count() == before
    assert judge_key_user(issued.key) == other_user
    assert not JudgeKey.objects.filter(user=other_user).exclude(pk=issued.judge_key.pk).exists()


def test_adding_an_existing_account_by_name(
    judge_client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    answer = judge_client.post(_url("judge_add", game), {"add-username": "bystander"}, follow=True)
    assert answer.redirect_chain == [(_url("judges", game), 302)]
    assert "bystander is now a judge" in answer.content.decode()
    assert _names(game) == ["bystander", "judge"]


def test_adding_an_unknown_name_says_which_and_changes_nothing(
    judge_client: Client, game: Game
) -> None:
    answer = judge_client.post(_url("judge_add", game), {"add-username": "ghost"})
    assert answer.status_code == 404
    assert "there is no account &quot;ghost&quot;" in answer.content.decode()
    assert _names(game) == ["judge"]


def test_adding_an_empty_name_is_a_form_error(judge_client: Client, game: Game) -> None:
    answer = judge_client.post(_url("judge_add", game), {"add-username": ""})
    assert answer.status_code == 400
    assert "form-errors" in answer.content.decode()


def test_inviting_shows_the_link_once_on_the_venue_address_with_a_qr_code(
    judge_client: Client, game: Game, settings: Any
) -> None:
    settings.SL5R_SITE_URL = "http://192.168.1.20:8000"
    posted = judge_client.post(_url("judge_invite", game), {"invite-username": "second"})
    # Issue 30: the form redirects, so a reload or the back button never posts it again.
    assert posted.status_code == 302 and posted["Location"] == _url("judges", game)
    answer = judge_client.get(posted["Location"])
    assert answer.status_code == 200
    html = answer.content.decode()
    found = re.search(r'value="(http://192\.168\.1\.20:8000/accounts/welcome/[^"]+/)"', html)
    assert found, html
    assert "<svg" in html
    assert "no-store" in answer["Cache-Control"]
    assert _names(game) == ["judge", "second"]
    # Not on the page again.
    assert found.group(1) not in judge_client.get(_url("judges", game)).content.decode()
    # And the new judge gets in with it.
    newcomer = Client()
    path = found.group(1).removeprefix("http://192.168.1.20:8000")
    assert newcomer.get(path).status_code == 302


def test_inviting_a_taken_name_is_refused_on_the_page(judge_client: Client, game: Game) -> None:
    answer = judge_client.post(_url("judge_invite", game), {"invite-username": "judge"})
    assert answer.status_code == 409
    assert "there is already an account" in answer.content.decode()


def test_a_pending_judge_can_get_a_new_link(judge_client: Client, game: Game) -> None:
    judge_client.post(_url("judge_invite", game), {"invite-username": "second"})
    second = next(u for u in tournament_judges(tournament=game.refresh()) if u.pk != game.judge.pk)
    html = judge_client.get(_url("judges", game)).content.decode()
    assert f'name="judge" value="{second.pk}"' in html
    answer = judge_client.post(_url("judge_link", game), {"judge": second.pk}, follow=True)
    assert answer.redirect_chain == [(_url("judges", game), 302)]
    assert "/accounts/welcome/" in answer.content.decode()
    assert "/accounts/welcome/" not in judge_client.get(_url("judges", game)).content.decode()


def test_removing_asks_first_then_removes(
    judge_client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    judge_add(
        tournament_id=game.id, username="bystander", actor=game.judge_actor, now=timezone.now()
    )
    page = judge_client.get(_url("judges", game)).content.decode()
    assert _ask("judge_remove", game, other_user.pk) in page
    asked = judge_client.get(_ask("judge_remove", game, other_user.pk))
    assert asked.status_code == 200
    assert "Remove bystander as a judge?" in asked.content.decode()
    assert _names(game) == ["bystander", "judge"]
    done = judge_client.post(_url("judge_remove", game), {"judge": other_user.pk})
    assert done.status_code == 302
    assert _names(game) == ["judge"]


def test_removing_the_last_judge_is_refused_on_the_page(judge_client: Client, game: Game) -> None:
    answer = judge_client.post(_url("judge_remove", game), {"judge": game.judge.pk})
    assert answer.status_code == 409
    assert "only judge" in answer.content.decode()
    assert _names(game) == ["judge"]


def test_a_judge_who_removes_himself_leaves_the_page(
    judge_client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    judge_add(
        tournament_id=game.id, username="bystander", actor=game.judge_actor, now=timezone.now()
    )
    answer = judge_client.post(_url("judge_remove", game), {"judge": game.judge.pk})
    assert answer.status_code == 302
    assert answer["Location"] != _url("judges", game)
    assert _names(game) == ["bystander"]
    assert judge_client.get(_url("judges", game)).status_code == 403


def test_removing_someone_who_is_not_a_judge_is_404(
    judge_client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    assert judge_client.get(_ask("judge_remove", game, other_user.pk)).status_code == 404
    assert (
        judge_client.post(_url("judge_remove", game), {"judge": other_user.pk}).status_code == 404
    )


@pytest.mark.parametrize("value", ["", "abc", "-1", "١٢", "9" * 40])
def test_a_removal_or_revocation_naming_no_number_is_400(
    judge_client: Client, game: Game, value: str
) -> None:
    for name, field in (("judge_remove", "judge"), ("judge_key_revoke", "key")):
        assert judge_client.get(_url(name, game), {field: value}).status_code == 400
        assert judge_client.post(_url(name, game), {field: value}).status_code == 400
    assert judge_client.post(_url("judge_link", game), {"judge": value}).status_code == 400


def test_the_console_shows_the_judges_and_links_to_their_page(
    judge_client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    judge_add(
        tournament_id=game.id, username="bystander", actor=game.judge_actor, now=timezone.now()
    )
    html = judge_client.get(_url("judge", game)).content.decode()
    assert re.search(r'id="judges-names">\s*bystander, judge\s*<', html)
    assert f'href="{_url("judges", game)}"' in html
    config = re.search(r'<script id="judge-config" type="application/json">(.*?)</script>', html)
    assert config
    actions = json.loads(config.group(1))["logActions"]
    for action in (
        "judge_added",
        "judge_invited",
        "judge_link_renewed",
        "judge_removed",
        "judge_key_created",
        "judge_key_revoked",
    ):
        assert actions[action] != action


def test_a_new_key_is_shown_once_with_its_header_and_revoked_after_asking(
    judge_client: Client, game: Game, api: Api
) -> None:
    made = judge_client.post(_url("judge_key_create", game), {"key-label": "laptop"}, follow=True)
    assert made.redirect_chain == [(_url("judges", game), 302)]
    html = made.content.decode()
    key = re.search(r"Authorization: Bearer (sl5rj_[\w-]+)", html)
    assert key, html
    assert "no-store" in made["Cache-Control"]
    listed = judge_client.get(_url("judges", game)).content.decode()
    assert key.group(1) not in listed
    assert "laptop" in listed
    assert api.get(f"/tournaments/{game.id}/state", token=key.group(1)).status_code == 200

    judge_key = JudgeKey.objects.get(user=game.judge, label="laptop")
    asked = judge_client.get(_ask("judge_key_revoke", game, judge_key.pk))
    assert asked.status_code == 200
    assert "Revoke API key" in asked.content.decode()
    assert (
        judge_client.post(_url("judge_key_revoke", game), {"key": judge_key.pk}).status_code == 302
    )
    assert api.get(f"/tournaments/{game.id}/state", token=key.group(1)).status_code == 401
    logged = LogEntry.objects.filter(tournament=game.tournament, action__startswith="judge_key")
    assert [e.action for e in logged.order_by("id")] == ["judge_key_created", "judge_key_revoked"]
    assert all(key.group(1) not in str(e.data) for e in logged)


def test_a_key_label_too_long_is_a_form_error(judge_client: Client, game: Game) -> None:
    answer = judge_client.post(_url("judge_key_create", game), {"key-label": "x" * 200})
    assert answer.status_code == 400
    assert not JudgeKey.objects.exists()


def test_another_users_key_cannot_be_revoked_here(
    judge_client: Client, game: Game, other_user: AbstractBaseUser
) -> None:
    issued = judge_key_issue(
        user=other_user, tournament_id=game.id, label="", actor=game.judge_actor, now=timezone.now()
    )
    assert (
        judge_client.post(_url("judge_key_revoke", game), {"key": issued.judge_key.pk}).status_code
        == 404
    )
    assert judge_key_user(issued.key) == other_user


def test_the_form_addresses_send_a_plain_visit_back_to_the_page(
    judge_client: Client, game: Game
) -> None:
    for name in ("judge_add", "judge_invite", "judge_key_create"):
        answer = judge_client.get(_url(name, game))
        assert answer.status_code == 302
        assert answer["Location"] == _url("judges", game)


def test_a_judge_cannot_take_in_another_tournaments_invited_judge_on_the_pages(
    judge_client: Client, game: Game, other_user: AbstractBaseUser, rival_tournament: Tournament
) -> None:
    """Issue 29, on the pages: adding the pending invitee is refused, and a link for a
    passwordless account that judges elsewhere (made so in the admin) is refused too."""
    # given: this tournament's judge invites a newcomer
    judge_client.post(_url("judge_invite", game), {"invite-username": "newcomer"})
    newcomer = next(
        u for u in tournament_judges(tournament=game.refresh()) if u.pk != game.judge.pk
    )
    rival = Client()
    rival.force_login(other_user)
    rival_url = reverse("referees:judge_add", args=[rival_tournament.pk])

    # when: the other tournament's judge adds him
    added = rival.post(rival_url, {"add-username": "newcomer"})

    # then
    assert added.status_code == 409
    assert "has not signed in with his invitation yet" in added.content.decode()
    assert not rival_tournament.judges.filter(pk=newcomer.pk).exists()

    # and when the account judges there anyway, no link is given on either side
    rival_tournament.judges.add(newcomer)
    link_url = reverse("referees:judge_link", args=[rival_tournament.pk])
    for client, url in ((rival, link_url), (judge_client, _url("judge_link", game))):
        answer = client.post(url, {"judge": newcomer.pk})
        assert answer.status_code == 403
        assert "/accounts/welcome/" not in answer.content.decode()
        assert "only a site administrator" in answer.content.decode()
