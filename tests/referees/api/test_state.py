"""GET /api/tournaments/{id}/state per role (R1.1): what is hidden is never sent."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client
from django.utils import timezone

from referees import services
from referees.kernel.access import judge_key_create
from referees.reading.view import tournament_view
from referees.services import OrderInput
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Army
from tests.referees.conftest import (
    KARO_LINEUP,
    KARO_PLAYERS,
    MIXED_LINEUP,
    MIXED_PLAYERS,
    Api,
    Game,
)

pytestmark = pytest.mark.django_db


def all_army_codes(game: Game) -> set[str]:
    return set(
        Army.objects.filter(campaign=game.tournament.campaign).values_list("code", flat=True)
    )


def hold_everywhere(game: Game) -> None:
    """Every army has an order, so that orders could leak if anything leaked them."""
    for code in sorted(all_army_codes(game)):
        services.order_enter(
            tournament_id=game.id,
            army_code=code,
            order=OrderInput(kind="hold"),
            actor=game.judge_actor,
            now=timezone.now(),
        )


# Each view built for a reader, by kind (referees.reading.state builds through tournament_view).
BUILDS: list[str] = []
WARM = [False]
JUDGE_KEYS: dict[int, str] = {}
WARMED: set[tuple[int, int]] = set()


@pytest.fixture(autouse=True, params=["built", "kept"])
def view_source(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test twice (issue 33): the view built for the reader ("built"), and the view
    read from the cache with every other view of that version already kept there ("kept"),
    so that R1.1 is checked on the path a deadline's readers take."""
    real = tournament_view

    def counted(**kwargs: Any) -> dict[str, Any]:
        BUILDS.append(kwargs["viewer"].kind)
        return real(**kwargs)

    monkeypatch.setattr("referees.reading.state.tournament_view", counted)
    BUILDS.clear()
    JUDGE_KEYS.clear()
    WARMED.clear()
    WARM[0] = request.param == "kept"


def every_view_kept(api: Api, game: Game) -> None:
    """Every view of the tournament's current version read once: the judges', each
    player's and the public's."""
    if game.id not in JUDGE_KEYS:  # made once: a key is hashed as slowly as a password
        JUDGE_KEYS[game.id] = judge_key_create(user=game.judge, label="warm").key
    tokens: list[str | None] = [JUDGE_KEYS[game.id], None]
    tokens += [game.token(p) for p in game.tournament.players.all()]
    for token in tokens:
        assert api.get(f"/tournaments/{game.id}/state", token=token).status_code == 200


def state_of(api: Api, game: Game, token: str | None) -> tuple[dict[str, Any], str]:
    if WARM[0]:
        version = game.refresh().campaign.version
        if (game.id, version) not in WARMED:
            every_view_kept(api, game)
            WARMED.add((game.id, version))
        built = len(BUILDS)
        response = api.get(f"/tournaments/{game.id}/state", token=token)
        assert len(BUILDS) == built, "the view was built again, not read from the cache"
    else:
        response = api.get(f"/tournaments/{game.id}/state", token=token)
    assert response.status_code == 200, response.content
    return response.json(), response.content.decode()


def test_judge_sees_every_army_control_and_order(
    api: Api, game_mixed: Game, judge_key: str
) -> None:
    hold_everywhere(game_mixed)

    state, _ = state_of(api, game_mixed, judge_key)

    assert state["viewer"]["kind"] == "judge"
    assert {a["id"] for a in state["armies"]} == all_army_codes(game_mixed)
    assert len(state["control"]) == len(rokugan_map().provinces)
    assert {o["army"] for o in state["orders"]} == all_army_codes(game_mixed)


def test_general_under_a_daimyo_gets_no_other_army_anywhere(api: Api, game_mixed: Game) -> None:
    """R1.1: a General whose clan has a Daimyo sees his own army, its province and the
    provinces next to it; no other army's id is anywhere in the payload."""
    hold_everywhere(game_mixed)
    general = game_mixed.player("crane")
    own = general.army.code

    state, raw = state_of(api, game_mixed, game_mixed.token(general))

    others = all_army_codes(game_mixed) - {own}
    leaked = sorted(code for code in others if re.search(rf'"{re.escape(code)}"', raw))
    assert leaked == []
    assert not any(code in raw for code in others)
    assert [a["id"] for a in state["armies"]] == [own]
    assert [o["army"] for o in state["orders"]] == [own]
    province = game_mixed.province_of(own)
    assert province is not None
    visible = {province} | set(rokugan_map().neighbours[province])
    assert set(state["control"]) <= visible
    assert set(state["visible_provinces"]) == visible
    assert state["viewer"]["sees_all_armies"] is False
    assert "scores" not in state
    assert "last_draws" not in state


def test_general_without_daimyo_sees_every_army_but_only_his_order(
    api: Api, game_mixed: Game
) -> None:
    hold_everywhere(game_mixed)
    general = game_mixed.player("dragon")

    state, _ = state_of(api, game_mixed, game_mixed.token(general))

    assert {a["id"] for a in state["armies"]} == all_army_codes(game_mixed)
    assert len(state["control"]) == len(rokugan_map().provinces)
    assert [o["army"] for o in state["orders"]] == [general.army.code]


