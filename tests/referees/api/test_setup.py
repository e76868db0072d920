"""Setting a tournament up through the API: maps, line-ups, players, join links, the start."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.test import Client

from referees.models import LogEntry, Player, Tournament
from referees.services import player_token
from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.models import Map
from tests.referees.conftest import (
    KARO_LINEUP,
    KARO_PLAYERS,
    MIXED_LINEUP,
    MIXED_PLAYERS,
    Api,
    Game,
    start_positions,
)

pytestmark = pytest.mark.django_db


def new_tournament(**fields: Any) -> dict[str, Any]:
    return {"name": "Winter Court", "player_count": 16, **fields}


# --- Creating tournaments and maps -----------------------------------------------------------


def test_judge_with_a_session_creates_a_tournament_and_becomes_its_judge(
    client: Client, rokugan: Map, judge_user: AbstractBaseUser
) -> None:
    """POST /api/tournaments by a signed-in account: 201, set-up, the bundled map by default."""
    client.force_login(judge_user)

    response = Api(client).post("/tournaments", new_tournament(turn_seconds=1200))

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["phase"] == "setup"
    assert body["map"] == "rokugan"
    tournament = Tournament.objects.get(pk=body["id"])
    assert list(tournament.judges.all()) == [judge_user]
    assert tournament.turn_seconds == 1200
    assert LogEntry.objects.filter(tournament=tournament, action="tournament_created").exists()


def test_judge_key_creates_a_tournament(api: Api, rokugan: Map, judge_key: str) -> None:
    """A judge's API key works as a bearer token for set-up."""
    response = api.post("/tournaments", new_tournament(), token=judge_key)

    assert response.status_code == 201


def test_anonymous_cannot_create_a_tournament(api: Api, rokugan: Map) -> None:
    response = api.post("/tournaments", new_tournament())

    assert response.status_code == 401
    assert response.json()["code"] == "unauthorized"
    assert not Tournament.objects.exists()


def test_a_player_token_cannot_create_a_tournament(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    response = api.post("/tournaments", new_tournament(), token=token)

    assert response.status_code == 403
    assert Tournament.objects.count() == 1


def test_unknown_map_slug_is_404(api: Api, rokugan: Map, judge_key: str) -> None:
    response = api.post("/tournaments", new_tournament(map="atlantis"), token=judge_key)

    assert response.status_code == 404
    assert "atlantis" in response.json()["detail"]


def test_tournament_on_an_imported_map(api: Api, rokugan: Map, judge_key: str) -> None:
    """``map_data`` is validated and imported under the new slug ``map`` first."""
    data = rokugan_map().to_dict()
    data["name"] = "Rokugan (variant)"

    response = api.post(
        "/tournaments", new_tournament(map="rokugan-variant", map_data=data), token=judge_key
    )

    assert response.status_code == 201, response.content
    assert response.json()["map"] == "rokugan-variant"
    assert Map.objects.get(slug="rokugan-variant").name == "Rokugan (variant)"


def test_bad_map_data_is_422_and_nothing_is_stored(api: Api, rokugan: Map, judge_key: str) -> None:
    data = rokugan_map().to_dict()
    data["borders"].append([data["provinces"][0]["id"], "nowhere"])

    response = api.post(
        "/tournaments", new_tournament(map="broken", map_data=data), token=judge_key
    )

    assert response.status_code == 422
    assert response.json()["code"] == "map"
    assert "nowhere" in response.json()["detail"]
    assert not Map.objects.filter(slug="broken").exists()
    assert not Tournament.objects.exists()


def test_map_data_under_an_existing_slug_is_409(api: Api, rokugan: Map, judge_key: str) -> None:
    response = api.post(
        "/tournaments", new_tournament(map_data=rokugan_map().to_dict()), token=judge_key
    )

    assert response.status_code == 409
    assert response.json()["code"] == "map_exists"


def test_a_failed_creation_leaves_no_imported_map(api: Api, rokugan: Map, judge_key: str) -> None:
    """The import and the tournament are one transaction."""
    response = api.post(
        "/tournaments",
        new_tournament(map="lonely", map_data=rokugan_map().to_dict(), player_count=300),
        token=judge_key,
    )

    assert response.status_code == 400
    assert response.json()["code"] == "lineup"
    assert not Map.objects.filter(slug="lonely").exists()


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"ends_at": "2030-05-01T18:00:00"}, "ends_at"),
        ({"time_zone": "Mars/Olympus"}, "time_zone"),
        ({"player_count": 0}, "player_count"),
        ({"base_hand": 7}, "base_hand"),
        ({"turn_seconds": 0}, "turn_seconds"),
        ({"shortfall": "draw lots"}, "shortfall"),
        ({"name": ""}, "name"),
    ],
)
def test_invalid_settings_are_422_naming_the_field(
    api: Api, rokugan: Map, judge_key: str, fields: dict[str, Any], field: str
) -> None:
    response = api.post("/tournaments", new_tournament(**fields), token=judge_key)

    assert response.status_code == 422
    body = response.json()
    assert body["code"] == "validation"
    assert body["detail"].startswith(f"{field}: ")
    assert not Tournament.objects.exists()


