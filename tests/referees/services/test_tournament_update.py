"""Changing a tournament's settings until the start: ``services.tournament_update`` and
``PATCH /api/tournaments/{id}``.

Checked as at creation (one function does both), then against the players already
registered (R1: they must fit the new line-up; none in a clan left out, R1 a) and the map
(R1, R3.2: every clan seated); logged with what changed, announced as "settings".
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.utils import timezone

from referees import services
from referees.kernel.access import judge_key_create
from referees.models import LogEntry, Tournament
from referees.services import TournamentError
from sl5r.api_errors import error_status
from sl5r.rules.mapgraph import rokugan_map
from strategic_map import selectors
from strategic_map.models import Map
from strategic_map.services import map_import
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db


def update(game: Game, **fields: Any) -> Tournament:
    return services.tournament_update(
        tournament_id=game.id, actor=game.judge_actor, now=timezone.now(), **fields
    )


def refused(game: Game, **fields: Any) -> TournamentError:
    with pytest.raises(TournamentError) as excinfo:
        update(game, **fields)
    return excinfo.value


def updates(game: Game) -> list[LogEntry]:
    return list(LogEntry.objects.filter(tournament_id=game.id, action="tournament_updated"))


@pytest.fixture
def setup16(make_game: Callable[..., Game]) -> Game:
    """16 players, none registered yet."""
    return make_game(16, lineup={}, phase="setup")


# --- The service ---------------------------------------------------------------------------


def test_every_setting_changes_during_set_up(setup16: Game) -> None:
    end = timezone.now() + timedelta(days=1)

    update(
        setup16,
        name="  Renamed ",
        player_count=21,
        turn_seconds=600,
        turns_total=None,
        ends_at=end,
        clan_abilities=False,
        base_hand=6,
        shortfall="exclude_shadowlands",
        three_variant="three_generals",
        planning_seconds=60,
        negotiation_seconds=120,
        time_zone="Europe/Moscow",
        battle_game="bushido",
        bushido_turns=6,
    )

    t = setup16.refresh()
    assert (t.name, t.player_count, t.turn_seconds, t.turns_total, t.ends_at) == (
        "Renamed",
        21,
        600,
        None,
        end,
    )
    assert (t.shortfall, t.three_variant, t.planning_seconds, t.negotiation_seconds) == (
        "exclude_shadowlands",
        "three_generals",
        60,
        120,
    )
    assert (t.time_zone, t.battle_game, t.bushido_turns) == ("Europe/Moscow", "bushido", 6)
    assert (t.campaign.clan_abilities, t.campaign.base_hand) == (False, 6)
    assert t.campaign.excluded_clans == ["shadowlands"]


def test_the_change_is_logged_with_each_setting_before_and_after_and_announced(
    setup16: Game,
) -> None:
    version = setup16.tournament.campaign.version

    update(setup16, name="Renamed", turn_seconds=600, base_hand=5)

    (entry,) = updates(setup16)
    assert entry.actor == "judge judge"
    assert entry.data["changes"] == {
        "name": {"from": "Test tournament", "to": "Renamed"},
        "turn_seconds": {"from": 900, "to": 600},
    }
    assert setup16.refresh().campaign.version == version + 1


def test_nothing_changed_is_neither_logged_nor_announced(setup16: Game) -> None:
    version = setup16.tournament.campaign.version

    update(setup16, name="Test tournament", player_count=16)

    assert updates(setup16) == []
    assert setup16.refresh().campaign.version == version


def test_r1a_leaving_the_shadowlands_out_takes_their_provinces_out_of_play(
    setup16: Game,
) -> None:
    """Control starts over as at creation: the Shadowlands' homes belong to nobody."""
    homes = rokugan_map().home_provinces["shadowlands"]

    update(setup16, player_count=14, shortfall="exclude_shadowlands")
    control = setup16.board()["control"]
    update(setup16, shortfall="smaller_clans")

    assert all(control[p] is None for p in homes)
    assert all(setup16.board()["control"][p] == "shadowlands" for p in homes)
    assert setup16.tournament.campaign.excluded_clans == []
    changes = updates(setup16)[0].data["changes"]
    assert changes["excluded_clans"] == {"from": [], "to": ["shadowlands"]}


def test_the_settings_cannot_change_once_started(make_game: Callable[..., Game]) -> None:
    game = make_game(16, phase="planning")

    error = refused(game, name="Too late")

    assert (error.code, error_status(error)) == ("phase", 409)
    assert game.refresh().name == "Test tournament"


