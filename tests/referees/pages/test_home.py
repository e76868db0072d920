"""The judge's home (the tournaments he judges) and the public home (those under way, maps)."""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.urls import NoReverseMatch, reverse
from django.utils import timezone

from referees import services
from referees.models import LogEntry, Tournament
from referees.reading.homes import (
    RECENTLY_FINISHED,
    judged_tournaments,
    tournaments_finished_recently,
    tournaments_under_way,
)
from referees.services import Actor
from strategic_map.models import Map
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

JUDGE_HOME = "/referees/judge/"


def cards(html: str) -> dict[int, str]:
    """Each tournament card of a page by tournament id: its HTML."""
    return {
        int(found.group(1)): found.group(2)
        for found in re.finditer(
            r'<li class="tournament-card" data-tournament="(\d+)"[^>]*>(.*?)</li>', html, re.DOTALL
        )
    }


def section(html: str, title_id: str) -> str:
    found = re.search(
        rf'<section[^>]*aria-labelledby="{title_id}">(.*?)</section>', html, re.DOTALL
    )
    assert found, f"no section {title_id}"
    return found.group(1)


def other_judges_game(rokugan: Map, judge: AbstractBaseUser, name: str) -> Tournament:
    return services.tournament_create(
        name=name, judge=judge, game_map=rokugan, player_count=16, now=timezone.now()
    )


def finish(game: Game) -> None:
    services.clock_end(tournament_id=game.id, actor=Actor.of_user(game.judge), now=timezone.now())


# --- The judge's home ------------------------------------------------------------------------


def test_the_judge_home_sends_a_stranger_to_sign_in(client: Client, db: None) -> None:
    response = client.get(JUDGE_HOME)

    assert reverse("referees:judge_home") == JUDGE_HOME
    assert response.status_code == 302
    assert response["Location"] == f"{reverse('sign_in')}?next={JUDGE_HOME}"


def test_the_judge_home_lists_only_his_tournaments(
    client: Client,
    make_game: Callable[..., Game],
    rokugan: Map,
    other_user: AbstractBaseUser,
) -> None:
    mine = make_game(16, name="Winter Court", turns_total=12)
    theirs = other_judges_game(rokugan, other_user, "Someone else's")
    client.force_login(mine.judge)

    response = client.get(JUDGE_HOME)

    assert response.status_code == 200
    listed = cards(response.content.decode())
    assert list(listed) == [mine.id]
    assert theirs.pk not in listed
    card = listed[mine.id]
    assert "Winter Court" in card
    assert '<dd class="tournament-phase">turns</dd>' in card
    assert '<dd class="tournament-turn">1 / 12</dd>' in card
    assert '<dd class="tournament-players">16 / 16</dd>' in card


def test_each_tournament_links_to_its_console_screen_join_sheet_and_history(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="setup")
    client.force_login(game.judge)

    card = cards(client.get(JUDGE_HOME).content.decode())[game.id]

    for name in ("judge", "screen", "join_sheet", "history"):
        assert f'href="{reverse(f"referees:{name}", args=[game.id])}"' in card, name
    assert '<dd class="tournament-phase">setting up</dd>' in card
    assert re.search(r'<dd class="tournament-turn">0( / \d+)?</dd>', card)


def test_a_superuser_judges_every_tournament(
    client: Client,
    make_game: Callable[..., Game],
    rokugan: Map,
    other_user: AbstractBaseUser,
    django_user_model: Any,
) -> None:
    game = make_game(16, phase="setup")
    theirs = other_judges_game(rokugan, other_user, "Someone else's")
    admin = django_user_model.objects.create_superuser(username="root", password="root-pass-1")
    client.force_login(admin)

    listed = cards(client.get(JUDGE_HOME).content.decode())

    assert set(listed) == {game.id, theirs.pk}
    assert [row.id for row in judged_tournaments(user=admin)] == [theirs.pk, game.id]


def test_a_judge_of_nothing_is_told_so(client: Client, other_user: AbstractBaseUser) -> None:
    client.force_login(other_user)

    html = client.get(JUDGE_HOME).content.decode()

    assert cards(html) == {}
    assert "You judge no tournament yet." in html


def test_the_turn_counts_registrations_during_set_up(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="setup", lineup={"crab": ("general",), "lion": ("general",)})
    client.force_login(game.judge)

    card = cards(client.get(JUDGE_HOME).content.decode())[game.id]

    assert '<dd class="tournament-players">2 / 16</dd>' in card


def test_the_judge_home_leaves_room_for_a_new_tournament_button(
    client: Client, judge_user: AbstractBaseUser
) -> None:
    client.force_login(judge_user)

    html = client.get(JUDGE_HOME).content.decode()

    assert '<div class="home-actions">' in html
    try:
        new = reverse("referees:tournament_new")
    except NoReverseMatch:
        return  # the page is not there yet
    assert f'href="{new}"' in html