def test_import_a_map(api: Api, judge_key: str, db: None) -> None:
    response = api.post(
        "/maps", {"slug": "rokugan", "data": rokugan_map().to_dict()}, token=judge_key
    )

    assert response.status_code == 201
    assert response.json() == {
        "slug": "rokugan",
        "name": rokugan_map().name,
        "provinces": 39,
        "borders": 85,
    }


def test_import_a_map_refuses_an_existing_slug(api: Api, rokugan: Map, judge_key: str) -> None:
    data = copy.deepcopy(rokugan.data)
    data["name"] = "Overwritten"

    response = api.post("/maps", {"slug": "rokugan", "data": data}, token=judge_key)

    assert response.status_code == 409
    assert Map.objects.get(slug="rokugan").name != "Overwritten"


def test_import_a_map_with_a_bad_slug_is_422(api: Api, judge_key: str, db: None) -> None:
    response = api.post(
        "/maps", {"slug": "not a slug!", "data": rokugan_map().to_dict()}, token=judge_key
    )

    assert response.status_code == 422
    assert response.json()["detail"]


def test_import_a_map_needs_an_account(api: Api, db: None) -> None:
    response = api.post("/maps", {"slug": "x", "data": rokugan_map().to_dict()})

    assert response.status_code == 401


# --- Line-up -----------------------------------------------------------------------------


def test_lineup_for_24_players(api: Api, db: None) -> None:
    """R1: 24 players, default variant: two Generals and a Daimyo in every clan."""
    response = api.get("/lineup?players=24")

    assert response.status_code == 200
    body = response.json()
    assert body["players"] == 24
    assert body["clans"]["crab"] == ["general", "general", "daimyo"]


def test_lineup_three_generals_and_shadowlands_left_out(api: Api, db: None) -> None:
    response = api.get("/lineup?players=21&shortfall=exclude_shadowlands&variant=three_generals")

    body = response.json()
    assert body["excluded_clans"] == ["shadowlands"]
    assert body["clans"]["crab"] == ["general", "general", "general"]
    assert "shadowlands" not in body["clans"]


def test_lineup_refuses_impossible_counts(api: Api, db: None) -> None:
    too_many = api.get("/lineup?players=400")
    invalid = api.get("/lineup?players=many")

    assert too_many.status_code == 400
    assert "too many" in too_many.json()["detail"]
    assert invalid.status_code == 422
    assert invalid.json()["detail"].startswith("players: ")


# --- Players and join links ----------------------------------------------------------------


