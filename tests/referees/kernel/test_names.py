"""One rule for every name a person types (referees/kernel/names.py; issue 29): normalised once
(NFKC, trimmed, spaces collapsed), invisible and control characters refused naming them,
uniqueness judged on the normalised, case-folded form, on every path that stores a name."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from referees.forms.roster import roster_lines
from referees.kernel.core import TournamentError
from referees.kernel.names import name_key, name_spaced, name_unseen_character
from referees.models import Player
from referees.services import roster
from referees.services.judges import judge_invite, judge_key_issue
from referees.services.players import player_rename
from sl5r.api_errors import error_status
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

UNSEEN = [
    pytest.param("Twin\x00X", "U+0000", id="nul"),
    pytest.param("Twin\x1bX", "U+001B", id="escape"),
    pytest.param("Twin\x01X", "U+0001", id="start-of-heading"),
    pytest.param("\ufeffTwin X", "U+FEFF (ZERO WIDTH NO-BREAK SPACE)", id="bom"),
    pytest.param("Twin\u200bX", "U+200B (ZERO WIDTH SPACE)", id="zero-width-space"),
    pytest.param("Twin\u202eX", "U+202E (RIGHT-TO-LEFT OVERRIDE)", id="bidi-override"),
    pytest.param("Twin\u3164X", "U+3164 (HANGUL FILLER)", id="hangul-filler"),
]


@pytest.fixture
def game(make_game: Callable[..., Game]) -> Game:
    return make_game(16, phase="setup")


def test_a_name_is_stored_in_nfkc_trimmed_with_one_space_between_words() -> None:
    assert name_spaced("  Ｔｗｉｎ\u00a0\t X  ") == "Twin X"
    assert name_key("Ёлка ＴＷＩＮ") == name_key("елка twin")
    assert name_unseen_character("Twin X") is None


@pytest.mark.parametrize(("name", "named"), UNSEEN)
def test_an_unseen_character_is_named(name: str, named: str) -> None:
    assert name_unseen_character(name) == named


@pytest.mark.parametrize(("name", "named"), UNSEEN)
def test_renaming_a_player_refuses_an_unseen_character_naming_it(
    game: Game, name: str, named: str
) -> None:
    player = game.player("crab")
    with pytest.raises(TournamentError) as refused:
        player_rename(
            tournament_id=game.id,
            player_id=player.pk,
            name=name,
            actor=game.judge_actor,
            now=timezone.now(),
        )
    assert refused.value.code == "invisible_character"
    assert error_status(refused.value) == 400
    assert named in str(refused.value)
    player.refresh_from_db()
    assert "Twin" not in player.name


def test_a_bom_on_a_later_pasted_line_is_a_problem_of_that_line(game: Game) -> None:
    lines = roster_lines("Twin X; lion; general\n\ufeffTwin X; crab; general")
    preview = roster.roster_preview(tournament=game.tournament, lines=lines)
    assert not preview.ok
    assert any(p.startswith("line 2: name: the character U+FEFF") for p in preview.problems)
    assert not any(p.startswith("line 1: name:") for p in preview.problems)


def test_a_csv_with_a_quote_left_open_names_its_line_and_merges_nobody() -> None:
    text = 'name,clan,role\n"Quote X,lion,general\nOther X,lion,general\n'
    with pytest.raises(TournamentError) as refused:
        roster_lines(text, csv_format=True)
    assert refused.value.code == "csv"
    assert str(refused.value).startswith("file: line 2: a quote")


def test_a_list_far_longer_than_a_tournament_is_refused_before_it_is_read() -> None:
    with pytest.raises(TournamentError) as refused:
        roster_lines("Player; crab; general\n" * 10_000)
    assert refused.value.code == "too_long"
    assert error_status(refused.value) == 413
    assert "at most 200 lines" in str(refused.value)


def test_a_list_of_exactly_the_most_lines_is_read() -> None:
    lines = roster_lines("".join(f"Player {n}; crab; general\n" for n in range(200)))
    assert len(lines) == 200


def test_the_api_refuses_a_nul_and_a_bom_twin_in_a_pasted_list(
    api: Api, game: Game, judge_key: str
) -> None:
    path = f"/tournaments/{game.id}/players/bulk"
    for text in ("Ctrl\x1bX; lion; general", "A; lion; general\n\ufeffA; lion; general"):
        answer = api.post(path, {"lines": text, "dry_run": False}, token=judge_key)
        assert answer.status_code in (400, 422), answer.content
        assert "U+" in answer.content.decode()
    names = set(Player.objects.filter(tournament=game.tournament).values_list("name", flat=True))
    assert not {"A", "Ctrl\x1bX", "CtrlX"} & names


def test_the_players_page_refuses_a_rename_with_an_escape(client: Client, game: Game) -> None:
    client.force_login(game.judge)
    player = game.player("crab")
    url = reverse("referees:player_edit", args=[game.id, player.pk])
    answer = client.post(url, {"action": "rename", "name": "Evil\x1bName"})
    assert answer.status_code == 400
    assert "U+001B" in answer.content.decode()
    player.refresh_from_db()
    assert "Evil" not in player.name


def test_a_full_width_twin_of_a_judge_name_is_taken_not_a_500(game: Game) -> None:
    for twin in ("ｊｕｄｇｅ", "ＪＵＤＧＥ"):
        with pytest.raises(TournamentError) as refused:
            judge_invite(
                tournament_id=game.id, username=twin, actor=game.judge_actor, now=timezone.now()
            )
        assert refused.value.code == "username_taken"
    assert get_user_model().objects.count() == 1


def test_the_api_answers_409_to_a_full_width_twin(api: Api, game: Game, judge_key: str) -> None:
    answer = api.post(
        f"/tournaments/{game.id}/judges",
        {"username": "ｊｕｄｇｅ", "invite": True},
        token=judge_key,
    )
    assert answer.status_code == 409
    assert answer.json()["code"] == "username_taken"


def test_a_key_label_and_a_tournament_name_refuse_unseen_characters(game: Game) -> None:
    with pytest.raises(TournamentError) as refused:
        judge_key_issue(
            user=game.judge,
            tournament_id=game.id,
            label="script\u200b",
            actor=game.judge_actor,
            now=timezone.now(),
        )
    assert refused.value.code == "invisible_character"
