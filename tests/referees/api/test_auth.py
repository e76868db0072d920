"""Authentication, CSRF, rate limits, the OpenAPI document and the error format."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpResponse
from django.test import Client, override_settings
from django.utils import timezone

from referees import services
from referees.http.ratelimit import Rate
from referees.kernel.access import judge_key_create
from referees.models import JudgeKey
from strategic_map.models import Order
from tests.referees.conftest import Api, Game

pytestmark = pytest.mark.django_db

CSRF_SECRET = "a" * 32
HOLD = {"kind": "hold"}


def mine(game: Game) -> str:
    return f"/tournaments/{game.id}/orders/mine"


def assert_error(response: HttpResponse, status: int, code: str | None = None) -> dict[str, Any]:
    """Every error: the status, JSON, a ``detail`` naming the problem and a ``code``."""
    assert response.status_code == status, response.content
    assert response["Content-Type"].startswith("application/json")
    body: dict[str, Any] = response.json()
    assert isinstance(body["detail"], str) and body["detail"].strip()
    assert isinstance(body["code"], str) and body["code"]
    if code is not None:
        assert body["code"] == code
    return body


# --- Join tokens as bearer tokens and sessions ----------------------------------------------


def test_join_logs_the_session_in(client: Client, game16: Game) -> None:
    """POST /api/join with a token: the session acts as that player from then on."""
    general = game16.player("crab")
    api = Api(client)

    response = api.post("/join", {"token": game16.token(general)})

    assert response.status_code == 200
    assert response.json()["player"]["army"] == "crab-1"
    me = api.get("/me").json()
    assert me["authenticated_as"] == "session"
    assert me["player"]["id"] == general.pk
    assert api.put(mine(game16), HOLD).status_code == 200


def test_join_with_a_bad_token_is_403(api: Api, game16: Game) -> None:
    body = assert_error(api.post("/join", {"token": "1:nonce:forged"}), 403, "bad_token")

    assert "revoked" in body["detail"]


def test_revoked_link_bearer_is_401_and_nothing_is_stored(
    api: Api, game16: Game, judge_key: str
) -> None:
    general = game16.player("crab")
    token = game16.token(general)
    api.delete(f"/tournaments/{game16.id}/players/{general.pk}/join-link", token=judge_key)

    response = api.put(mine(game16), HOLD, token=token)

    assert_error(response, 401, "bad_token")
    assert not Order.objects.exists()


def test_the_bearer_scheme_is_read_in_any_case_and_another_scheme_is_no_token(
    api: Api, game16: Game
) -> None:
    token = game16.token(game16.player("crab"))
    for scheme in ("Bearer", "bearer", "BEARER"):
        headers = {"Authorization": f"{scheme} {token}"}
        assert api.put(mine(game16), HOLD, headers=headers).status_code == 200, scheme
    # Basic credentials are not a join token: the request has none, and is refused so.
    response = api.put(mine(game16), HOLD, headers={"Authorization": f"Basic {token}"})
    assert_error(response, 401)
    response = api.put(mine(game16), HOLD, headers={"Authorization": "Bearer"})
    assert_error(response, 401, "bad_token")


def test_revoking_logs_a_joined_device_out(client: Client, game16: Game) -> None:
    """The session keeps the link's nonce: once revoked, the device is nobody."""
    general = game16.player("crab")
    api = Api(client)
    api.post("/join", {"token": game16.token(general)})
    services.player_token_revoke(player=general, actor=game16.judge_actor, now=timezone.now())

    response = api.put(mine(game16), HOLD)

    assert_error(response, 401, "unauthorized")
    assert not Order.objects.exists()
    assert api.get("/me").json()["player"] is None


def test_reissue_logs_a_joined_device_out(client: Client, game16: Game) -> None:
    general = game16.player("crab")
    api = Api(client)
    api.post("/join", {"token": game16.token(general)})
    new = services.player_token_reissue(
        player=general, actor=game16.judge_actor, now=timezone.now()
    )

    assert api.put(mine(game16), HOLD).status_code == 401
    assert api.post("/join", {"token": new}).status_code == 200
    assert api.put(mine(game16), HOLD).status_code == 200


def test_a_forged_token_is_401(api: Api, game16: Game) -> None:
    assert_error(api.get("/me", token="garbage"), 401, "bad_token")
    assert_error(api.get("/me", token="sl5rj_not-a-key"), 401, "bad_token")


# --- Judge API keys ------------------------------------------------------------------------


def test_only_the_keys_hash_is_stored(judge_user: AbstractBaseUser) -> None:
    issued = judge_key_create(user=judge_user, label="laptop")

    stored = JudgeKey.objects.get()
    assert issued.key not in stored.key_hash
    assert len(stored.key_hash) == 64


