"""JSON that no database or page could hold is refused with a 422 naming the place (issue 12).

Python's JSON parser accepts ``NaN``, ``Infinity``, lone surrogates (``"\\ud83d"``), integers
of any size and deep nesting; SQLite's ``JSON_VALID`` and PostgreSQL's ``jsonb`` refuse the
first, a page cannot show the second, and columns stop at 64 bits. Before the fix each was a
500, or worse, was stored and broke the page that shows it for good. The check is
``sl5r.rules.jsonvalue``: the API's body parser runs it on every body, ``map_from_dict`` on
every map (``loadmap`` too).

A map on which a clan cannot seat its Generals (R1, R3.2: each army starts in a home
province of its own, castles first) is refused at creation, naming the clan, and again when
a General is registered or the tournament starts.

The property tests send hypothesis-made JSON to every operation that takes free-form data
(a map, a tournament's ``map_data`` and ``ends_at``, a battle action) and check that no answer
is a 5xx and that whatever was stored is shown: the page that shows it answers 200. They run
on SQLite and, in the PostgreSQL pass, on PostgreSQL.
"""

from __future__ import annotations

import copy
import io
import itertools
import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.core.management import CommandError, call_command
from django.test import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from battles.models import Battle
from referees import services
from referees.models import LogEntry, Tournament
from referees.services import Actor, TournamentError
from sl5r.api_errors import error_status
from sl5r.rules.jsonvalue import MAX_DEPTH
from sl5r.rules.mapgraph import rokugan_map
from strategic_map import selectors
from strategic_map.models import Map
from strategic_map.services import map_import
from tests.abuse.conftest import Scene
from tests.referees import conftest as referee_fixtures

judge_key = referee_fixtures.judge_key  # the referees' fixture, by assignment as conftest does


@pytest.fixture(autouse=True)
def _fresh_map_cache() -> Iterator[None]:
    """Campaigns' maps are cached by campaign id, which a rolled-back test gives out again:
    the maps these tests make (a clan without homes) must not outlive them."""
    selectors._MAP_CACHE.clear()
    yield
    selectors._MAP_CACHE.clear()


SMALL_MAP = {"provinces": [{"id": "a"}, {"id": "b"}], "borders": [["a", "b"]]}


def small_map(**province_a: Any) -> dict[str, Any]:
    data = copy.deepcopy(SMALL_MAP)
    data["provinces"][0].update(province_a)
    return data


def raw(text: str) -> bytes:
    """A body as written: ``NaN`` and ``\\ud83d`` exactly as a client would send them."""
    return text.encode()


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


def send(client: Client, method: str, path: str, data: bytes, key: str) -> Any:
    return client.generic(
        method,
        path,
        data=data,
        content_type="application/json",
        headers={"Authorization": f"Bearer {key}"},
    )


def stored() -> tuple[int, int, int]:
    return Map.objects.count(), Tournament.objects.count(), LogEntry.objects.count()


# --- The table: each refused with 422, the place named, nothing stored --------------------

MAP_NAN = '{"slug": "nan1", "data": {"provinces": [{"id": "a", "x": NaN}, {"id": "b"}], "borders": [["a", "b"]]}}'  # noqa: E501

