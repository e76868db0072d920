"""A database that refuses connections: a clear 503 for every request, never a 500.

Every query of this thread's connection raises ``OperationalError`` as a refused connection
does (``connection.execute_wrapper``), and requests go through the whole middleware stack
with Django's test client. The real outage, a PostgreSQL database refusing connections
under a running server, is in ``tests/faults/test_service_faults.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from typing import Any

import pytest
from django.db import IntegrityError, OperationalError, connection
from django.test import Client, RequestFactory
from django.utils import timezone
from pytest_django import Settings

from referees.clock_thread import InProcessClock
from referees.models import LogEntry, Player, Tournament
from referees.services import player_token
from sl5r.serving.database_outage import OUTAGE_CODE, DatabaseOutageMiddleware
from strategic_map.models import Order

# Names the server's host, as psycopg's message does: it must stay in the server's log.
REFUSAL = (
    'connection to server at "db.internal.example" (10.0.0.7), port 5432 failed: FATAL:  '
    'database "sl5r" is not currently accepting connections'
)
ENGLISH = "The database is not answering. Try again in a few seconds."
RUSSIAN = "База данных не отвечает. Повторите через несколько секунд."

pytestmark = pytest.mark.django_db(transaction=True)


@contextmanager
def database_refusing() -> Iterator[None]:
    """Every query of this thread's connection fails as with a database that refuses it."""

    def refuse(*args: Any) -> Any:
        raise OperationalError(REFUSAL)

    with connection.execute_wrapper(refuse):
        yield


def general_of(tournament: Tournament) -> tuple[Player, str]:
    player = Player.objects.filter(tournament=tournament, role="general").order_by("pk").first()
    assert player is not None and player.army is not None
    return player, player_token(player)


@pytest.mark.parametrize("debug", [False, True], ids=["debug-off", "debug-on"])
def test_an_api_call_during_an_outage_answers_503_naming_the_problem(
    client: Client,
    settings: Settings,
    make_running_tournament: Callable[..., Tournament],
    debug: bool,
) -> None:
    """GET state answers 503 ``database_unavailable`` with Retry-After, with DEBUG on too
    (where the API would otherwise answer a traceback), and leaks nothing of the error."""
    tournament = make_running_tournament()
    settings.DEBUG = debug

    with database_refusing():
        response = client.get(f"/api/tournaments/{tournament.pk}/state")

    assert response.status_code == 503
    assert response["Content-Type"].startswith("application/json")
    assert response.json() == {"detail": ENGLISH, "code": OUTAGE_CODE}
    assert response["Retry-After"] == "5"
    assert b"db.internal.example" not in response.content


def test_an_order_refused_by_an_outage_is_not_stored_and_succeeds_when_sent_again(
    client: Client, make_running_tournament: Callable[..., Tournament]
) -> None:
    """PUT orders/mine during the outage: 503, no order, no log entry; the same PUT once
    the database answers again is stored."""
    tournament = make_running_tournament()
    player, token = general_of(tournament)
    assert player.army is not None
    neighbour = _a_neighbour(tournament, player)
    url = f"/api/tournaments/{tournament.pk}/orders/mine"
    body = {"kind": "move", "path": [neighbour], "claim": True}
    headers = {"Authorization": f"Bearer {token}"}

    with database_refusing():
        refused = client.put(url, body, content_type="application/json", headers=headers)

    assert refused.status_code == 503, refused.content
    assert refused.json()["code"] == OUTAGE_CODE
    assert not Order.objects.filter(army=player.army).exists()
    assert not LogEntry.objects.filter(tournament=tournament, action="order_given").exists()

    again = client.put(url, body, content_type="application/json", headers=headers)

    assert again.status_code == 200, again.content
    assert list(Order.objects.filter(army=player.army).values_list("path", flat=True)) == [
        [neighbour]
    ]


@pytest.mark.parametrize(
    ("language", "text"), [("en", ENGLISH), ("ru", RUSSIAN)], ids=["english", "russian"]
)
def test_a_page_during_an_outage_is_a_short_503_page_in_the_callers_language(
    client: Client, settings: Settings, language: str, text: str
) -> None:
    """An HTML page (the map list) answers a 503 page that says what is wrong in the
    caller's language and reloads itself, with DEBUG on, and without a traceback."""
    settings.DEBUG = True

    with database_refusing():
        response = client.get("/", headers={"Accept-Language": language})

    assert response.status_code == 503
    assert response["Content-Type"].startswith("text/html")
    page = response.content.decode()
    assert text in page
    assert f'<html lang="{language}">' in page
    assert '<meta http-equiv="refresh" content="5">' in page
    assert response["Retry-After"] == "5"
    assert "Traceback" not in page and "db.internal.example" not in page
    assert len(page) < 1000


def test_healthz_during_an_outage_answers_503_json(client: Client) -> None:
    with database_refusing():
        response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json() == {"status": "error", "database": "unavailable"}


def test_requests_succeed_again_once_the_database_answers(
    client: Client, make_running_tournament: Callable[..., Tournament]
) -> None:
    """The same connection serves again after the outage: no restart is needed."""
    tournament = make_running_tournament()
    with database_refusing():
        assert client.get(f"/api/tournaments/{tournament.pk}/state").status_code == 503
        assert client.get("/").status_code == 503

    assert client.get(f"/api/tournaments/{tournament.pk}/state").status_code == 200
    assert client.get("/").status_code == 200


@pytest.mark.parametrize(
    "error", [IntegrityError("duplicate key"), ValueError("a bug")], ids=["integrity", "bug"]
)
def test_other_errors_are_left_to_django(error: Exception) -> None:
    """Only connection errors are an outage; anything else stays a 500 (and is logged)."""
    middleware = DatabaseOutageMiddleware(lambda request: pytest.fail("not called"))
    request = RequestFactory().get("/")

    assert middleware.process_exception(request, error) is None


def test_the_clock_survives_a_sweep_failing_on_the_database_and_resolves_the_turn_once(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """A sweep that meets a refused connection is counted as failed and resolves nothing;
    the next sweep, with the database back, resolves the overdue turn once."""
    tournament = make_running_tournament(turn_seconds=60, now=timezone.now() - timedelta(hours=1))
    clock = InProcessClock(interval=1.0)

    with database_refusing():
        failed = clock.sweep_once()
    resolved = clock.sweep_once()
    nothing = clock.sweep_once()

    assert (failed, resolved, nothing) == (0, 1, 0)
    assert clock.failures == 1
    assert list(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved").values_list(
            "turn", flat=True
        )
    ) == [1]


def _a_neighbour(tournament: Tournament, player: Player) -> str:
    from sl5r.rules.mapgraph import rokugan_map

    assert player.army is not None
    province = tournament.campaign.board["armies"][player.army.code]["province"]
    graph = rokugan_map()
    return sorted(p for p in graph.neighbours[province] if not graph.provinces[p].impassable)[0]
