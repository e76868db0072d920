"""Issue 12: the settle window adapts to the order requests still waiting to be answered.

A turn is resolved only once no order request for its tournament that arrived before its
deadline is still waiting (``sl5r.serving.waiting_orders``), with ``SL5R_ORDER_SETTLE_SECONDS`` as a
floor and ``SL5R_ORDER_SETTLE_MAX_SECONDS`` as a ceiling. Each test registers requests as
``sl5r.serving.threaded_http`` does on arrival.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
import redis
from django.utils import timezone
from pytest_django import Settings

from referees import services, tasks
from referees.models import LogEntry
from sl5r.serving import waiting_orders
from sl5r.serving.waiting_orders import WAITING, WaitingOrders, order_tournament
from tests.referees import test_tasks
from tests.referees.conftest import Game
from tests.referees.test_tasks import Sent

SETTLE = timedelta(seconds=2)
CEILING = timedelta(seconds=15)
MOMENT = timedelta(milliseconds=1)

sent = test_tasks.sent


@pytest.fixture
def windows(settings: Settings) -> None:
    settings.SL5R_ORDER_SETTLE_SECONDS = SETTLE.total_seconds()
    settings.SL5R_ORDER_SETTLE_MAX_SECONDS = CEILING.total_seconds()
    settings.REDIS_URL = ""


@pytest.fixture
def waiting() -> Iterator[list[tuple[int, int]]]:
    """Requests registered in this process's registry, taken off after the test."""
    tokens: list[tuple[int, int]] = []
    yield tokens
    for token in tokens:
        WAITING.done(token)


def deadline_of(game: Game) -> datetime:
    deadline = game.tournament.deadline
    assert deadline is not None
    return deadline


def resolutions(game: Game) -> int:
    return LogEntry.objects.filter(tournament=game.id, action="turn_resolved").count()


@pytest.mark.parametrize(
    ("method", "path", "expected"),
    [
        ("PUT", "/api/tournaments/7/orders/mine", 7),
        ("DELETE", "/api/tournaments/7/orders/mine", 7),
        ("PUT", "/api/tournaments/12/armies/crab-1/on-swap", 12),
        ("PUT", "/api/tournaments/12/armies/crab-1/order", 12),
        ("DELETE", "/api/tournaments/12/armies/crab-1/order", 12),
        ("GET", "/api/tournaments/7/orders/mine", None),
        ("PUT", "/api/tournaments/7/state", None),
        ("POST", "/api/tournaments/7/clock/resolve-now", None),
        ("PUT", "/healthz", None),
    ],
)
def test_only_writes_to_the_order_endpoints_count_as_orders(
    method: str, path: str, expected: int | None
) -> None:
    assert order_tournament(method, path) == expected


@pytest.mark.django_db
def test_a_turn_waits_past_the_window_for_an_order_that_arrived_in_time(
    game16: Game, windows: None, waiting: list[tuple[int, int]]
) -> None:
    deadline = deadline_of(game16)
    waiting.append(WAITING.add(game16.id, deadline - MOMENT))

    held = services.clock_tick_outcome(tournament_id=game16.id, now=deadline + SETTLE)
    swept = services.clock_sweep(now=deadline + SETTLE + timedelta(seconds=5))
    WAITING.done(waiting.pop())
    resolved = services.clock_tick(tournament_id=game16.id, now=deadline + SETTLE * 2)

    assert held == services.TICK_HELD
    assert swept == 0
    assert resolved is True
    assert resolutions(game16) == 1


@pytest.mark.django_db
def test_requests_that_arrived_late_or_for_another_tournament_do_not_hold_the_turn(
    game16: Game, windows: None, waiting: list[tuple[int, int]]
) -> None:
    deadline = deadline_of(game16)
    waiting.append(WAITING.add(game16.id, deadline))  # at the deadline: late (R4)
    waiting.append(WAITING.add(game16.id + 1000, deadline - MOMENT))

    assert services.clock_tick(tournament_id=game16.id, now=deadline + SETTLE) is True
    assert resolutions(game16) == 1