def test_daimyo_sees_the_map_and_his_clans_orders(api: Api, game_mixed: Game) -> None:
    hold_everywhere(game_mixed)
    daimyo = game_mixed.player("crane", "daimyo")

    state, _ = state_of(api, game_mixed, game_mixed.token(daimyo))

    assert {a["id"] for a in state["armies"]} == all_army_codes(game_mixed)
    assert {o["army"] for o in state["orders"]} == {"crane-1", "crane-2"}
    assert state["viewer"]["player"]["role"] == "daimyo"


def test_karo_sees_the_map_but_no_orders(api: Api, game_karo: Game) -> None:
    hold_everywhere(game_karo)
    karo = game_karo.player("crab", "karo")

    state, _ = state_of(api, game_karo, game_karo.token(karo))

    assert {a["id"] for a in state["armies"]} == all_army_codes(game_karo)
    assert state["orders"] == []


def test_public_display_hides_armies_when_a_clan_has_a_daimyo(api: Api, game_mixed: Game) -> None:
    """R1.1: the public display shows army positions only where no clan has a Daimyo."""
    hold_everywhere(game_mixed)

    state, raw = state_of(api, game_mixed, None)

    assert state["viewer"]["kind"] == "public"
    assert state["armies"] == []
    assert state["control"] == {}
    assert state["orders"] == []
    assert not any(code in raw for code in all_army_codes(game_mixed))
    assert "scores" not in state  # R1.1: at the end only, where a clan has a Daimyo
    assert state["tournament"]["clock"]["phase"] == "running"


def test_public_display_shows_armies_when_no_clan_has_a_daimyo(api: Api, game16: Game) -> None:
    hold_everywhere(game16)

    state, _ = state_of(api, game16, None)

    assert len(state["armies"]) == 16
    assert state["orders"] == []
    # The whole board is public, so are each clan's points so far (the big screen's panel).
    assert state["scores"]["crab"]["total"] > 0


def test_a_player_of_another_tournament_gets_the_public_view(
    api: Api, game_mixed: Game, make_game: Callable[..., Game]
) -> None:
    other = make_game(16, name="Other")

    state, _ = state_of(api, game_mixed, other.token(other.player("crab")))

    assert state["viewer"]["kind"] == "public"


def test_an_account_that_judges_nothing_gets_the_public_view(
    client: Client, game_mixed: Game, other_user: AbstractBaseUser
) -> None:
    client.force_login(other_user)

    state = Api(client).get(f"/tournaments/{game_mixed.id}/state").json()

    assert state["viewer"]["kind"] == "public"


def test_the_judges_session_sees_everything(client: Client, game_mixed: Game) -> None:
    client.force_login(game_mixed.judge)

    state = Api(client).get(f"/tournaments/{game_mixed.id}/state").json()

    assert state["viewer"]["kind"] == "judge"


def test_a_joined_device_gets_its_players_view(client: Client, game_mixed: Game) -> None:
    """The session from /join/<token> sees what the bearer token sees."""
    general = game_mixed.player("crane")
    client.get(f"/join/{game_mixed.token(general)}")

    state = Api(client).get(f"/tournaments/{game_mixed.id}/state").json()

    assert state["viewer"]["player"]["id"] == general.pk
    assert [a["id"] for a in state["armies"]] == [general.army.code]


def test_unknown_tournament_is_404(api: Api, db: None) -> None:
    response = api.get("/tournaments/4242/state")

    assert response.status_code == 404
    assert response.json() == {"detail": "there is no tournament 4242", "code": "not_found"}


def test_campaign_map_is_public(api: Api, game_mixed: Game) -> None:
    response = api.get(f"/tournaments/{game_mixed.id}/map")

    assert response.status_code == 200
    assert response.json() == game_mixed.tournament.campaign.map_data
    assert len(response.json()["provinces"]) == 39


@pytest.mark.parametrize("phase", ["setup", "planning", "negotiation", "running"])
@pytest.mark.parametrize(
    ("players", "lineup"),
    [(MIXED_PLAYERS, MIXED_LINEUP), (KARO_PLAYERS, KARO_LINEUP)],
    ids=["mixed", "karo"],
)
def test_state_answers_every_viewer_in_every_phase(
    api: Api,
    make_game: Callable[..., Game],
    judge_key: str,
    phase: str,
    players: int,
    lineup: Mapping[str, Sequence[str]],
) -> None:
    """Before the armies are placed too: nobody gets a 500 (every role: R1 gives no game
    with a Karo and a clan without a Daimyo at once, so both kinds of game are asked)."""
    game = make_game(players, lineup=lineup, phase=phase)
    tokens = [judge_key, None] + [game.token(p) for p in game.players]

    for token in tokens:
        state, _ = state_of(api, game, token)
        assert state["tournament"]["clock"]["phase"] == phase
