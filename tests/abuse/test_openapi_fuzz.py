"""Schemathesis against ``/api/openapi.json``: no operation answers a 5xx, whatever it is sent.

Every operation of the OpenAPI document is fuzzed in-process through Django's WSGI
application (no server), once as a judge (his API key) and once as a General (his join
token), on a tournament in play (``scene``: turn 1 played, turn 2 open, a battle table
open). Generated ids that are valid integers are replaced by the tournament's real ones
(its id, a player, an army, the table, the played turn), so that the bodies reach the
services instead of stopping at a 404; ids that are not integers are sent as generated.

Checked on every answer: not a 5xx; a status the operation documents; the documented content
type; the documented body (the error body ``{detail, code}`` included); and invalid input
never accepted with a 2xx. Generation is deterministic (``derandomize``) so that CI repeats
the same requests; the rate limits are off so that the examples get past them.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from django.core import signals
from django.db import close_old_connections
from django.test import Client
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

from sl5r.api import api
from sl5r.wsgi import application
from tests.abuse.conftest import Scene

pytestmark = pytest.mark.slow  # the whole module takes a minute or two

# Enough to reach past validation into every service at least a few times while keeping
# the module near a minute on two cores (41 operations, two callers).
MAX_EXAMPLES = 12

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
]


def _document() -> dict[str, Any]:
    """The OpenAPI document as JSON has it (status codes as strings)."""
    document: dict[str, Any] = json.loads(json.dumps(api.get_openapi_schema()))
    return document


def _schema() -> Any:
    # The document /api/openapi.json serves (test_the_fuzzed_document_is_the_served_one);
    # built at import so that each operation is a test of its own, with a fresh tournament.
    loaded = schemathesis.openapi.from_dict(_document())
    loaded.app = application
    loaded.config.generation.update(max_examples=MAX_EXAMPLES, deterministic=True)
    return loaded


schema = _schema()


def test_the_fuzzed_document_is_the_served_one(client: Client, db: None) -> None:
    served = client.get("/api/openapi.json")
    assert served.status_code == 200
    assert served.json() == _document()


@pytest.fixture(autouse=True)
def _in_test_transaction(settings: Any) -> Iterator[None]:
    """Requests run inside the test's transaction, as with Django's test client.

    Django's WSGI handler checks the connection around each request and closes one that is
    not in autocommit mode, which is the test's open transaction; the test client
    disconnects that check, and so does this. The rate limits are off for the same run.
    """
    settings.SL5R_RATE_LIMITS = {"orders": None, "joins": None}
    signals.request_started.disconnect(close_old_connections)
    signals.request_finished.disconnect(close_old_connections)
    yield
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)


def _real_ids(case: Any, scene: Scene, general_army: str) -> None:
    """Point integer ids at the tournament's own things; leave malformed ones as sent."""
    game = scene.game
    other = next(p for p in game.players if p.army is not None and p.army.code != general_army)
    real: dict[str, Any] = {
        "tournament_id": scene.id,
        "battle_id": scene.battle.pk,
        "player_id": other.pk,
        "number": 1,
        "code": "unicorn-2",
        "clan": None,
    }
    params = case.path_parameters or {}
    for name, value in list(params.items()):
        wanted = real.get(name)
        if wanted is None:
            continue
        if name == "code" or (isinstance(value, int) and not isinstance(value, bool)):
            params[name] = wanted


def _call(case: Any, token: str) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {token}"}, checks=CHECKS)


FUZZ_SETTINGS = settings(
    max_examples=MAX_EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)


@schema.parametrize()
@FUZZ_SETTINGS
def test_no_operation_fails_for_a_judge(case: Any, scene: Scene) -> None:
    _real_ids(case, scene, general_army="lion-1")
    _call(case, scene.judge_key)


@schema.parametrize()
@FUZZ_SETTINGS
def test_no_operation_fails_for_a_general(case: Any, scene: Scene) -> None:
    _real_ids(case, scene, general_army="lion-1")
    _call(case, scene.token_of("lion-1"))
