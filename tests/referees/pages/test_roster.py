"""The judges' player pages: many players at once (paste or CSV, preview, register) and one
player's page (rename, move, remove with a confirmation, replace with a new join link)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees import services
from referees.models import LogEntry, Player
from strategic_map.models import Army
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db


def add_url(game: Game) -> str:
    return reverse("referees:players_add", args=[game.id])


def edit_url(game: Game, player: Player) -> str:
    return reverse("referees:player_edit", args=[game.id, player.pk])


def count(game: Game) -> int:
    return Player.objects.filter(tournament=game.tournament).count()


def text(response: Any) -> str:
    return str(response.content.decode())


@pytest.fixture
def judge(client: Client, judge_user: AbstractBaseUser) -> Client:
    client.force_login(judge_user)
    return client


# --- Who may open them -----------------------------------------------------------------------


def test_anonymous_is_sent_to_sign_in_and_a_non_judge_is_refused(
    make_game: Callable[..., Game], client: Client, other_user: AbstractBaseUser
) -> None:
    game = make_game(16, phase="setup")
    player = game.player("crab")

    assert client.get(add_url(game)).status_code == 302
    client.force_login(other_user)
    for url in (add_url(game), edit_url(game, player)):
        response = client.get(url)
        assert response.status_code == 403
        assert "Only a judge of this tournament may manage its players." in text(response)
    response = client.post(edit_url(game, player), {"action": "rename", "name": "X"})
    assert response.status_code == 403
    assert Player.objects.get(pk=player.pk).name == player.name


def test_another_tournaments_player_is_not_found(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup")
    other = make_game(16, phase="setup", name="Other")

    assert judge.get(edit_url(game, other.players[0])).status_code == 404


# --- Many players at once --------------------------------------------------------------------


def test_add_page_shows_the_form_and_the_r1_line_up_with_what_is_left(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(20, phase="setup", lineup={"crab": ["general", "general", "daimyo"]})

    response = judge.get(add_url(game))

    assert response.status_code == 200
    page = text(response)
    assert 'name="lines"' in page and 'type="file"' in page
    assert "20 players: each clan has 2 Generals, 1 Daimyo." in page
    assert "4 clans, whichever, have one member fewer: 2 Generals (R1 b)." in page
    assert "3 of 20 registered" in page and "17 places left" in page
    assert "separated by semicolons" in page  # the rule for cells, on the page


def test_preview_shows_problems_per_line_offers_no_button_and_stores_nothing(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup", lineup={})

    response = judge.post(
        add_url(game),
        {"action": "preview", "lines": "Ivan; crab\nOleg; crab; daimyo\nAnna; Krab"},
        follow=True,
    )

    assert response.status_code == 200
    page = text(response)
    assert '<tr class="is-fine" id="roster-line-1">' in page
    assert '<tr class="has-problem" id="roster-line-2">' in page
    assert "R1 gives no clan a Daimyo" in page
    assert "unknown clan &quot;Krab&quot;" in page
    assert "2 lines have problems" in page
    assert 'id="roster-register-button"' not in page
    assert "Ivan; crab\nOleg; crab; daimyo" in page  # kept in the box to correct it
    assert count(game) == 0


def test_a_clean_preview_offers_to_register_and_the_button_registers_all(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup", lineup={})
    pasted = "\n".join(f"Player {i}" for i in range(1, 17))

    response = judge.post(add_url(game), {"action": "preview", "lines": pasted}, follow=True)

    page = text(response)
    assert "Register these 16 players" in page
    assert page.count(">proposed</span>") == 32
    assert count(game) == 0
    posted = response.context["text"]
    registered = judge.post(
        add_url(game), {"action": "register", "text": posted, "format": "lines"}
    )
    assert registered.status_code == 302
    assert registered["Location"] == reverse("referees:judge", args=[game.id])
    assert count(game) == 16
    console = judge.get(registered["Location"])
    assert "16 players registered." in text(console)
    # Issue 30: the preview was a page of its own (GET), so the back button from the
    # console shows it without posting anything again; and the list is no longer there.
    assert response.redirect_chain == [(f"{add_url(game)}?preview=1", 302)]
    back = judge.get(f"{add_url(game)}?preview=1")
    assert back.status_code == 200 and "Register these" not in text(back)
    assert count(game) == 16
    services.tournament_start(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())


def test_register_refused_when_the_list_no_longer_fits_shows_why_and_stores_nothing(
    make_game: Callable[..., Game], judge: Client
) -> None:
    """Previewed, then someone else registered a Crab General twice: the list is refused."""
    game = make_game(16, phase="setup", lineup={"crab": ["general", "general"]})

    response = judge.post(
        add_url(game), {"action": "register", "text": "Ivan; crab\nOleg", "format": "lines"}
    )

    assert response.status_code == 422
    page = text(response)
    assert "players: nothing was registered: line 1: " in page
    assert "the clan is full" in page
    assert count(game) == 2


def test_csv_upload_with_header_bom_and_russian_names_is_previewed_then_registered(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup", lineup={})
    content = "\ufeffимя;клан;роль\nИван;Краб;Генерал\nАнна;Журавль;\n".encode()
    upload = SimpleUploadedFile("players.csv", content, content_type="text/csv")

    response = judge.post(
        add_url(game), {"action": "preview", "lines": "", "file": upload}, follow=True
    )

    assert response.status_code == 200
    page = text(response)
    assert "From the file players.csv." in page
    assert '<tr class="is-fine" id="roster-line-2">' in page
    assert '<tr class="is-fine" id="roster-line-3">' in page
    assert response.context["format"] == "csv"
    judge.post(
        add_url(game),
        {"action": "register", "text": response.context["text"], "format": "csv"},
    )
    assert sorted(
        Player.objects.filter(tournament=game.tournament).values_list("name", "clan")
    ) == [("Анна", "crane"), ("Иван", "crab")]


def test_a_file_and_a_pasted_list_together_are_refused(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup", lineup={})
    upload = SimpleUploadedFile("p.csv", b"Ivan,crab,general\n", content_type="text/csv")

    response = judge.post(
        add_url(game), {"action": "preview", "lines": "Oleg", "file": upload}, follow=True
    )

    assert response.status_code == 400
    assert "not both" in text(response)
    assert count(game) == 0


def test_a_binary_upload_is_refused_with_a_message(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup", lineup={})
    upload = SimpleUploadedFile("p.xlsx", b"PK\x03\x04\x00\x00", content_type="application/zip")

    response = judge.post(add_url(game), {"action": "preview", "file": upload}, follow=True)

    assert response.status_code == 400
    assert "this is not a text file" in text(response)


def test_after_set_up_the_add_page_says_so_and_a_post_is_refused(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="planning")

    page = text(judge.get(add_url(game)))
    response = judge.post(add_url(game), {"action": "register", "text": "Ivan", "format": "lines"})

    assert 'id="roster-closed"' in page and 'id="roster-form"' not in page
    assert response.status_code == 409
    assert count(game) == 16


def test_the_console_links_to_the_add_page_and_to_each_players_page(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="setup")

    response = judge.get(reverse("referees:judge", args=[game.id]))

    page = text(response)
    assert f'href="{add_url(game)}"' in page
    assert "Add many players (paste or CSV)" in page
    config = json.loads(page.split('id="judge-config" type="application/json">')[1].split("<")[0])
    player = game.players[0]
    assert f"{config['playerPages']}{player.pk}/" == edit_url(game, player)


# --- One player ------------------------------------------------------------------------------


def test_player_page_shows_his_join_link_and_qr(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")

    page = text(judge.get(edit_url(game, player)))

    assert game.token(player) in page
    assert "<svg" in page
    assert 'id="replace-form"' in page and 'id="move-form"' not in page


def test_rename_from_the_page(make_game: Callable[..., Game], judge: Client) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")

    response = judge.post(edit_url(game, player), {"action": "rename", "name": "Ivan Petrov"})

    assert response.status_code == 302
    assert Player.objects.get(pk=player.pk).name == "Ivan Petrov"
    assert "Renamed: Ivan Petrov." in text(judge.get(edit_url(game, player)))


def test_a_refused_rename_shows_the_reason(make_game: Callable[..., Game], judge: Client) -> None:
    game = make_game(16, phase="setup")
    player, other = game.player("crab"), game.player("crane")

    response = judge.post(edit_url(game, player), {"action": "rename", "name": other.name})

    assert response.status_code == 400
    assert "is already registered" in text(response)


def test_move_from_the_page_and_r1_refusal(make_game: Callable[..., Game], judge: Client) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ["general", "general"]})
    player = game.player("crab", n=1)

    refused = judge.post(
        edit_url(game, player), {"action": "move", "clan": "crab", "role": "daimyo"}
    )
    moved = judge.post(
        edit_url(game, player), {"action": "move", "clan": "lion", "role": "general"}
    )

    assert refused.status_code == 400
    assert "R1 gives no clan a Daimyo" in text(refused)
    assert moved.status_code == 302
    again = Player.objects.select_related("army").get(pk=player.pk)
    assert again.clan == "lion" and again.army is not None and again.army.code == "lion-1"
    assert list(Army.objects.filter(clan="crab").values_list("code", flat=True)) == ["crab-1"]


def test_remove_asks_first_then_removes(make_game: Callable[..., Game], judge: Client) -> None:
    game = make_game(16, phase="setup")
    player = game.player("crab")

    asked = judge.post(edit_url(game, player), {"action": "remove"})

    assert asked.status_code == 200
    assert 'id="confirm-remove"' in text(asked)
    assert Player.objects.filter(pk=player.pk).exists()
    done = judge.post(edit_url(game, player), {"action": "remove", "confirmed": "yes"})
    assert done.status_code == 302
    assert done["Location"] == reverse("referees:judge", args=[game.id])
    assert not Player.objects.filter(pk=player.pk).exists()
    assert LogEntry.objects.filter(tournament=game.tournament, action="player_removed").exists()


def test_remove_after_the_start_is_refused_from_the_page(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")

    response = judge.post(edit_url(game, player), {"action": "remove", "confirmed": "yes"})

    assert response.status_code == 409
    assert Player.objects.filter(pk=player.pk).exists()


def test_replace_asks_first_then_shows_the_new_link_and_the_old_one_stops_working(
    make_game: Callable[..., Game], judge: Client
) -> None:
    game = make_game(16, phase="running")
    leaving = game.player("crab")
    old_token = game.token(leaving)

    asked = judge.post(edit_url(game, leaving), {"action": "replace", "name": " Newcomer "})
    assert asked.status_code == 200
    assert 'id="confirm-replace"' in text(asked)
    assert Player.objects.get(pk=leaving.pk).name == leaving.name
    assert services.player_from_token(old_token) is not None

    done = judge.post(
        edit_url(game, leaving), {"action": "replace", "name": "Newcomer", "confirmed": "yes"}
    )
    assert done.status_code == 302
    page = text(judge.get(done["Location"]))
    new_token = game.token(leaving)
    assert new_token != old_token and new_token in page
    assert "is replaced by Newcomer" in page
    assert services.player_from_token(old_token) is None
    assert Client().get(reverse("join", args=[old_token])).status_code == 403
    entry = LogEntry.objects.get(tournament=game.tournament, action="player_replaced")
    assert (entry.data["old_name"], entry.data["name"]) == (leaving.name, "Newcomer")


def test_replace_without_a_name_is_refused(make_game: Callable[..., Game], judge: Client) -> None:
    game = make_game(16, phase="running")
    player = game.player("crab")

    response = judge.post(edit_url(game, player), {"action": "replace", "name": "  "})

    assert response.status_code == 400
    assert "name: give the new player" in text(response)


def test_an_unknown_action_is_a_clear_400(make_game: Callable[..., Game], judge: Client) -> None:
    game = make_game(16, phase="setup")

    response = judge.post(edit_url(game, game.player("crab")), {"action": "explode"})

    assert response.status_code == 400


def test_the_pages_carry_no_inline_script_or_style(
    make_game: Callable[..., Game], judge: Client
) -> None:
    """The CSP allows scripts and styles from files only."""
    game = make_game(16, phase="setup", lineup={"crab": ["general"]})
    pages = [
        judge.get(add_url(game)),
        judge.post(
            add_url(game), {"action": "preview", "lines": "Ivan\nOleg; crab; daimyo"}, follow=True
        ),
        judge.get(edit_url(game, game.player("crab"))),
        judge.post(edit_url(game, game.player("crab")), {"action": "remove"}),
    ]

    for response in pages:
        page = text(response)
        assert re.search(r"\sstyle\s*=", page) is None
        assert "<style" not in page
        for script in re.findall(r"<script\b[^>]*>", page):
            assert "src=" in script or 'type="application/json"' in script, script
