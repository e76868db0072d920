"""The page where a clan declares its starting positions (R3.1-R3.2), and the refusals in
the reader's language."""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable

import pytest
from django.test import Client
from django.utils import timezone
from django.utils.translation import override

from referees import services
from referees.models import Player
from referees.texts.words import start_problem_text
from sl5r.rules.mapgraph import rokugan_map
from sl5r.rules.roles import StartProblem, starting_positions_check, starting_positions_problems
from tests.referees.conftest import Api, Game, declare_all

pytestmark = pytest.mark.django_db

CRAB_CASTLES = ("crab-hida", "crab-kaiu")  # the bundled map's castle homes of the Crab
CRAB_PLAIN = ("crab-hiruma", "crab-yasuki")


def join(client: Client, game: Game, player: Player) -> None:
    assert client.get(f"/join/{game.token(player)}").status_code == 302


def positions_url(game: Game) -> str:
    return f"/referees/tournaments/{game.id}/positions/"


def text_of(response: object) -> str:
    return html.unescape(response.content.decode())  # type: ignore[attr-defined]


@pytest.fixture
def game32(make_game: Callable[..., Game]) -> Game:
    """32 players (R1: three Generals and a Daimyo per clan), clan planning under way."""
    return make_game(32, phase="planning")


# --- Who may open the page (R3.1) --------------------------------------------------------------


def test_r3_1_the_daimyo_opens_his_clans_positions_page(client: Client, game32: Game) -> None:
    join(client, game32, game32.player("crab", "daimyo"))

    response = client.get(positions_url(game32))

    assert response.status_code == 200
    page = text_of(response)
    for code in ("crab-1", "crab-2", "crab-3"):
        assert f'id="position-{code}"' in page
    # R3.2: the castle home provinces are offered first, each named with its castle.
    options = re.findall(r'<option value="(crab-[a-z]+)"', page)
    assert options[:6] == [*CRAB_CASTLES, *CRAB_PLAIN, *CRAB_CASTLES][:6]
    assert "Hida Lands (castle)" in page
    assert 'id="declare-button"' in page
    assert "Not declared yet" in page