@pytest.mark.django_db
def test_the_window_stays_a_floor(
    game16: Game, windows: None, waiting: list[tuple[int, int]]
) -> None:
    deadline = deadline_of(game16)

    outcome = services.clock_tick_outcome(tournament_id=game16.id, now=deadline + SETTLE - MOMENT)

    assert outcome == services.TICK_NOTHING
    assert resolutions(game16) == 0


@pytest.mark.django_db
def test_at_the_ceiling_the_turn_resolves_and_what_still_waits_is_late(
    game16: Game, windows: None, waiting: list[tuple[int, int]]
) -> None:
    deadline = deadline_of(game16)
    waiting.append(WAITING.add(game16.id, deadline - MOMENT))

    before = services.clock_tick_outcome(tournament_id=game16.id, now=deadline + CEILING - MOMENT)
    at = services.clock_tick_outcome(tournament_id=game16.id, now=deadline + CEILING)

    assert before == services.TICK_HELD
    assert at == services.TICK_DONE
    assert resolutions(game16) == 1


@pytest.mark.django_db
def test_a_held_celery_tick_sends_itself_again_shortly(
    game16: Game,
    windows: None,
    waiting: list[tuple[int, int]],
    sent: Sent,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deadline = deadline_of(game16)
    waiting.append(WAITING.add(game16.id, deadline - MOMENT))
    monkeypatch.setattr(timezone, "now", lambda: deadline + SETTLE)

    assert tasks.tournament_tick(game16.id) is False

    assert sent.calls == [{"args": [game16.id], "countdown": tasks.HELD_COUNTDOWN}]
    assert resolutions(game16) == 0


# --- Redis: what the worker sees of the web processes ------------------------------------


@pytest.fixture
def redis_settings(
    settings: Settings, redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """Redis on; the registries of a test publish only when it says so (no thread)."""
    settings.REDIS_URL = redis_url
    monkeypatch.setattr(WaitingOrders, "_publish_in_background", lambda self: None)
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(f"{waiting_orders.KEY_PREFIX}:*"):
        client.delete(key)
    yield redis_url
    for key in client.scan_iter(f"{waiting_orders.KEY_PREFIX}:*"):
        client.delete(key)
    client.close()


@pytest.mark.redis
def test_another_process_sees_the_published_requests_until_they_are_answered(
    redis_settings: str,
) -> None:
    web, worker = WaitingOrders(), WaitingOrders()
    deadline = datetime(2026, 12, 1, 12, 0, tzinfo=datetime.now().astimezone().tzinfo)
    token = web.add(5, deadline - MOMENT)
    web.add(5, deadline + MOMENT)  # late: does not count
    published = web.publish(set())

    seen = worker.remote_count(5, deadline)
    other_tournament = worker.remote_count(6, deadline)
    web.done(token)
    web.publish(published)

    assert (seen, other_tournament) == (1, 0)
    assert worker.remote_count(5, deadline) == 0
    assert web.remote_count(5, deadline) == 0  # its own entries are counted locally


@pytest.mark.redis
def test_a_dead_processs_requests_expire(
    redis_settings: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A web process killed mid-request stops refreshing its keys: they expire."""
    monkeypatch.setattr(waiting_orders, "PUBLISH_TTL", 0.3)
    dead, worker = WaitingOrders(), WaitingOrders()
    deadline = datetime(2026, 12, 1, 12, 0, tzinfo=datetime.now().astimezone().tzinfo)
    dead.add(5, deadline - MOMENT)
    dead.publish(set())
    assert worker.remote_count(5, deadline) == 1

    gone = False
    for _ in range(50):  # the TTL is Redis's; this only waits for it
        time.sleep(0.1)
        if worker.remote_count(5, deadline) == 0:
            gone = True
            break

    assert gone
    client = redis.Redis.from_url(redis_settings)
    assert not list(client.scan_iter(f"{waiting_orders.KEY_PREFIX}:5*"))