CASES = [
    pytest.param(
        "/api/maps",
        MAP_NAN,
        "data.provinces[0].x: must be a finite number, not NaN",
        id="map-x-nan",
    ),
    pytest.param(
        "/api/maps",
        '{"slug": "inf1", "data": {"provinces": [{"id": "a", "y": Infinity}, {"id": "b"}], '
        '"borders": [["a", "b"]]}}',
        "data.provinces[0].y: must be a finite number, not inf",
        id="map-y-infinity",
    ),
    pytest.param(
        "/api/maps",
        '{"slug": "inf2", "data": {"width": -Infinity, "provinces": [{"id": "a"}, {"id": "b"}], '
        '"borders": [["a", "b"]]}}',
        "data.width: must be a finite number, not -inf",
        id="map-width-minus-infinity",
    ),
    pytest.param(
        "/api/maps",
        '{"slug": "s1", "data": {"provinces": [{"id": "a", "name": "\\ud83d"}]}}',
        "data.provinces[0].name: contains a lone surrogate (U+D83D)",
        id="map-name-lone-surrogate",
    ),
    pytest.param(
        "/api/maps",
        '{"slug": "big1", "data": {"provinces": [{"id": "a", "x": 9223372036854775808}, '
        '{"id": "b"}], "borders": [["a", "b"]]}}',
        "data.provinces[0].x: the integer 9223372036854775808 is out of range",
        id="map-integer-beyond-64-bits",
    ),
    pytest.param(
        "/api/maps",
        json.dumps({"slug": "deep", "data": {**SMALL_MAP, "name": nested(MAX_DEPTH + 5)}}),
        f"nested deeper than {MAX_DEPTH} levels",
        id="map-nested-too-deep",
    ),
    pytest.param(
        "/api/tournaments",
        '{"name": "t", "player_count": 16, "map": "nanmap", "map_data": {"provinces": '
        '[{"id": "a", "x": NaN}, {"id": "b"}], "borders": [["a", "b"]]}}',
        "map_data.provinces[0].x: must be a finite number, not NaN",
        id="tournament-map-data-nan",
    ),
    pytest.param(
        "/api/tournaments",
        '{"name": "dt", "player_count": 16, "ends_at": "9999-12-31T23:59:59-23:59"}',
        "ends_at: the time in UTC falls outside the years 1 to 9999",
        id="ends-at-past-year-9999",
    ),
    pytest.param(
        "/api/tournaments",
        '{"name": "dt", "player_count": 16, "ends_at": "0001-01-01T00:00:00+23:59"}',
        "ends_at: the time in UTC falls outside the years 1 to 9999",
        id="ends-at-before-year-1",
    ),
    pytest.param(
        "/api/tournaments",
        '{"name": "\\udc00", "player_count": 16}',
        "name:",
        id="tournament-name-lone-surrogate",
    ),
    pytest.param(
        "/api/tournaments",
        '{"name": "t", "player_count": 16, "turns_total": 1e400}',
        "turns_total: must be a finite number, not inf",
        id="number-beyond-a-double",
    ),
]


@pytest.mark.parametrize(("path", "body", "says"), CASES)
def test_unstorable_json_is_refused_with_422_naming_the_place_and_nothing_is_stored(
    path: str, body: str, says: str, client: Client, rokugan: Map, judge_key: str
) -> None:
    before = stored()

    response = send(client, "POST", path, raw(body), judge_key)

    assert response.status_code == 422, response.content[:500]
    answer = response.json()
    assert answer["code"] in {"validation", "map"}, answer
    assert says in answer["detail"], answer
    assert stored() == before


@pytest.mark.parametrize(
    ("where", "body", "says"),
    [
        pytest.param(
            "actions",
            '{"type": "end_turn", "note": NaN}',
            "note: must be a finite number, not NaN",
            id="action-nan",
        ),
        pytest.param(
            "actions",
            '{"type": "honor", "army": "lion-1", "delta": 99999999999999999999}',
            "delta: the integer 99999999999999999999 is out of range",
            id="action-huge-integer",
        ),
        pytest.param(
            "actions",
            '{"type": "end_turn", "note": {"\\ud83d": 1}}',
            "note.\\ud83d: contains a lone surrogate (U+D83D)",
            id="action-lone-surrogate-in-a-key",
        ),
        pytest.param(
            "vote",
            '{"vote": "battle", "army": "lion-1", "extra": -Infinity}',
            "extra: must be a finite number, not -inf",
            id="vote-infinity",
        ),
    ],
)
def test_unstorable_json_in_a_battle_body_is_refused_with_422_before_the_table_reads_it(
    where: str, body: str, says: str, scene: Scene, client: Client
) -> None:
    before = list(Battle.objects.order_by("pk").values_list("pk", "status", "state"))
    logged = LogEntry.objects.count()
    path = f"/api/tournaments/{scene.id}/battles/{scene.battle.pk}/{where}"

    response = send(client, "POST", path, raw(body), scene.judge_key)

    assert response.status_code == 422, response.content[:500]
    assert response.json()["code"] == "validation"
    assert says in response.json()["detail"], response.json()
    assert list(Battle.objects.order_by("pk").values_list("pk", "status", "state")) == before
    assert LogEntry.objects.count() == logged