def test_an_unknown_setting_is_refused(setup16: Game) -> None:
    error = refused(setup16, map="other")

    assert error.message.startswith("map: ")


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"name": " "}, "name"),
        ({"turn_seconds": 0}, "turn_seconds"),
        ({"base_hand": 7}, "base_hand"),
        ({"turns_total": 0}, "turns_total"),
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"planning_seconds": -1}, "planning_seconds"),
        ({"negotiation_seconds": 10**9}, "negotiation_seconds"),
        ({"shortfall": "draw lots"}, "shortfall"),
        ({"three_variant": "four"}, "three_variant"),
        ({"battle_game": "chess"}, "battle_game"),
        ({"bushido_turns": 0}, "bushido_turns"),
        ({"player_count": 7}, "player_count"),
        ({"player_count": 50}, "player_count"),
    ],
)
def test_a_bad_setting_is_refused_naming_its_field_as_at_creation(
    setup16: Game, judge_user: AbstractBaseUser, rokugan: Map, fields: dict[str, Any], field: str
) -> None:
    error = refused(setup16, **fields)
    with pytest.raises(TournamentError) as at_creation:
        services.tournament_create(
            judge=judge_user,
            game_map=rokugan,
            now=timezone.now(),
            **{"name": "New", "player_count": 16, **fields},
        )

    assert error.message.startswith(f"{field}: ")
    assert at_creation.value.message == error.message
    assert updates(setup16) == []


def test_an_end_time_in_the_past_is_refused(setup16: Game) -> None:
    error = refused(setup16, ends_at=timezone.now() - timedelta(minutes=1))

    assert error.message == "ends_at: the end time has already passed"


def test_without_turns_or_end_time_the_game_gets_the_default_turns(setup16: Game) -> None:
    update(setup16, ends_at=timezone.now() + timedelta(days=1), turns_total=None)
    update(setup16, ends_at=None)

    assert setup16.refresh().turns_total == services.DEFAULT_TURNS


def test_r1_registered_players_that_fit_the_new_count_stay(
    make_game: Callable[..., Game],
) -> None:
    """16 registered (two Generals a clan) are part of the 24-player line-up."""
    game = make_game(16, phase="setup")

    update(game, player_count=24)

    assert game.refresh().player_count == 24


