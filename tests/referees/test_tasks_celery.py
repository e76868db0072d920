"""A real Celery worker and beat resolve turns on time, each exactly once.

The worker and beat run as subprocesses against the Django test database on PostgreSQL (so
the test commits its data: ``transaction=True``) and a Redis database of their own. Runs in
the PostgreSQL pass of ``make test``; on SQLite (an in-process test database the
subprocesses cannot open) it is skipped.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from referees import tasks
from referees.models import LogEntry, Tournament
from sl5r.celery import app
from strategic_map.models import Turn
from tests.referees import celery_processes
from tests.referees.celery_processes import Service, service_tails

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.slow]

CELERY_REDIS_DB = 14  # the broker's Redis database (celery_processes.celery_env)
TURN_SECONDS = 2
# Beat sweeps every 2 s; the tick sent for a deadline runs at the deadline itself.
SWEEP_LATENESS = timedelta(seconds=2.5)
ETA_LATENESS = timedelta(seconds=1.0)
WAIT_SECONDS = 40.0


celery_env = celery_processes.celery_env
celery_start = celery_processes.celery_start


def resolved(tournament: Tournament) -> list[Turn]:
    return list(
        Turn.objects.filter(campaign=tournament.campaign_id, status=Turn.Status.RESOLVED).order_by(
            "number"
        )
    )


def wait_for_resolved(tournament: Tournament, count: int, *services: Service) -> list[Turn]:
    end = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < end:
        turns = resolved(tournament)
        if len(turns) >= count:
            return turns
        time.sleep(0.1)
    pytest.fail(
        f"{count} turns were not resolved in {WAIT_SECONDS} s\n{service_tails(*services)}",
        pytrace=False,
    )


def assert_resolved_once_on_time(turns: list[Turn], lateness: timedelta) -> None:
    for turn in turns:
        assert turn.deadline is not None and turn.resolved_at is not None
        late = turn.resolved_at - turn.deadline
        assert timedelta(0) <= late <= lateness, f"turn {turn.number} resolved {late} late"
        assert turn.resolved_by == "clock"


def assert_no_turn_twice(tournament: Tournament) -> None:
    numbers = list(
        Turn.objects.filter(campaign=tournament.campaign_id)
        .order_by("number")
        .values_list("number", flat=True)
    )
    assert numbers == list(range(1, len(numbers) + 1))
    logged = Counter(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved").values_list(
            "turn", flat=True
        )
    )
    assert set(logged.values()) <= {1}
    assert sorted(logged) == [t.number for t in resolved(tournament)]


def test_a_celery_worker_and_beat_resolve_turns_on_time_exactly_once(
    celery_start: Callable[[str], Service],
    celery_env: dict[str, str],
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """The tick sent for a deadline resolves that turn at the deadline; with beat running,
    three 2-second turns in a row are each resolved within 2.5 s of their deadline, once."""
    # given: a worker (without beat, only the tick sent for the deadline can resolve)
    worker = celery_start("worker")
    worker.wait_for(" ready.")
    first = make_running_tournament(turn_seconds=TURN_SECONDS, turns_total=100)
    assert first.deadline is not None
    with app.connection_for_write(celery_env["REDIS_URL"]) as broker:
        tasks.tournament_tick.apply_async(args=[first.pk], eta=first.deadline, connection=broker)

    # when
    turns = wait_for_resolved(first, 1, worker)

    # then
    assert_resolved_once_on_time(turns[:1], ETA_LATENESS)

    # given: beat sweeping every 2 seconds, and a tournament that starts now
    beat = celery_start("beat")
    beat.wait_for("Sending due task")
    second = make_running_tournament(turn_seconds=TURN_SECONDS, turns_total=100)
    started = timezone.now()

    # when
    turns = wait_for_resolved(second, 3, worker, beat)

    # then
    assert_resolved_once_on_time(turns[:3], SWEEP_LATENESS)
    assert turns[2].resolved_at is not None
    assert turns[2].resolved_at - started < timedelta(seconds=3 * TURN_SECONDS) + SWEEP_LATENESS * 3
    for tournament in (first, second):
        assert_no_turn_twice(tournament)
    assert "Traceback" not in worker.output(), worker.tail()