def test_an_instruction_to_an_id_beyond_64_bits_is_refused_as_out_of_range(
    scene: Scene, client: Client
) -> None:
    token = scene.game.token(scene.game.player("crane", "daimyo"))
    path = f"/api/tournaments/{scene.id}/instructions"

    response = send(
        client, "POST", path, raw('{"text": "Hold", "to": 18446744073709551616}'), token
    )

    assert response.status_code == 422, response.content[:500]
    assert "to: the integer 18446744073709551616 is out of range" in response.json()["detail"]


def test_unstorable_json_is_refused_in_russian_too(
    client: Client, rokugan: Map, judge_key: str
) -> None:
    response = client.post(
        "/api/maps",
        raw(MAP_NAN),
        content_type="application/json",
        headers={"Authorization": f"Bearer {judge_key}", "Accept-Language": "ru"},
    )

    assert response.status_code == 422
    assert response.json()["detail"].startswith("data.provinces[0].x: ")
    assert "NaN" in response.json()["detail"]
    assert "finite" not in response.json()["detail"]


# --- loadmap ---------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("text", "says"),
    [
        pytest.param(
            '{"provinces": [{"id": "a", "x": NaN}, {"id": "b"}], "borders": [["a", "b"]]}',
            "map.provinces[0].x: must be a finite number, not NaN",
            id="nan",
        ),
        pytest.param(
            '{"provinces": [{"id": "a", "name": "\\ud83d"}, {"id": "b"}], "borders": [["a", "b"]]}',
            "map.provinces[0].name: contains a lone surrogate (U+D83D)",
            id="lone-surrogate",
        ),
        pytest.param(
            '{"provinces": [{"id": "a", "name": "a\\u0000"}, {"id": "b"}], '
            '"borders": [["a", "b"]]}',
            "map.provinces[0].name: contains a NUL character",
            id="nul",
        ),
        pytest.param(
            '{"width": ' + "9" * 5000 + "}", "not valid JSON: Exceeds the limit", id="huge"
        ),
        pytest.param("[" * 100_000, "not valid JSON: nested too deep", id="nested-too-deep"),
        pytest.param(
            json.dumps({**SMALL_MAP, "name": nested(MAX_DEPTH + 1)}),
            f"map.name{'[0]' * (MAX_DEPTH - 1)}: nested deeper than {MAX_DEPTH} levels",
            id="nested-deeper-than-a-map-needs",
        ),
    ],
)
def test_loadmap_refuses_an_unstorable_map_with_status_2_and_one_line(
    text: str, says: str, tmp_path: Path
) -> None:
    path = tmp_path / "bad.json"
    path.write_text(text, encoding="utf-8")

    with pytest.raises(CommandError) as excinfo:
        call_command("loadmap", str(path), stdout=io.StringIO())

    assert excinfo.value.returncode == 2
    assert says in str(excinfo.value)
    assert "\n" not in str(excinfo.value)
    assert not Map.objects.exists()


# --- Seating the line-up (R1, R3.2) ----------------------------------------------------------


def map_without_homes(clan: str) -> dict[str, Any]:
    """The bundled map with ``clan``'s home provinces unaligned."""
    data = rokugan_map().to_dict()
    for province in data["provinces"]:
        if province["home_clan"] == clan:
            province["home_clan"] = None
    return data