def test_the_judge_home_reads_a_fixed_number_of_queries(
    client: Client,
    make_game: Callable[..., Game],
    django_assert_max_num_queries: Any,
) -> None:
    first = make_game(16, phase="setup", name="One")
    client.force_login(first.judge)
    with django_assert_max_num_queries(8) as few:
        client.get(JUDGE_HOME)
    for name in ("Two", "Three", "Four"):
        make_game(16, phase="setup", name=name)

    with django_assert_max_num_queries(len(few.captured_queries)):
        response = client.get(JUDGE_HOME)

    assert len(cards(response.content.decode())) == 4


def test_the_judge_home_in_russian(client: Client, make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="setup")
    client.force_login(game.judge)

    response = client.get(JUDGE_HOME, headers={"accept-language": "ru"})

    assert response.status_code == 200
    html = response.content.decode()
    assert '<html lang="ru">' in html
    assert list(cards(html)) == [game.id]
    assert f'href="{reverse("referees:judge", args=[game.id])}"' in html


# --- The public home -------------------------------------------------------------------------


def test_the_public_home_lists_tournaments_under_way_not_those_being_set_up(
    client: Client, make_game: Callable[..., Game]
) -> None:
    running = make_game(16, name="Running one")
    planning = make_game(16, phase="planning", name="Planning one")
    setup = make_game(16, phase="setup", name="Set-up one")

    html = client.get(reverse("home")).content.decode()

    listed = cards(section(html, "under-way-title"))
    assert set(listed) == {running.id, planning.id}
    assert setup.id not in cards(html)
    assert "Set-up one" not in html
    for game in (running, planning):
        card = listed[game.id]
        assert f'href="{reverse("referees:screen", args=[game.id])}"' in card
        assert f'href="{reverse("referees:history", args=[game.id])}"' in card
        # The judges' pages are for judges: not offered to the public.
        assert reverse("referees:judge", args=[game.id]) not in card
        assert reverse("referees:join_sheet", args=[game.id]) not in card


def test_the_public_home_lists_lately_finished_tournaments_apart(
    client: Client, make_game: Callable[..., Game]
) -> None:
    running = make_game(16, name="Running one")
    finished = make_game(16, name="Finished one")
    finish(finished)

    html = client.get(reverse("home")).content.decode()

    assert set(cards(section(html, "under-way-title"))) == {running.id}
    later = cards(section(html, "finished-title"))
    assert set(later) == {finished.id}
    assert '<dd class="tournament-phase">finished</dd>' in later[finished.id]


def test_a_tournament_finished_long_ago_leaves_the_public_home(
    client: Client, make_game: Callable[..., Game]
) -> None:
    old = make_game(16, name="Old one")
    finish(old)
    long_ago = timezone.now() - RECENTLY_FINISHED - timedelta(days=1)
    LogEntry.objects.filter(tournament_id=old.id).update(at=long_ago)

    html = client.get(reverse("home")).content.decode()

    assert old.id not in cards(html)
    assert 'id="finished-title"' not in html
    assert tournaments_finished_recently(now=timezone.now()) == []
    # His judge still finds it at home.
    assert [row.id for row in judged_tournaments(user=old.judge)] == [old.id]


def test_the_public_home_says_when_nothing_is_under_way(client: Client, db: None) -> None:
    html = client.get(reverse("home")).content.decode()

    assert "No tournament is under way right now." in html
    assert tournaments_under_way() == []


def test_the_public_home_keeps_the_maps(client: Client, rokugan: Map) -> None:
    html = client.get(reverse("home")).content.decode()

    maps = section(html, "maps-title")
    assert f'href="{reverse("strategic_map:map", args=[rokugan.slug])}"' in maps


def test_the_public_home_in_russian(client: Client, make_game: Callable[..., Game]) -> None:
    running = make_game(16)

    response = client.get(reverse("home"), headers={"accept-language": "ru"})

    assert response.status_code == 200
    html = response.content.decode()
    assert '<html lang="ru">' in html
    assert list(cards(section(html, "under-way-title"))) == [running.id]


def test_a_tournament_ended_by_the_judge_says_after_which_turn(
    make_game: Callable[..., Game],
) -> None:
    # given turn 1 played and turn 2 open when the judge ends the game: turn 2 is not played
    game = make_game(16, turns_total=20)
    services.clock_resolve_now(tournament_id=game.id, actor=game.judge_actor, now=timezone.now())
    finish(game)

    (row,) = [r for r in judged_tournaments(user=game.judge) if r.id == game.id]

    # issue 30: one wording on every page, the last turn played
    assert row.turn == 1
    assert row.turn_words == "Ended after turn 1 of 20"