def test_a_revoked_judge_key_is_401(api: Api, game16: Game, judge_key: str) -> None:
    JudgeKey.objects.update(revoked_at=timezone.now())

    assert_error(api.post(f"/tournaments/{game16.id}/clock/pause", token=judge_key), 401)
    assert not game16.refresh().paused


def test_a_key_of_an_inactive_user_is_401(api: Api, game16: Game, judge_key: str) -> None:
    game16.judge.is_active = False
    game16.judge.save()

    assert_error(api.get(f"/tournaments/{game16.id}/log", token=judge_key), 401)


# --- CSRF ----------------------------------------------------------------------------------


@pytest.fixture
def csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def with_csrf(client: Client) -> dict[str, str]:
    client.cookies["csrftoken"] = CSRF_SECRET
    return {"X-CSRFToken": CSRF_SECRET}


def test_a_judges_session_post_needs_the_csrf_token(csrf_client: Client, game16: Game) -> None:
    csrf_client.force_login(game16.judge)
    api = Api(csrf_client)
    path = f"/tournaments/{game16.id}/clock/pause"

    refused = api.post(path)
    assert_error(refused, 403, "csrf")
    assert not game16.refresh().paused

    accepted = api.post(path, headers=with_csrf(csrf_client))
    assert accepted.status_code == 200
    assert game16.refresh().paused


def test_a_players_session_put_needs_the_csrf_token(csrf_client: Client, game16: Game) -> None:
    csrf_client.get(f"/join/{game16.token(game16.player('crab'))}")
    api = Api(csrf_client)

    refused = api.put(mine(game16), HOLD)
    assert_error(refused, 403, "csrf")
    assert not Order.objects.exists()

    assert api.put(mine(game16), HOLD, headers=with_csrf(csrf_client)).status_code == 200


def test_session_reads_need_no_csrf_token(csrf_client: Client, game16: Game) -> None:
    csrf_client.force_login(game16.judge)

    assert Api(csrf_client).get(f"/tournaments/{game16.id}/log").status_code == 200


def test_bearer_requests_need_no_csrf_token(
    csrf_client: Client, game16: Game, judge_key: str
) -> None:
    api = Api(csrf_client)

    assert api.put(mine(game16), HOLD, token=game16.token(game16.player("crab"))).status_code == 200
    assert api.post(f"/tournaments/{game16.id}/clock/pause", token=judge_key).status_code == 200


def test_csrf_endpoint_sets_the_cookie(csrf_client: Client, game16: Game) -> None:
    response = Api(csrf_client).get("/csrf")

    assert response.status_code == 200
    assert "csrftoken" in response.cookies
    assert response.json()["csrf_token"]


# --- Rate limits ---------------------------------------------------------------------------


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"orders": "3/min"})
def test_too_many_orders_are_429(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))
    # Three different orders: the same one again would not be stored again.
    for claim in (True, False, True):
        assert api.put(mine(game16), {**HOLD, "claim": claim}, token=token).status_code == 200

    response = api.put(mine(game16), HOLD, token=token)

    body = assert_error(response, 429, "rate_limited")
    assert "order" in body["detail"]
    assert int(response["Retry-After"]) >= 1
    assert Order.objects.count() == 3
    # Each player has his own budget.
    assert (
        api.put(mine(game16), HOLD, token=game16.token(game16.player("crane"))).status_code == 200
    )


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"joins": "2/min"})
def test_too_many_failed_joins_from_one_address_are_429(api: Api, game16: Game) -> None:
    """Once an address has failed the limit, even a good token waits for the window."""
    token = game16.token(game16.player("crab"))
    assert api.post("/join", {"token": "forged-1"}).status_code == 403
    assert api.post("/join", {"token": token}).status_code == 200
    assert api.post("/join", {"token": "forged-2"}).status_code == 403

    response = api.post("/join", {"token": token})

    body = assert_error(response, 429, "rate_limited")
    assert "failed join attempts" in body["detail"]
    assert int(response["Retry-After"]) >= 1


@pytest.mark.usefixtures("rate_window_still")
@override_settings(SL5R_RATE_LIMITS={"joins": "2/min"})
def test_good_joins_are_not_counted(api: Api, game16: Game) -> None:
    """A whole venue may share one address: players joining are never held back."""
    for player in game16.players:
        assert api.post("/join", {"token": game16.token(player)}).status_code == 200


@override_settings(SL5R_RATE_LIMITS={"orders": None})
def test_a_rate_can_be_switched_off(api: Api, game16: Game) -> None:
    token = game16.token(game16.player("crab"))

    for _ in range(40):
        assert api.put(mine(game16), HOLD, token=token).status_code == 200


@pytest.mark.parametrize(
    ("text", "rate"),
    [("30/min", Rate(30, 60)), ("5/10s", Rate(5, 10)), ("100/hour", Rate(100, 3600))],
)
def test_rate_parse(text: str, rate: Rate) -> None:
    assert Rate.parse(text) == rate