def test_a_map_on_which_no_clan_has_a_home_is_refused_for_a_tournament_naming_a_clan(
    client: Client, rokugan: Map, judge_key: str
) -> None:
    data = {
        "provinces": [{"id": f"p{i}", "castle": True} for i in range(20)],
        "borders": [[f"p{i}", f"p{i + 1}"] for i in range(19)],
    }
    before = stored()
    body = {"name": "homeless", "player_count": 16, "map": "homeless", "map_data": data}

    response = send(client, "POST", "/api/tournaments", json.dumps(body).encode(), judge_key)

    assert response.status_code == 422, response.content[:500]
    assert response.json()["code"] == "map_seating"
    assert (
        "the crab have 0 home provinces on this map for 2 Generals" in (response.json()["detail"])
    )
    assert "R3.2" in response.json()["detail"]
    assert stored() == before  # not even the map


def test_a_map_without_one_clans_castles_is_refused_naming_that_clan(
    judge_user: AbstractBaseUser,
) -> None:
    data = rokugan_map().to_dict()
    for province in data["provinces"]:
        if province["home_clan"] == "lion":
            province["castle"] = None
    game_map = map_import(slug="no-lion-castles", data=data)

    with pytest.raises(TournamentError) as excinfo:
        services.tournament_create(
            name="t", judge=judge_user, game_map=game_map, player_count=8, now=_now()
        )

    assert excinfo.value.code == "map_seating" and error_status(excinfo.value) == 422
    assert "the lion have no castle" in excinfo.value.message
    assert "crab" not in excinfo.value.message


def test_the_excluded_shadowlands_need_no_homes(judge_user: AbstractBaseUser) -> None:
    game_map = map_import(slug="no-shadowlands", data=map_without_homes("shadowlands"))

    tournament = services.tournament_create(
        name="t",
        judge=judge_user,
        game_map=game_map,
        player_count=14,
        now=_now(),
        shortfall="exclude_shadowlands",
    )

    assert tournament.campaign.excluded_clans == ["shadowlands"]


def test_a_general_the_map_cannot_seat_is_not_registered(judge_user: AbstractBaseUser) -> None:
    # given: 15 players (R1 b: seven clans of two Generals, one clan of one, whichever it is)
    # on a map where the Unicorn have one home province: enough for R1's proposal, where the
    # Unicorn are the smaller clan, so the tournament is created
    data = rokugan_map().to_dict()
    unicorn = [p for p in data["provinces"] if p["home_clan"] == "unicorn"]
    kept = next(p for p in unicorn if p["castle"])
    for province in unicorn:
        if province is not kept:
            province["home_clan"] = None
    game_map = map_import(slug="small-unicorn", data=data)
    tournament = services.tournament_create(
        name="t", judge=judge_user, game_map=game_map, player_count=15, now=_now()
    )
    actor = Actor.of_user(judge_user)

    def register(n: int, role: str = "general") -> Any:
        return services.player_register(
            tournament=tournament,
            name=f"Unicorn {n}",
            clan="unicorn",
            role=role,
            actor=actor,
            now=_now(),
        )

    register(1)

    # when / then: a second General fits R1 (the Unicorn may be a full clan) but has nowhere
    # to start (R1, R3.2)
    with pytest.raises(TournamentError) as excinfo:
        register(2)
    assert excinfo.value.code == "map_seating"
    assert "the unicorn have 1 home provinces on this map for 2 Generals" in excinfo.value.message
    assert tournament.players.count() == 1