def test_r3_1_a_general_of_a_clan_without_daimyo_declares_for_it(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(16, phase="planning")
    join(client, game, game.player("lion", "general", 2))

    response = client.get(positions_url(game))

    assert response.status_code == 200
    assert 'id="position-lion-1"' in text_of(response)


def test_r3_1_a_general_under_a_daimyo_is_told_who_declares(client: Client, game32: Game) -> None:
    join(client, game32, game32.player("crab", "general"))

    response = client.get(positions_url(game32))

    assert response.status_code == 403
    page = text_of(response)
    daimyo = game32.player("crab", "daimyo")
    assert f"{daimyo.name}, the Daimyo of the Crab, declares" in page
    assert 'id="positions-form"' not in page
    assert f'href="/referees/tournaments/{game32.id}/general/"' in page


def test_r3_1_a_karo_is_told_who_declares(client: Client, make_game: Callable[..., Game]) -> None:
    game = make_game(40, phase="planning")
    join(client, game, game.player("crane", "karo"))

    response = client.get(positions_url(game))

    assert response.status_code == 403
    assert "the Daimyo of the Crane, declares" in text_of(response)


def test_an_anonymous_device_gets_the_not_joined_page(client: Client, game32: Game) -> None:
    response = client.get(positions_url(game32))

    assert response.status_code == 403
    assert "You have not joined" in text_of(response)


def test_a_player_of_another_tournament_may_not_open_it(
    client: Client, game32: Game, make_game: Callable[..., Game]
) -> None:
    other = make_game(16, phase="planning", name="Other")
    join(client, other, other.player("crab"))

    response = client.get(positions_url(game32))

    assert response.status_code == 403
    assert "Not your tournament" in text_of(response)


# --- Declaring from the page's session (the API the script calls) ------------------------------


def declare(client: Client, game: Game, clan: str, positions: dict[str, str]) -> object:
    return Api(client).put(f"/tournaments/{game.id}/positions/{clan}", {"positions": positions})


def test_r3_2_the_daimyo_declares_castles_first(client: Client, game32: Game) -> None:
    join(client, game32, game32.player("crab", "daimyo"))
    positions = {"crab-1": "crab-kaiu", "crab-2": "crab-hida", "crab-3": "crab-yasuki"}

    response = declare(client, game32, "crab", positions)

    assert response.status_code == 200  # type: ignore[attr-defined]
    assert {code: game32.province_of(code) for code in positions} == positions
    page = text_of(client.get(positions_url(game32)))
    assert "Declared: Kaiu Lands" in page
    assert re.search(r'<option value="crab-yasuki" selected>', page)


def test_r3_2_a_plain_province_before_a_castle_is_refused_with_the_reason(
    client: Client, game32: Game
) -> None:
    join(client, game32, game32.player("crab", "daimyo"))

    response = declare(
        client,
        game32,
        "crab",
        {"crab-1": "crab-hiruma", "crab-2": "crab-hida", "crab-3": "crab-yasuki"},
    )

    assert response.status_code == 400  # type: ignore[attr-defined]
    body = response.json()  # type: ignore[attr-defined]
    assert body["code"] == "positions"
    assert "castle provinces first: Kaiu Lands must be used" in body["detail"]
    assert "crab-1" not in game32.board().get("armies", {})


def test_r3_2_the_refusal_names_the_army_whose_province_is_wrong(
    client: Client, game32: Game
) -> None:
    join(client, game32, game32.player("crab", "daimyo"))

    response = declare(
        client,
        game32,
        "crab",
        {"crab-1": "crab-hida", "crab-2": "crab-kaiu", "crab-3": "lion-akodo"},
    )

    assert response.status_code == 400  # type: ignore[attr-defined]
    assert "crab-3: Akodo Lands is not a home province of the Crab" in response.json()["detail"]  # type: ignore[attr-defined]


def test_r3_2_the_refusal_is_in_the_readers_language(client: Client, game32: Game) -> None:
    """Worded in referees from the engine's codes: the catalog translates it (Russian once
    ``make messages`` has run; until then the English msgid)."""
    join(client, game32, game32.player("crab", "daimyo"))

    response = Api(client).put(
        f"/tournaments/{game32.id}/positions/crab",
        {"positions": {"crab-1": "crab-hiruma", "crab-2": "crab-hida", "crab-3": "crab-yasuki"}},
        headers={"Accept-Language": "ru"},
    )

    assert response.status_code == 400
    with override("ru"):
        expected = start_problem_text(
            rokugan_map(), "crab", StartProblem("castles_first", provinces=("crab-kaiu",))
        )
    assert expected in response.json()["detail"]


def test_a_general_under_a_daimyo_may_not_declare_from_his_session(
    client: Client, game32: Game
) -> None:
    join(client, game32, game32.player("crab", "general"))

    response = declare(
        client,
        game32,
        "crab",
        {"crab-1": "crab-kaiu", "crab-2": "crab-hida", "crab-3": "crab-yasuki"},
    )

    assert response.status_code == 403  # type: ignore[attr-defined]


# --- After deployment the positions are fixed ---------------------------------------------------


def test_r3_the_page_says_the_positions_are_fixed_once_negotiation_begins(
    client: Client, make_game: Callable[..., Game]
) -> None:
    game = make_game(32, phase="negotiation")
    join(client, game, game.player("crab", "daimyo"))

    response = client.get(positions_url(game))

    assert response.status_code == 200
    page = text_of(response)
    assert "The starting positions are fixed" in page
    assert re.search(r'<select id="position-crab-1"[^>]* disabled', page)
    assert re.search(r'id="declare-button" hidden', page)
    assert "Declared: Hida Lands" in page


def test_r3_a_declaration_after_deployment_is_refused(client: Client, game32: Game) -> None:
    services.tournament_advance(
        tournament_id=game32.id, actor=game32.judge_actor, now=timezone.now()
    )
    assert game32.refresh().phase == "deployment"
    join(client, game32, game32.player("crab", "daimyo"))
    assert "declare now" in text_of(client.get(positions_url(game32)))
    declare_all(game32.tournament, game32.judge_actor, timezone.now())
    assert game32.refresh().phase == "negotiation"

    response = declare(
        client,
        game32,
        "crab",
        {"crab-1": "crab-kaiu", "crab-2": "crab-hida", "crab-3": "crab-yasuki"},
    )

    assert response.status_code == 409  # type: ignore[attr-defined]
    assert "The starting positions are fixed" in text_of(client.get(positions_url(game32)))


# --- The engine's problems as data (R3.2), its English unchanged -------------------------------


def test_r3_2_problems_come_as_codes_with_their_provinces() -> None:
    problems = starting_positions_problems(
        rokugan_map(), "crab", ["crab-hiruma", "crab-hiruma", "lion-akodo", "nowhere"]
    )

    assert [(p.code, p.index, p.province) for p in problems[:3]] == [
        ("same_province", 1, "crab-hiruma"),
        ("not_home", 2, "lion-akodo"),
        ("unknown_province", 3, "nowhere"),
    ]
    assert problems[-1] == StartProblem("castles_first", provinces=CRAB_CASTLES)


def test_r3_2_the_english_check_says_what_it_always_said() -> None:
    problems = starting_positions_check(rokugan_map(), "crab", ["crab-hida", "crab-yasuki"])

    assert problems == [
        "castle provinces first: Kaiu Lands must be used before a province without a castle"
    ]


# --- The judge sees which clans have declared (R3.1) -------------------------------------------


def test_r3_1_the_judges_console_lists_which_clans_have_declared(
    client: Client, game32: Game
) -> None:
    services.start_positions_declare(
        tournament_id=game32.id,
        clan="crab",
        positions={"crab-1": "crab-kaiu", "crab-2": "crab-hida", "crab-3": "crab-yasuki"},
        actor=game32.judge_actor,
        now=timezone.now(),
    )
    client.force_login(game32.judge)

    response = client.get(f"/referees/tournaments/{game32.id}/judge/")

    assert response.status_code == 200
    page = text_of(response)
    assert 'id="declared-clans"' in page
    state = json.loads(re.search(r'id="initial-state"[^>]*>(.*?)</script>', page, re.S)[1])  # type: ignore[index]
    assert state["declared_clans"]["crab"] is True
    assert state["declared_clans"]["crane"] is False
