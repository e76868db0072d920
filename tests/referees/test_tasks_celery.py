"""A real Celery worker and beat resolve turns on time, each exactly once.

The worker and beat run as subprocesses against the Django test database on PostgreSQL (so
the test commits its data: ``transaction=True``) and a Redis database of their own. Runs in
the PostgreSQL pass of ``make test``; on SQLite (an in-process test database the
subprocesses cannot open) it is skipped.

The test gives no orders, so only the tick it sends itself could race it: that turn is held
open (``HELD_TURN_SECONDS``) until the tick is on its way, then its judge sets its time left
(``time_left_setting``, under the tournament's lock that every clock takes first). How late
the clocks act is bounded by ``LATENESS_MOST`` (the product's line for a stalled clock), not
by what an idle machine does; the measured lateness is printed.
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
from referees.services import Actor
from sl5r.celery import app
from strategic_map.models import Turn
from tests.judge_clock import HELD_TURN_SECONDS, time_left_setting
from tests.referees import celery_processes
from tests.referees.celery_processes import LATENESS_MOST, Service, service_tails

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.slow]

CELERY_REDIS_DB = 14  # the broker's Redis database (celery_processes.celery_env)
TURN_SECONDS = 2
# An upper bound, for the turns to be resolved: they take TURN_SECONDS each, and the clocks
# act within LATENESS_MOST of a deadline.
WAIT_SECONDS = 60.0


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


def assert_resolved_once_on_time(turns: list[Turn]) -> list[float]:
    """Each turn resolved by the clock, at or after its deadline and within LATENESS_MOST of
    it; how late each was, in seconds (printed)."""
    lateness = []
    for turn in turns:
        assert turn.deadline is not None and turn.resolved_at is not None
        late = turn.resolved_at - turn.deadline
        assert timedelta(0) <= late <= LATENESS_MOST, f"turn {turn.number} resolved {late} late"
        assert turn.resolved_by == "clock"
        lateness.append(round(late.total_seconds(), 3))
    return lateness


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
    three 2-second turns in a row are each resolved at their deadline (by the tick the worker
    sends itself, or beat's sweep every 2 s), once."""
    # given: a worker (without beat, only the tick sent for the deadline can resolve), and a
    # turn held open until that tick is on its way: then its judge gives it TURN_SECONDS
    worker = celery_start("worker")
    worker.wait_for(" ready.")
    first = make_running_tournament(turn_seconds=HELD_TURN_SECONDS, turns_total=100)
    judge = Actor.of_user(first.judges.get())
    with (
        app.connection_for_write(celery_env["REDIS_URL"]) as broker,
        time_left_setting(first.pk, turn=1, seconds=TURN_SECONDS, actor=judge) as deadline,
    ):
        # Before the deadline is committed: the tick cannot be sent too late for it.
        tasks.tournament_tick.apply_async(args=[first.pk], eta=deadline, connection=broker)

    # when
    turns = wait_for_resolved(first, 1, worker)

    # then
    assert turns[0].deadline == deadline
    ticked = assert_resolved_once_on_time(turns[:1])

    # given: beat sweeping every 2 seconds, and a tournament that starts now
    beat = celery_start("beat")
    beat.wait_for("Sending due task")
    second = make_running_tournament(turn_seconds=TURN_SECONDS, turns_total=100)
    started = timezone.now()

    # when
    turns = wait_for_resolved(second, 3, worker, beat)

    # then
    swept = assert_resolved_once_on_time(turns[:3])
    assert turns[2].resolved_at is not None
    assert turns[2].resolved_at - started < timedelta(seconds=3 * TURN_SECONDS) + LATENESS_MOST * 3
    for tournament in (first, second):
        assert_no_turn_twice(tournament)
    assert "Traceback" not in worker.output(), worker.tail()
    print(f"\nresolved after the deadline (s): by the tick {ticked}; with beat {swept}")
