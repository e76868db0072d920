"""The join link page, the printable sheet of links, and ``createjudgekey``."""

from __future__ import annotations

import io
from collections.abc import Callable

import pytest
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.management import CommandError, call_command
from django.test import Client, override_settings
from django.utils import timezone

from referees import services
from referees.kernel.access import judge_key_user
from referees.models import JudgeKey
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def test_join_link_logs_in_and_shows_who_you_are(client: Client, game16: Game) -> None:
    general = game16.player("crab")

    response = client.get(f"/join/{game16.token(general)}", follow=True)

    assert response.redirect_chain == [
        ("/referees/me/", 302),
        (f"/referees/tournaments/{game16.id}/general/", 302),
    ]
    assert response.status_code == 200
    page = response.content.decode()
    assert "Crab general 1" in page
    assert "General of the Crab" in page
    assert "crab-1" in page


def test_join_link_starts_a_fresh_session(client: Client, game16: Game) -> None:
    """The session key changes on joining (no session fixation)."""
    client.get("/referees/me/")
    before = client.session.session_key

    client.get(f"/join/{game16.token(game16.player('crab'))}")

    assert client.session.session_key != before


def test_invalid_join_link_is_a_clear_403_page(client: Client, game16: Game) -> None:
    response = client.get("/join/1:forged:token")

    assert response.status_code == 403
    assert "This join link does not work" in response.content.decode()
    assert "ask a judge" in response.content.decode().lower()


def test_revoked_join_link_is_refused(client: Client, game16: Game) -> None:
    general = game16.player("crab")
    token = game16.token(general)
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())

    response = client.get(f"/join/{token}")

    assert response.status_code == 403


def test_revoking_logs_the_page_out_too(client: Client, game16: Game) -> None:
    general = game16.player("crab")
    client.get(f"/join/{game16.token(general)}")
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())

    response = client.get("/referees/me/")

    assert response.status_code == 403
    assert "You have not joined" in response.content.decode()


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"joins": "2/min"})
def test_join_links_are_rate_limited_per_address(client: Client, game16: Game) -> None:
    client.get("/join/forged-1")
    client.get("/join/forged-2")

    response = client.get(f"/join/{game16.token(game16.player('crab'))}")

    assert response.status_code == 429
    assert "too many failed join attempts" in response.content.decode()


def test_me_without_joining_is_403(client: Client, db: None) -> None:
    assert client.get("/referees/me/").status_code == 403


# --- The printable sheet ---------------------------------------------------------------------


def test_judge_prints_one_card_per_player(client: Client, game16: Game) -> None:
    client.force_login(game16.judge)

    response = client.get(f"/referees/tournaments/{game16.id}/join-sheet")

    assert response.status_code == 200
    page = response.content.decode()
    assert page.count('class="join-card"') == 16
    assert page.count("<svg") == 16
    # the print layout is in a static stylesheet (the CSP allows no inline style)
    assert "css/join_sheet.css" in page
    stylesheet = settings.BASE_DIR / "static" / "css" / "join_sheet.css"
    assert "@media print" in stylesheet.read_text(encoding="utf-8")
    token = game16.token(game16.player("crab"))
    assert f"http://testserver/join/{token}" in page


def test_sheet_marks_revoked_links(client: Client, game16: Game) -> None:
    general = game16.player("crab")
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())
    client.force_login(game16.judge)

    page = client.get(f"/referees/tournaments/{game16.id}/join-sheet").content.decode()

    assert page.count("<svg") == 15
    assert "Join link revoked" in page


def test_sheet_is_for_judges_only(
    client: Client, game16: Game, other_user: AbstractBaseUser
) -> None:
    client.force_login(other_user)

    assert client.get(f"/referees/tournaments/{game16.id}/join-sheet").status_code == 403


def test_sheet_sends_strangers_to_sign_in(client: Client, game16: Game) -> None:
    response = client.get(f"/referees/tournaments/{game16.id}/join-sheet")

    assert response.status_code == 302
    assert "/accounts/sign-in/" in response["Location"]


def test_sheet_of_an_unknown_tournament_is_404(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    client.force_login(judge_user)

    assert client.get("/referees/tournaments/999/join-sheet").status_code == 404


# --- createjudgekey --------------------------------------------------------------------------


def test_createjudgekey_prints_a_working_key_once(
    api: Api, make_game: Callable[..., Game], judge_user: AbstractBaseUser
) -> None:
    game = make_game(16)
    out, err = io.StringIO(), io.StringIO()

    call_command("createjudgekey", "judge", "--label", "laptop", stdout=out, stderr=err)

    key = out.getvalue().strip()
    assert key.startswith("sl5rj_")
    assert "laptop" in err.getvalue()
    stored = JudgeKey.objects.get()
    assert stored.label == "laptop"
    assert key not in stored.key_hash
    assert judge_key_user(key) == judge_user
    assert api.get(f"/tournaments/{game.id}/log", token=key).status_code == 200


def test_createjudgekey_refuses_an_unknown_user(db: None) -> None:
    with pytest.raises(CommandError, match="nobody"):
        call_command("createjudgekey", "nobody")
