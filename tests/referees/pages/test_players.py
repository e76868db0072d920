"""The players' pages: a General's orders page and the Daimyo's / Karo's clan page."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from django.conf import settings
from django.template.loader import render_to_string
from django.test import Client

from referees.models import Player
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.drawing import map_drawing
from strategic_map.models import Army
from tests.referees.conftest import KARO_LINEUP, KARO_PLAYERS, Game

pytestmark = pytest.mark.django_db

STATIC = Path(settings.BASE_DIR) / "static"
PAGE_SCRIPTS = ("js/general.js", "js/map.js", "js/players.js", "js/live.js")


def join(client: Client, game: Game, player: Player) -> None:
    response = client.get(f"/join/{game.token(player)}")
    assert response.status_code == 302


def general_url(game: Game) -> str:
    return f"/referees/tournaments/{game.id}/general/"


def clan_url(game: Game) -> str:
    return f"/referees/tournaments/{game.id}/clan/"


def other_army_codes(game: Game, own: str) -> list[str]:
    codes = Army.objects.filter(campaign=game.tournament.campaign).values_list("code", flat=True)
    return [code for code in codes if code != own]


def contains_code(text: str, code: str) -> bool:
    """``code`` as a whole token (``crab-1`` is not in ``crab-10``)."""
    return re.search(rf"(?<![\w-]){re.escape(code)}(?![\w-])", text) is not None


# --- /referees/me/ sends a joined player to his page -------------------------------------------


def test_me_sends_a_general_to_his_orders_page(client: Client, game24: Game) -> None:
    join(client, game24, game24.player("crab"))

    response = client.get("/referees/me/")

    assert response.status_code == 302
    assert response["Location"] == general_url(game24)


@pytest.mark.parametrize("role", ["daimyo", "karo"])
def test_me_sends_a_daimyo_or_karo_to_the_clan_page(
    client: Client, make_game: Callable[..., Game], role: str
) -> None:
    game = make_game(KARO_PLAYERS, lineup=KARO_LINEUP)
    join(client, game, game.player("crab", role))

    response = client.get("/referees/me/")

    assert response.status_code == 302
    assert response["Location"] == clan_url(game)


def test_the_join_link_ends_on_the_generals_page(client: Client, game16: Game) -> None:
    general = game16.player("lion")

    response = client.get(f"/join/{game16.token(general)}", follow=True)

    assert response.status_code == 200
    assert response.redirect_chain[-1] == (general_url(game16), 302)
    assert "Lion general 1" in response.content.decode()


# --- The General's page -----------------------------------------------------------------------


def test_a_general_gets_his_page(client: Client, game16: Game) -> None:
    general = game16.player("crab")
    join(client, game16, general)

    response = client.get(general_url(game16))

    assert response.status_code == 200
    page = response.content.decode()
    assert general.name in page
    assert 'data-army="crab-1"' in page
    assert f'data-tournament="{game16.id}"' in page
    assert 'class="war-map"' in page
    assert page.count("data-province=") >= 39
    assert "js/general.js" in page
    assert "css/map.css" in page
    assert 'id="page-strings"' in page
    assert "Hold" in page and "Send order" in page
    assert response["Cache-Control"].startswith("max-age=0")


def test_a_general_under_a_daimyo_gets_no_other_army_in_page_or_scripts(
    client: Client, game24: Game
) -> None:
    """R1.1: the page carries only his own army; the rest arrives from the state API."""
    general = game24.player("scorpion", n=2)
    own = general.army.code  # type: ignore[union-attr]
    join(client, game24, general)

    response = client.get(general_url(game24))

    assert response.status_code == 200
    page = response.content.decode()
    scripts = "\n".join((STATIC / name).read_text(encoding="utf-8") for name in PAGE_SCRIPTS)
    assert contains_code(page, own)
    others = other_army_codes(game24, own)
    assert len(others) == 15
    for code in others:
        assert not contains_code(page, code), code
        assert not contains_code(scripts, code), code
    # He decides no head-on clash: his clan has a Daimyo (R5.3).
    assert 'id="swap-choice"' not in page
    assert "he sees the war map" in page


def test_a_scorpion_general_without_a_daimyo_chooses_on_swap(client: Client, game16: Game) -> None:
    join(client, game16, game16.player("scorpion"))

    page = client.get(general_url(game16)).content.decode()

    assert 'id="swap-choice"' in page
    assert 'name="on_swap" value="stay"' in page
    assert 'data-decides-swap="true"' in page


def test_a_unicorn_general_page_knows_his_double_move(client: Client, game16: Game) -> None:
    join(client, game16, game16.player("unicorn"))

    page = client.get(general_url(game16)).content.decode()

    assert 'data-unicorn="true"' in page


def test_a_daimyo_on_the_generals_page_goes_to_the_clan_page(client: Client, game24: Game) -> None:
    join(client, game24, game24.player("crane", "daimyo"))

    response = client.get(general_url(game24))

    assert response.status_code == 302
    assert response["Location"] == clan_url(game24)


# --- The clan page ----------------------------------------------------------------------------


def test_a_daimyo_gets_the_clan_page(client: Client, game24: Game) -> None:
    daimyo = game24.player("scorpion", "daimyo")
    join(client, game24, daimyo)

    response = client.get(clan_url(game24))

    assert response.status_code == 200
    page = response.content.decode()
    assert daimyo.name in page
    assert "js/clan.js" in page
    assert 'class="war-map"' in page
    # His Generals with their armies, their orders column and the Scorpion's swap choice.
    for general in Player.objects.filter(tournament=game24.tournament, clan="scorpion"):
        if general.army:
            assert general.name in page
            assert f'<tr data-army="{general.army.code}">' in page
    assert "Order this turn" in page
    assert 'class="js-swap"' in page
    # A clan without a Karo: the Daimyo may write instructions (R1.1), not carried here yet.
    assert "Instructions to Generals" in page
    assert "you may send written instructions" in page
    # No other clan's army in the page.
    for code in Army.objects.filter(campaign=game24.tournament.campaign).exclude(clan="scorpion"):
        assert not contains_code(page, code.code)


def test_a_daimyo_with_a_karo_sends_no_written_instructions(
    client: Client, game_karo: Game
) -> None:
    join(client, game_karo, game_karo.player("crab", "daimyo"))

    page = client.get(clan_url(game_karo)).content.decode()

    assert "only spoken messages" in page
    assert "you may send written instructions" not in page
    assert 'class="js-swap"' not in page  # Crab: no Scorpion choice


def test_a_karo_gets_the_clan_page_without_orders(client: Client, game_karo: Game) -> None:
    join(client, game_karo, game_karo.player("crab", "karo"))

    response = client.get(clan_url(game_karo))

    assert response.status_code == 200
    page = response.content.decode()
    assert "As Karo you carry" in page
    assert "Order this turn" not in page  # the state gives a Karo no orders either
    assert 'id="show-orders"' not in page


def test_a_general_on_the_clan_page_goes_to_his_own_page(client: Client, game24: Game) -> None:
    join(client, game24, game24.player("lion"))

    response = client.get(clan_url(game24))

    assert response.status_code == 302
    assert response["Location"] == general_url(game24)


# --- Who may not --------------------------------------------------------------------------------


@pytest.mark.parametrize("page", [general_url, clan_url])
def test_anonymous_visitors_are_refused(
    client: Client, game16: Game, page: Callable[[Game], str]
) -> None:
    response = client.get(page(game16))

    assert response.status_code == 403
    assert "You have not joined" in response.content.decode()


@pytest.mark.parametrize("page", [general_url, clan_url])
def test_a_player_of_another_tournament_is_refused(
    client: Client, make_game: Callable[..., Game], page: Callable[[Game], str]
) -> None:
    first = make_game(16, name="First")
    second = make_game(24, name="Second")
    join(client, first, first.player("crab"))

    response = client.get(page(second))

    assert response.status_code == 403
    assert "Not your tournament" in response.content.decode()


def test_a_revoked_link_logs_the_page_out(client: Client, game16: Game) -> None:
    from django.utils import timezone

    from referees import services

    general = game16.player("crab")
    join(client, game16, general)
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())

    assert client.get(general_url(game16)).status_code == 403


def test_posting_to_a_page_is_not_allowed(client: Client, game16: Game) -> None:
    join(client, game16, game16.player("crab"))

    assert client.post(general_url(game16)).status_code == 405


# --- The map include ------------------------------------------------------------------------------


def test_the_map_include_renders_the_static_map() -> None:
    graph = rokugan_map()
    drawing = map_drawing(graph.to_dict())

    svg = render_to_string(
        "strategic_map/map_svg.html", {"drawing": drawing, "map_id": "m1", "map_title": "Title"}
    )

    assert svg.count('class="province') == 39
    assert 'id="m1"' in svg and 'viewBox="0 0 1000 800"' in svg and 'width="100%"' in svg
    assert '<title id="m1-title">Title</title>' in svg
    assert svg.count("<title>") >= 39 + len(graph.castles)  # a title per province and castle
    assert 'data-province="crab-kaiu"' in svg
    assert "Kaiu Lands · home of the Crab · castle Shiro Kaiu" in svg
    assert svg.count('class="clan-pattern"') == 8
    assert svg.count('class="ridge"') == len(drawing.ridges)
    assert svg.count('<use href="#m1-castle"') == len(graph.castles)
    for layer in ("map-highlights", "map-orders", "map-events", "map-armies"):
        assert re.search(rf'<g class="{layer}"[^>]*></g>', svg), layer


def test_the_map_include_renders_an_imported_map_without_coordinates() -> None:
    data = {
        "id": "plain",
        "name": "Plain",
        "provinces": [
            {"id": "north", "name": "North", "home_clan": "crab", "castle": True},
            {"id": "south", "name": "South", "home_clan": "lion", "castle": None},
            {"id": "east", "name": "East", "home_clan": None, "impassable": True},
            {"id": "west", "name": "West", "home_clan": None},
        ],
        "borders": [["north", "south"], ["south", "west"], ["west", "north"]],
    }

    svg = render_to_string("strategic_map/map_svg.html", {"drawing": map_drawing(data)})

    assert 'id="war-map"' in svg
    for pid in ("north", "south", "east", "west"):
        path = re.search(
            rf'<path class="province[^"]*"[^>]* d="([^"]+)" data-province="{pid}"', svg
        )
        assert path is not None and path.group(1).endswith("Z"), pid
    assert 'class="hatch" d=' in svg  # the impassable east
    assert 'data-neighbours="south west"' in svg


def test_the_map_include_keeps_numbers_unlocalised() -> None:
    """SVG coordinates stay "12.5" in languages that write "12,5"."""
    from django.utils import translation

    drawing = map_drawing(rokugan_map().to_dict())
    with translation.override("ru"):
        svg = render_to_string("strategic_map/map_svg.html", {"drawing": drawing})

    assert re.search(r'data-label-x="\d+\.\d"', svg)
    assert not re.search(r'data-label-x="\d+,\d"', svg)