def test_r1_a_count_the_registered_players_do_not_fit_is_refused_with_the_reason(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(24, phase="setup")

    error = refused(game, player_count=16)

    assert error.code == "lineup"
    assert "with 16 players R1 gives no clan a Daimyo" in error.message
    assert game.refresh().player_count == 24


def test_r1b_fewer_players_than_registered_full_clans_is_refused(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(16, phase="setup")

    error = refused(game, player_count=12)

    assert error.code == "lineup"
    assert "with 12 players only 4 clans have 2 Generals" in error.message


def test_r1_the_three_generals_variant_refuses_a_registered_daimyo(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(24, lineup={"crab": ["general", "general", "daimyo"]}, phase="setup")

    error = refused(game, three_variant="three_generals")

    assert error.code == "lineup"
    assert "R1 gives no clan a Daimyo" in error.message


def test_r1a_a_clan_with_registered_players_cannot_be_left_out(
    make_game: Callable[..., Game],
) -> None:
    game = make_game(20, lineup={"shadowlands": ["general"]}, phase="setup")

    error = refused(game, shortfall="exclude_shadowlands")

    assert error.message == (
        "shortfall: players of the Shadowlands are registered, so the clan cannot be left "
        "out (R1 a)"
    )
    assert game.refresh().campaign.excluded_clans == []


@pytest.fixture
def fresh_map_cache() -> Iterator[None]:
    """Campaigns' maps are cached by campaign id, which a rolled-back test gives out again
    (as in tests/abuse/test_unstorable_json.py): a map made here must not outlive the test."""
    selectors._MAP_CACHE.clear()
    yield
    selectors._MAP_CACHE.clear()


@pytest.mark.usefixtures("fresh_map_cache")
def test_r3_2_a_count_the_map_cannot_seat_is_refused(judge_user: AbstractBaseUser) -> None:
    """The Crab have two home provinces: enough for 16 players, not for 32 (three Generals)."""
    data = rokugan_map().to_dict()
    crab = [p for p in data["provinces"] if p["home_clan"] == "crab"]
    for province in [p for p in crab if not p["castle"]][: len(crab) - 2]:
        province["home_clan"] = None
    tournament = services.tournament_create(
        name="t",
        judge=judge_user,
        game_map=map_import(slug="small-crab", data=data),
        player_count=16,
        now=timezone.now(),
    )

    with pytest.raises(TournamentError) as excinfo:
        services.tournament_update(
            tournament_id=tournament.pk,
            actor=services.Actor.of_user(judge_user),
            now=timezone.now(),
            player_count=32,
        )

    assert excinfo.value.code == "map_seating"
    assert "the crab have 2 home provinces on this map for 3 Generals" in excinfo.value.message
    assert Tournament.objects.get(pk=tournament.pk).player_count == 16


# --- PATCH /api/tournaments/{id} ----------------------------------------------------------


def test_a_judge_patches_some_settings_and_the_others_stay(
    api: Api, setup16: Game, judge_key: str
) -> None:
    response = api.call(
        "PATCH",
        f"/tournaments/{setup16.id}",
        json_body={"name": "Patched", "player_count": 21, "shortfall": "exclude_shadowlands"},
        token=judge_key,
    )

    assert response.status_code == 200, response.content
    assert response.json() == {
        "id": setup16.id,
        "name": "Patched",
        "phase": "setup",
        "player_count": 21,
        "map": "rokugan",
        "excluded_clans": ["shadowlands"],
    }
    t = setup16.refresh()
    assert (t.turn_seconds, t.three_variant, t.campaign.base_hand) == (
        900,
        "generals_and_daimyo",
        5,
    )
    assert updates(setup16)[0].actor == "judge judge"


def test_patch_clears_the_number_of_turns_for_an_end_time(
    api: Api, setup16: Game, judge_key: str
) -> None:
    end = (timezone.now() + timedelta(days=1)).replace(microsecond=0)

    response = api.call(
        "PATCH",
        f"/tournaments/{setup16.id}",
        json_body={"turns_total": None, "ends_at": end.isoformat()},
        token=judge_key,
    )

    assert response.status_code == 200, response.content
    t = setup16.refresh()
    assert (t.turns_total, t.ends_at) == (None, end)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"name": None}, "name"),
        ({"map": "other"}, "map"),
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"ends_at": "2030-05-01T18:00:00"}, "ends_at"),
        ({"base_hand": 7}, "base_hand"),
    ],
)
def test_patch_refuses_a_bad_body_naming_the_field(
    api: Api, setup16: Game, judge_key: str, body: dict[str, Any], field: str
) -> None:
    response = api.call("PATCH", f"/tournaments/{setup16.id}", json_body=body, token=judge_key)

    assert response.status_code == 422
    assert response.json()["detail"].startswith(f"{field}: ")
    assert updates(setup16) == []


def test_patch_is_refused_once_started(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(16, phase="planning")

    response = api.call(
        "PATCH", f"/tournaments/{game.id}", json_body={"name": "x"}, token=judge_key
    )

    assert response.status_code == 409
    assert response.json()["code"] == "phase"


def test_patch_refuses_a_count_that_orphans_registered_players(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(24, phase="setup")

    response = api.call(
        "PATCH", f"/tournaments/{game.id}", json_body={"player_count": 16}, token=judge_key
    )

    assert response.status_code == 400
    assert response.json()["code"] == "lineup"
    assert "R1 gives no clan a Daimyo" in response.json()["detail"]


def test_patch_is_for_the_tournaments_judges_only(
    api: Api, setup16: Game, other_user: AbstractBaseUser
) -> None:
    stranger = judge_key_create(user=other_user).key
    player = services.player_register(
        tournament=setup16.tournament,
        name="Crab",
        clan="crab",
        role="general",
        actor=setup16.judge_actor,
        now=timezone.now(),
    )

    anonymous = api.call("PATCH", f"/tournaments/{setup16.id}", json_body={"name": "x"})
    other = api.call("PATCH", f"/tournaments/{setup16.id}", json_body={"name": "x"}, token=stranger)
    as_player = api.call(
        "PATCH",
        f"/tournaments/{setup16.id}",
        json_body={"name": "x"},
        token=services.player_token(player),
    )

    assert (anonymous.status_code, other.status_code, as_player.status_code) == (401, 403, 403)
    assert setup16.refresh().name == "Test tournament"


def test_patch_of_no_tournament_is_404(api: Api, rokugan: Map, judge_key: str) -> None:
    response = api.call("PATCH", "/tournaments/999", json_body={"name": "x"}, token=judge_key)

    assert response.status_code == 404