def test_judge_registers_a_general_with_his_army_and_link(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(16, lineup={}, phase="setup")

    response = api.post(
        f"/tournaments/{game.id}/players",
        {"name": "Hida Kisada", "clan": "crab", "role": "general"},
        token=judge_key,
    )

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["army"] == "crab-1"
    assert body["join_url"].endswith(f"/join/{body['token']}")
    assert body["join_url"].startswith("http://testserver/")
    player = Player.objects.get(pk=body["id"])
    assert player_token(player) == body["token"]


def test_register_refuses_a_second_daimyo(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(24, lineup={"crab": ["daimyo"]}, phase="setup")

    response = api.post(
        f"/tournaments/{game.id}/players",
        {"name": "Another", "clan": "crab", "role": "daimyo"},
        token=judge_key,
    )

    assert response.status_code == 400
    assert response.json()["code"] == "lineup"
    assert "Daimyo" in response.json()["detail"]


def test_register_refuses_an_unknown_clan_naming_it(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(16, lineup={}, phase="setup")

    response = api.post(
        f"/tournaments/{game.id}/players",
        {"name": "X", "clan": "mantis", "role": "general"},
        token=judge_key,
    )

    assert response.status_code == 422
    assert response.json()["detail"].startswith("clan: ")


def test_register_refuses_when_full(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    game = make_game(8, phase="setup")

    response = api.post(
        f"/tournaments/{game.id}/players",
        {"name": "Ninth", "clan": "crab", "role": "general"},
        token=judge_key,
    )

    assert response.status_code == 409
    assert response.json()["code"] == "full"


def test_register_after_the_start_is_409(api: Api, game16: Game, judge_key: str) -> None:
    response = api.post(
        f"/tournaments/{game16.id}/players",
        {"name": "Late", "clan": "crab", "role": "general"},
        token=judge_key,
    )

    assert response.status_code == 409


def test_only_a_judge_of_this_tournament_registers(
    client: Client, make_game: Callable[..., Game], other_user: AbstractBaseUser
) -> None:
    game = make_game(16, lineup={}, phase="setup")
    client.force_login(other_user)

    response = Api(client).post(
        f"/tournaments/{game.id}/players", {"name": "X", "clan": "crab", "role": "general"}
    )

    assert response.status_code == 403
    assert response.json()["code"] == "forbidden"
    assert not Player.objects.exists()


def test_a_superuser_judges_every_tournament(
    client: Client, game16: Game, django_user_model: Any
) -> None:
    admin = django_user_model.objects.create_superuser("root", "root@example.com", "pw-root-1")
    client.force_login(admin)

    response = Api(client).get(f"/tournaments/{game16.id}/players")

    assert response.status_code == 200
    assert len(response.json()) == 16


def test_judge_lists_players_with_their_links(api: Api, game16: Game, judge_key: str) -> None:
    response = api.get(f"/tournaments/{game16.id}/players", token=judge_key)

    assert response.status_code == 200
    rows = response.json()
    assert len(rows) == 16
    assert all(row["token"] and row["join_url"] for row in rows)


def test_players_may_not_list_players(api: Api, game16: Game) -> None:
    response = api.get(
        f"/tournaments/{game16.id}/players", token=game16.token(game16.player("crab"))
    )

    assert response.status_code == 403


def test_reissue_replaces_the_link(api: Api, game16: Game, judge_key: str) -> None:
    """A reissued link works; the old one is refused everywhere."""
    player = game16.player("crab")
    old = game16.token(player)

    response = api.post(f"/tournaments/{game16.id}/players/{player.pk}/join-link", token=judge_key)

    assert response.status_code == 200
    new = response.json()["token"]
    assert new and new != old
    assert api.get("/me", token=old).status_code == 401
    assert api.get("/me", token=new).json()["player"]["id"] == player.pk
    assert LogEntry.objects.filter(action="join_link_reissued", data__player=player.pk).exists()


def test_revoke_leaves_no_link(api: Api, game16: Game, judge_key: str) -> None:
    player = game16.player("crab")
    old = game16.token(player)

    response = api.delete(
        f"/tournaments/{game16.id}/players/{player.pk}/join-link", token=judge_key
    )

    assert response.status_code == 200
    assert response.json()["token"] == ""
    assert response.json()["join_url"] is None
    assert api.get("/me", token=old).status_code == 401


def test_join_link_of_another_tournaments_player_is_404(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    first = make_game(16, name="First")
    second = make_game(16, name="Second", lineup={}, phase="setup")
    player = first.player("crab")

    response = api.post(f"/tournaments/{second.id}/players/{player.pk}/join-link", token=judge_key)

    assert response.status_code == 404
    assert response.json()["code"] == "not_found"


# --- The start ---------------------------------------------------------------------------


def test_start_refuses_an_incomplete_lineup(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    """R1: the start needs the whole line-up; the refusal says what each clan lacks."""
    lineup = {clan: ["general", "general"] for clan in CLANS if clan != "crab"}
    game = make_game(16, lineup={"crab": ["general"], **lineup}, phase="setup")

    response = api.post(f"/tournaments/{game.id}/start", token=judge_key)

    assert response.status_code == 409
    assert response.json()["code"] == "lineup_incomplete"
    assert response.json()["detail"] == "line-up: Crab: 1 of 2 Generals registered"
    assert Tournament.objects.get(pk=game.id).phase == "setup"


def test_the_judge_runs_the_start_to_turn_one(
    api: Api, make_game: Callable[..., Game], judge_key: str
) -> None:
    """Start, declare every clan, advance through negotiation: turn 1 is open."""
    game = make_game(16, phase="setup")
    base = f"/tournaments/{game.id}"

    assert api.post(f"{base}/start", token=judge_key).json()["phase"] == "planning"
    for clan in {p.clan for p in game.players}:
        codes = [p.army.code for p in game.players if p.clan == clan and p.army]
        response = api.put(
            f"{base}/positions/{clan}",
            {"positions": start_positions(clan, codes)},
            token=judge_key,
        )
        assert response.status_code == 200, response.content
    assert api.post(f"{base}/advance", token=judge_key).json()["phase"] == "negotiation"
    response = api.post(f"{base}/advance", token=judge_key)

    assert response.json()["phase"] == "running"
    state = api.get(f"{base}/state", token=judge_key).json()
    assert state["tournament"]["turn"] == 1
    assert len(state["armies"]) == 16


def test_advance_is_judge_only(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    response = api.post(f"/tournaments/{game16.id}/advance", token=token)

    assert response.status_code == 403


@pytest.fixture
def planning(make_game: Callable[..., Game]) -> Game:
    """The mixed line-up in clan planning: nobody has declared yet."""
    return make_game(MIXED_PLAYERS, lineup=MIXED_LINEUP, phase="planning")


def declare(api: Api, game: Game, clan: str, token: str | None) -> Any:
    codes = [p.army.code for p in game.players if p.clan == clan and p.army]
    return api.put(
        f"/tournaments/{game.id}/positions/{clan}",
        {"positions": start_positions(clan, codes)},
        token=token,
    )


def test_a_daimyo_declares_for_his_clan(api: Api, planning: Game) -> None:
    response = declare(api, planning, "crane", planning.token(planning.player("crane", "daimyo")))

    assert response.status_code == 200
    entry = LogEntry.objects.get(action="start_positions")
    assert entry.actor.startswith("daimyo ")


def test_a_general_under_a_daimyo_may_not_declare(api: Api, planning: Game) -> None:
    response = declare(api, planning, "crane", planning.token(planning.player("crane")))

    assert response.status_code == 403
    assert not LogEntry.objects.filter(action="start_positions").exists()


def test_a_general_without_daimyo_declares_for_his_own_clan_only(api: Api, planning: Game) -> None:
    token = planning.token(planning.player("dragon"))

    own = declare(api, planning, "dragon", token)
    other = declare(api, planning, "lion", token)

    assert own.status_code == 200
    assert other.status_code == 403


def test_a_karo_may_not_declare(api: Api, make_game: Callable[..., Game]) -> None:
    planning = make_game(KARO_PLAYERS, lineup=KARO_LINEUP, phase="planning")

    response = declare(api, planning, "crab", planning.token(planning.player("crab", "karo")))

    assert response.status_code == 403


def test_the_judge_declares_for_any_clan(api: Api, planning: Game, judge_key: str) -> None:
    """R3.1: the judge's declaration for a clan is stored (its armies placed where he said)
    and logged in his name, and nobody else's armies move."""
    crab = sorted(p.army.code for p in planning.players if p.clan == "crab" and p.army)
    assert planning.board()["armies"] == {}

    response = declare(api, planning, "crab", judge_key)

    assert response.status_code == 200, response.content
    placed = {code: spot["province"] for code, spot in planning.board()["armies"].items()}
    assert placed == start_positions("crab", crab)
    entry = LogEntry.objects.get(tournament=planning.id, action="start_positions")
    assert entry.actor == planning.judge_actor.label
    assert entry.data["clan"] == "crab"
    assert entry.data["positions"] == start_positions("crab", crab)


def test_anonymous_may_not_declare(api: Api, planning: Game) -> None:
    assert declare(api, planning, "crab", None).status_code == 401


def test_positions_breaking_r3_are_refused_with_the_reason(
    api: Api, planning: Game, judge_key: str
) -> None:
    """R3.2: castle provinces first."""
    response = api.put(
        f"/tournaments/{planning.id}/positions/dragon",
        {"positions": {"dragon-1": "dragon-kitsuki", "dragon-2": "dragon-tamori"}},
        token=judge_key,
    )

    assert response.status_code == 400
    assert response.json()["code"] == "positions"


def test_positions_for_an_unknown_clan_are_422(api: Api, planning: Game, judge_key: str) -> None:
    response = api.put(
        f"/tournaments/{planning.id}/positions/mantis", {"positions": {}}, token=judge_key
    )

    assert response.status_code == 422
    assert response.json()["detail"].startswith("clan: ")


def test_next_phase_pressed_after_the_clock_moved_on_skips_nothing(
    api: Api, planning: Game, judge_key: str
) -> None:
    """R3.3; issue 30's walk: declaring the last clan started the negotiation by itself, and
    the judge's "Next phase now", meant for the declarations, opened turn 1 half a second
    later: the negotiation was skipped. The console names the phase it showed."""
    base = f"/tournaments/{planning.id}"
    for clan in sorted({p.clan for p in planning.players}):
        assert declare(api, planning, clan, judge_key).status_code == 200
    phase = api.get(f"{base}/state", token=judge_key).json()["tournament"]["clock"]["phase"]

    refused = api.post(f"{base}/advance?phase=deployment", token=judge_key)

    assert refused.status_code == 409, refused.content
    assert refused.json()["code"] == "stale"
    assert api.get(f"{base}/state", token=judge_key).json()["tournament"]["clock"]["phase"] == phase
    moved = api.post(f"{base}/advance?phase={phase}", token=judge_key)
    assert moved.status_code == 200, moved.content
