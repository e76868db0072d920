"""The OpenAPI document describes what the API answers: typed bodies and every refusal.

A client generated from ``/api/openapi.json`` gets models with fields (no free-form object
for a whole answer), knows every status an operation may refuse with, and the answers
validate against their documented schema, keys only some viewers get included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from django.utils import timezone
from ninja.responses import NinjaJSONEncoder

from battles.models import Battle
from battles.selectors import battle_detail
from battles.web.schemas import BattleOut
from referees.api.schemas.reading import StateOut
from referees.kernel.visibility import Viewer
from referees.reading.log import turn_case
from sl5r.api_errors import ERROR_STATUS
from tests.battles.conftest import fight, general, meet
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

# Refused by the API itself rather than by a service's code: a credential (401), a rate
# limit (429), the database down (503).
TRANSPORT_STATUSES = {401, 429, 503}
# They read no tournament: their statuses are their own (test_who_am_i_and_csrf_...).
OWN_STATUSES = {("get", "/api/me"), ("get", "/api/csrf")}


@pytest.fixture
def document(api: Api) -> dict[str, Any]:
    response = api.get("/openapi.json")
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def operations(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, methods in document["paths"].items():
        for method, operation in methods.items():
            yield method, path, operation


def resolved(document: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].removeprefix("#/components/schemas/")
        schema = document["components"]["schemas"][name]
    return schema


def success_schemas(operation: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for status, response in operation["responses"].items():
        if status.startswith("2"):
            yield status, response["content"]["application/json"]["schema"]


def json_of(value: Any) -> Any:
    """``value`` as the API would send it (ninja's encoder), read back."""
    return json.loads(json.dumps(value, cls=NinjaJSONEncoder))


def documented(document: dict[str, Any], method: str, path: str, status: str = "200") -> Any:
    """A validator of the answer ``status`` of an operation, with the document's schemas."""
    jsonschema_rs = pytest.importorskip("jsonschema_rs")
    operation = document["paths"][path][method]
    schema = operation["responses"][status]["content"]["application/json"]["schema"]
    return jsonschema_rs.validator_for({**schema, "components": document["components"]})


def base(game: Game) -> str:
    return f"/tournaments/{game.id}"


# --- Typed answers ---------------------------------------------------------------------------


def test_every_answer_is_an_object_with_fields(document: dict[str, Any]) -> None:
    """No operation answers a free-form object (``dict[str, Any]``) as its whole body."""
    untyped = []
    for method, path, operation in operations(document):
        for status, schema in success_schemas(operation):
            body = resolved(document, schema)
            if body.get("type") == "array":
                body = resolved(document, body["items"])
            if body.get("type") != "object" or not body.get("properties"):
                untyped.append(f"{method.upper()} {path} {status}")

    assert untyped == []


@pytest.mark.parametrize(
    ("method", "path", "schema"),
    [
        ("get", "/api/tournaments/{tournament_id}/map", "CampaignMapOut"),
        ("get", "/api/tournaments/{tournament_id}/log/export", "LogExportOut"),
        ("get", "/api/tournaments/{tournament_id}/turns/{number}/case", "CaseFileOut"),
        ("get", "/api/tournaments/{tournament_id}/battles/{battle_id}", "BattleOut"),
        ("post", "/api/tournaments/{tournament_id}/battles/{battle_id}/vote", "BattleOut"),
        ("post", "/api/tournaments/{tournament_id}/battles/{battle_id}/actions", "BattleOut"),
        (
            "post",
            "/api/tournaments/{tournament_id}/battles/{battle_id}/proposals/{proposal_id}",
            "BattleOut",
        ),
        ("post", "/api/tournaments/{tournament_id}/battles/{battle_id}/result", "BattleOut"),
        ("post", "/api/tournaments/{tournament_id}/battles/{battle_id}/correct", "BattleOut"),
    ],
)
def test_the_answer_is_its_named_model(
    document: dict[str, Any], method: str, path: str, schema: str
) -> None:
    ok = document["paths"][path][method]["responses"]["200"]
    assert ok["content"]["application/json"]["schema"] == {"$ref": f"#/components/schemas/{schema}"}


def test_the_battle_list_is_a_list_of_tables(document: dict[str, Any]) -> None:
    ok = document["paths"]["/api/tournaments/{tournament_id}/battles"]["get"]["responses"]["200"]
    schema = ok["content"]["application/json"]["schema"]
    assert schema["type"] == "array"
    assert schema["items"] == {"$ref": "#/components/schemas/BattleOut"}


# --- Every refusal documented ----------------------------------------------------------------


def test_every_operation_documents_every_status_it_may_refuse_with(
    document: dict[str, Any],
) -> None:
    """The services' codes (sl5r.api_errors.ERROR_STATUS), a bad credential, a rate limit and
    a database outage: a client generated from the document knows each of them."""
    wanted = {str(status) for status in set(ERROR_STATUS.values()) | TRANSPORT_STATUSES}
    missing = {}
    for method, path, operation in operations(document):
        if (method, path) in OWN_STATUSES:
            continue
        left_out = wanted - set(operation["responses"])
        if left_out:
            missing[f"{method.upper()} {path}"] = sorted(left_out)

    assert missing == {}


def test_every_refusal_is_documented_as_the_error_body(document: dict[str, Any]) -> None:
    bodies = set()
    for _, _, operation in operations(document):
        for status, response in operation["responses"].items():
            if status.startswith(("4", "5")):
                bodies.add(response["content"]["application/json"]["schema"]["$ref"])

    # A roster refused line by line (422) also names the lines; it is an ErrorOut with more.
    assert bodies == {"#/components/schemas/ErrorOut", "#/components/schemas/RosterErrorOut"}


def test_who_am_i_documents_its_401_and_csrf_only_its_200(
    api: Api, document: dict[str, Any], game16: Game
) -> None:
    """``/api/me`` reads the credential (401 when it is not valid); ``/api/csrf`` reads none
    and answers anyone, a bad token too."""
    me = document["paths"]["/api/me"]["get"]["responses"]
    csrf = document["paths"]["/api/csrf"]["get"]["responses"]

    assert {"200", "401", "503"} == set(me)
    assert set(csrf) == {"200"}
    assert api.get("/me").status_code == 200
    assert api.get("/me", token="garbage").status_code == 401
    assert api.get("/csrf").status_code == 200
    assert api.get("/csrf", token="garbage").status_code == 200


# --- Answers validate against their documented schema ---------------------------------------


def test_the_state_validates_for_every_kind_of_viewer(
    api: Api, document: dict[str, Any], game16: Game, judge_key: str
) -> None:
    meet(game16)  # a played turn, a table: the keys only some viewers get are there
    path = "/api/tournaments/{tournament_id}/state"
    validator = documented(document, "get", path)

    for token in (judge_key, game16.token(general(game16, "lion-1")), None):
        response = api.get(f"{base(game16)}/state", token=token)
        assert response.status_code == 200
        state = response.json()
        validator.validate(state)
        assert StateOut.model_validate(state).model_dump(mode="json", exclude_unset=True) == state


def test_a_battle_table_validates_and_loses_nothing_for_a_judge_and_a_general(
    api: Api, document: dict[str, Any], game16: Game, judge_key: str
) -> None:
    battle = fight(game16, meet(game16))
    path = "/api/tournaments/{tournament_id}/battles/{battle_id}"
    validator = documented(document, "get", path)
    lion = general(game16, "lion-1")
    viewers = [
        (judge_key, Viewer.judge(label=f"judge {game16.judge.get_username()}")),
        (game16.token(lion), Viewer.of_player(lion)),
    ]

    for token, viewer in viewers:
        response = api.get(f"{base(game16)}/battles/{battle.pk}", token=token)
        assert response.status_code == 200
        table = response.json()
        validator.validate(table)
        assert BattleOut.model_validate(table).model_dump(mode="json", exclude_unset=True) == table
        shown = Battle.objects.get(pk=battle.pk)
        # Every key the selector gives reaches the caller, as it gives it.
        assert table == json_of(battle_detail(battle=shown, viewer=viewer))

    rows = api.get(f"{base(game16)}/battles", token=judge_key).json()
    documented(document, "get", "/api/tournaments/{tournament_id}/battles").validate(rows)
    assert "state" not in rows[0] and "small_farms_total" in rows[0]


def test_the_case_file_and_the_map_validate_and_lose_nothing(
    api: Api, document: dict[str, Any], game16: Game, judge_key: str
) -> None:
    meet(game16)

    case = api.get(f"{base(game16)}/turns/1/case", token=judge_key).json()
    campaign_map = api.get(f"{base(game16)}/map").json()

    documented(document, "get", "/api/tournaments/{tournament_id}/turns/{number}/case").validate(
        case
    )
    documented(document, "get", "/api/tournaments/{tournament_id}/map").validate(campaign_map)
    tournament = game16.refresh()
    assert case == json_of(turn_case(tournament=tournament, number=1))
    assert campaign_map == json_of(tournament.campaign.map_data)


def test_the_log_export_validates(
    api: Api, document: dict[str, Any], game16: Game, judge_key: str
) -> None:
    meet(game16)

    response = api.get(f"{base(game16)}/log/export", token=judge_key)

    assert response.status_code == 200
    exported = json.loads(response.content)
    documented(document, "get", "/api/tournaments/{tournament_id}/log/export").validate(exported)
    assert exported["entries"] and exported["exported_at"] <= timezone.now().isoformat()


# --- Operation ids: what generated clients call ----------------------------------------------


def test_operation_ids_name_the_apps_api_and_the_handler(document: dict[str, Any]) -> None:
    """``<app>_api_<handler>``, whichever module of ``referees.api`` holds the handler:
    moving one between modules renames nothing a client calls."""
    ids = {
        (method, path): operation["operationId"] for method, path, operation in operations(document)
    }
    assert ids[("get", "/api/me")] == "referees_api_me"
    assert ids[("post", "/api/tournaments")] == "referees_api_tournament_create"
    assert ids[("get", "/api/tournaments/{tournament_id}/state")] == "referees_api_state"
    assert (
        ids[("get", "/api/tournaments/{tournament_id}/battles/{battle_id}")]
        == "battles_api_battle_show"
    )
    assert len(set(ids.values())) == len(ids)
    # The old single module's names, not referees_api_clock_clock_pause / _access_csrf.
    assert ids[("post", "/api/tournaments/{tournament_id}/clock/pause")] == (
        "referees_api_clock_pause"
    )
    assert ids[("get", "/api/csrf")] == "referees_api_csrf"
    for operation_id in ids.values():
        assert operation_id.startswith(("referees_api_", "battles_api_")), operation_id