def test_a_tournament_whose_map_changed_under_it_does_not_start(
    judge_user: AbstractBaseUser, rokugan: Map
) -> None:
    from tests.referees.conftest import register_lineup

    tournament = services.tournament_create(
        name="t", judge=judge_user, game_map=rokugan, player_count=8, now=_now()
    )
    actor = Actor.of_user(judge_user)
    register_lineup(tournament, {c: ["general"] for c in _clans()}, actor, _now())
    campaign = tournament.campaign
    campaign.map_data = map_without_homes("dragon")
    campaign.save(update_fields=["map_data"])
    selectors._MAP_CACHE.clear()

    with pytest.raises(TournamentError) as excinfo:
        services.tournament_start(tournament_id=tournament.pk, actor=actor, now=_now())

    assert excinfo.value.code == "map_seating"
    assert "the dragon have 0 home provinces" in excinfo.value.message
    assert Tournament.objects.get(pk=tournament.pk).phase == "setup"


def _now() -> Any:
    from django.utils import timezone

    return timezone.now()


def _clans() -> tuple[str, ...]:
    from sl5r.rules.clans import CLANS

    return CLANS


# --- Properties: hypothesis-made JSON, never a 5xx, and what is stored is shown ------------

# The values that broke the site, first (as likely as all the others together), then any.
LONE_SURROGATES = st.sampled_from(["\ud83d", "\udc00", "a\udfffb"])
TEXT = LONE_SURROGATES | st.text(max_size=12) | st.just("\u0000")
SPECIAL_NUMBERS = st.sampled_from(
    [math.nan, math.inf, -math.inf, 2**63, -(2**63) - 1, 10**30, 1e308, -1e308, 5e-324, 0.0]
)
NUMBERS = (
    SPECIAL_NUMBERS
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
)
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT
JSON_VALUES = st.recursive(
    SCALARS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=12,
)


def deepen(value: Any, depth: int) -> Any:
    for _ in range(depth):
        value = [value]
    return value