def test_rate_parse_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="30/min"):
        Rate.parse("lots")


# --- OpenAPI -------------------------------------------------------------------------------

OPERATIONS = [
    ("post", "/api/tournaments"),
    ("post", "/api/maps"),
    ("get", "/api/lineup"),
    ("post", "/api/join"),
    ("post", "/api/tournaments/{tournament_id}/players"),
    ("get", "/api/tournaments/{tournament_id}/players"),
    ("post", "/api/tournaments/{tournament_id}/players/{player_id}/join-link"),
    ("delete", "/api/tournaments/{tournament_id}/players/{player_id}/join-link"),
    ("post", "/api/tournaments/{tournament_id}/start"),
    ("put", "/api/tournaments/{tournament_id}/positions/{clan}"),
    ("post", "/api/tournaments/{tournament_id}/advance"),
    ("post", "/api/tournaments/{tournament_id}/clock/pause"),
    ("post", "/api/tournaments/{tournament_id}/clock/resume"),
    ("post", "/api/tournaments/{tournament_id}/clock/extend"),
    ("post", "/api/tournaments/{tournament_id}/clock/resolve-now"),
    ("post", "/api/tournaments/{tournament_id}/clock/end"),
    ("post", "/api/tournaments/{tournament_id}/clock/undo"),
    ("put", "/api/tournaments/{tournament_id}/orders/mine"),
    ("delete", "/api/tournaments/{tournament_id}/orders/mine"),
    ("put", "/api/tournaments/{tournament_id}/armies/{code}/order"),
    ("post", "/api/tournaments/{tournament_id}/corrections/army"),
    ("post", "/api/tournaments/{tournament_id}/corrections/control"),
    ("get", "/api/tournaments/{tournament_id}/state"),
    ("get", "/api/tournaments/{tournament_id}/log"),
    ("get", "/api/tournaments/{tournament_id}/log/export"),
    ("get", "/api/tournaments/{tournament_id}/turns/{number}/case"),
    ("get", "/api/tournaments/{tournament_id}/map"),
]


def test_openapi_document_lists_the_operations(api: Api, db: None) -> None:
    response = api.get("/openapi.json")

    assert response.status_code == 200
    document = response.json()
    listed = {(m, p) for p, ops in document["paths"].items() for m in ops}
    missing = [op for op in OPERATIONS if op not in listed]
    assert missing == []
    schemes = document["components"]["securitySchemes"]
    assert {"BearerAuth", "SessionAuth"} <= set(schemes)


def test_the_document_lists_the_401_of_who_am_i(api: Api, game16: Game) -> None:
    """``/api/me`` answers 401 to a token that is not valid (``/api/csrf`` ignores tokens:
    it answers anyone); a client generated from the document must know it."""
    responses = api.get("/openapi.json").json()["paths"]["/api/me"]["get"]["responses"]

    assert "401" in responses
    assert_error(api.get("/me", token="garbage"), 401, "bad_token")
    assert api.get("/csrf", token="garbage").status_code == 200


def test_interactive_docs_load(api: Api, db: None) -> None:
    response = api.get("/docs")

    assert response.status_code == 200
    assert b"openapi.json" in response.content


# --- Errors are always {detail, code} --------------------------------------------------------


def test_every_error_has_a_detail(api: Api, game16: Game, judge_key: str) -> None:
    """A sample of every kind of failure: 4xx JSON with a detail, never a 500."""
    crab = game16.token(game16.player("crab"))
    t = f"/tournaments/{game16.id}"
    cases: list[tuple[HttpResponse, int]] = [
        (api.get("/tournaments/999/state"), 404),
        (api.get("/no/such/endpoint"), 404),
        (api.post(f"{t}/state"), 405),
        (api.post(f"{t}/clock/pause"), 401),
        (api.post(f"{t}/clock/pause", token="forged"), 401),
        (api.post(f"{t}/clock/pause", token=crab), 403),
        (api.put(mine(game16), {"kind": "teleport"}, token=crab), 422),
        (api.put(mine(game16), {"kind": "move", "path": ["atlantis"]}, token=crab), 422),
        (
            api.call(
                "PUT", mine(game16), token=crab, data="{oops", content_type="application/json"
            ),
            400,
        ),
        (api.put(mine(game16), [1, 2, 3], token=crab), 422),
        (api.get(f"{t}/log?after=-1", token=judge_key), 422),
        (api.get("/tournaments/abc/state"), 422),
        (api.get(f"{t}/turns/7/case", token=judge_key), 404),
        (api.post(f"{t}/advance", token=judge_key), 409),
        (api.post(f"{t}/start", token=judge_key), 409),
        (api.post("/maps", {"slug": "m", "data": {"provinces": "none"}}, token=judge_key), 422),
        (api.post("/join", {}), 422),
    ]
    for response, status in cases:
        assert_error(response, status)