VALUES = JSON_VALUES | st.builds(deepen, JSON_VALUES, st.integers(0, 3 * MAX_DEPTH))
PROPERTY = settings(
    max_examples=40,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
_slugs = itertools.count()


def as_body(value: Any) -> bytes:
    """JSON as a client may write it: NaN and Infinity bare, surrogates escaped."""
    return json.dumps(value, allow_nan=True).encode()


@st.composite
def maps(draw: st.DrawFn) -> dict[str, Any]:
    """A small map whose names, coordinates and sizes are anything, or anything at all."""
    if draw(st.integers(0, 3)) == 0:
        return draw(st.dictionaries(TEXT, VALUES, max_size=4))
    data = small_map(name=draw(TEXT), x=draw(NUMBERS | st.none()), y=draw(NUMBERS | st.none()))
    data["name"] = draw(TEXT | VALUES)  # the map's own name and id may be any JSON
    if draw(st.booleans()):
        data["id"] = draw(VALUES)
    if draw(st.booleans()):
        data["width"] = draw(NUMBERS)
        data["height"] = draw(NUMBERS)
    return data


@PROPERTY
@given(data=maps())
def test_any_map_json_is_never_a_server_error_and_a_stored_map_is_shown(
    data: dict[str, Any], client: Client, rokugan: Map, judge_key: str
) -> None:
    slug = f"m{next(_slugs)}"

    response = send(client, "POST", "/api/maps", as_body({"slug": slug, "data": data}), judge_key)

    assert response.status_code < 500, response.content[:500]
    if response.status_code == 201:
        assert client.get(f"/maps/{slug}/").status_code == 200
        assert client.get("/").status_code == 200
    else:
        assert response.status_code in {400, 422}, response.content[:500]
        assert not Map.objects.filter(slug=slug).exists()


@st.composite
def tournament_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """The bundled map with one province's name and place anything, and any end time."""
    data = rokugan_map().to_dict()
    province = data["provinces"][draw(st.integers(0, len(data["provinces"]) - 1))]
    province["name"] = draw(TEXT | VALUES)
    province["x"] = draw(NUMBERS)
    if draw(st.booleans()):
        data["width"] = draw(NUMBERS)
    body: dict[str, Any] = {
        "name": draw(TEXT.filter(lambda t: t.strip()) | st.just("Cup")),
        "player_count": 16,
        "map": f"t{next(_slugs)}",
        "map_data": data,
    }
    if draw(st.booleans()):
        year = draw(st.integers(1, 9999))
        offset = draw(st.integers(-(24 * 60 - 1), 24 * 60 - 1))
        sign = "-" if offset < 0 else "+"
        body["ends_at"] = (
            f"{year:04d}-{draw(st.integers(1, 12)):02d}-28T{draw(st.integers(0, 23)):02d}:59:59"
            f"{sign}{abs(offset) // 60:02d}:{abs(offset) % 60:02d}"
        )
    if draw(st.booleans()):
        body[draw(st.sampled_from(["turns_total", "turn_seconds", "planning_seconds"]))] = draw(
            NUMBERS
        )
    return body


@PROPERTY
@given(body=tournament_bodies())
def test_any_tournament_json_is_never_a_server_error_and_its_pages_are_shown(
    body: dict[str, Any], client: Client, rokugan: Map, judge_key: str, judge_user: Any
) -> None:
    response = send(client, "POST", "/api/tournaments", as_body(body), judge_key)

    assert response.status_code < 500, response.content[:500]
    if response.status_code == 201:
        t = response.json()["id"]
        assert client.get(f"/referees/tournaments/{t}/screen/").status_code == 200
        assert client.get(f"/maps/{body['map']}/").status_code == 200
        client.force_login(judge_user)
        assert client.get(f"/referees/tournaments/{t}/judge/").status_code == 200
        client.logout()
    else:
        assert response.status_code in {400, 409, 422}, response.content[:500]


ACTION_TYPES = st.sampled_from(
    [
        "stronghold",
        "seating",
        "begin",
        "phase",
        "end_turn",
        "honor",
        "province",
        "ring",
        "declare",
        "truce",
        "production_done",
        "judge_result",
        "unknown",
    ]
)


@PROPERTY
@given(
    kind=ACTION_TYPES,
    fields=st.dictionaries(
        st.sampled_from(
            [
                "army",
                "delta",
                "honor",
                "province_strength",
                "gold",
                "order",
                "first",
                "phase",
                "element",
                "kind",
                "agree",
                "winner",
                "by",
            ]
        )
        | TEXT,
        VALUES,
        max_size=4,
    ),
)
def test_any_battle_action_is_never_a_server_error_and_the_table_is_shown(
    kind: str, fields: dict[str, Any], scene: Scene, client: Client
) -> None:
    # The games read every field of an action themselves (sl5r.rules.games), so this held
    # before the body check too; it guards the one path where a player's JSON reaches a
    # table's stored state and the log.
    t = scene.id
    b = scene.battle.pk
    battle = Battle.objects.get(pk=b)
    if battle.status == "meeting":  # the game is played only once a battle is voted
        vote = as_body({"vote": "battle", "army": "lion-1"})
        assert (
            send(
                client, "POST", f"/api/tournaments/{t}/battles/{b}/vote", vote, scene.judge_key
            ).status_code
            == 200
        )

    response = send(
        client,
        "POST",
        f"/api/tournaments/{t}/battles/{b}/actions",
        as_body({**fields, "type": kind}),
        scene.judge_key,
    )

    assert response.status_code < 500, response.content[:500]
    assert response.status_code in {200, 400, 409, 422}, response.content[:500]
    shown = send(client, "GET", f"/api/tournaments/{t}/battles/{b}", b"", scene.judge_key)
    assert shown.status_code == 200
    client.force_login(scene.game.judge)
    assert client.get(f"/tournaments/{t}/battles/{b}/").status_code == 200
    assert client.get(f"/referees/tournaments/{t}/judge/").status_code == 200
    assert client.get(f"/api/tournaments/{t}/log").status_code == 200
    client.logout()
