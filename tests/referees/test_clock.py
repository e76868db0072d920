"""The in-process clock: a thread that sweeps for due tournaments and resolves their turns.

These tests run the real thread in real time with short turns; every wait is bounded.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import pytest
from django.db import InterfaceError, OperationalError
from django.utils import timezone
from pytest_django import Settings

from referees import clock_thread as clock_module
from referees import services
from referees.clock_thread import InProcessClock, clock_sweep_now
from referees.models import LogEntry, Tournament
from referees.services import clock as clock_services
from strategic_map.models import Turn

WAIT_SECONDS = 15.0
# The clock sweeps every INTERVAL: a due turn is resolved within that on an idle machine (a
# resolution takes a few milliseconds). The bound checked is the product's own line for a
# stalled clock (STALL_SECONDS), which a loaded machine does not reach by chance; the test
# prints the lateness it saw.
INTERVAL = 0.05
LATENESS = timedelta(seconds=clock_services.STALL_SECONDS)

pytestmark = pytest.mark.django_db(transaction=True)


def wait_for(condition: Callable[[], bool], timeout: float = WAIT_SECONDS) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return True
        time.sleep(0.01)
    return condition()


class CountingSweep:
    """The clock's default sweep, counting the steps it took; ``reached(n)`` waits for n."""

    def __init__(self) -> None:
        self.steps = 0
        self.calls = 0
        self._changed = threading.Condition()

    def __call__(self) -> int:
        done = clock_sweep_now()
        with self._changed:
            self.calls += 1
            self.steps += done
            self._changed.notify_all()
        return done

    def reached(self, *, steps: int = 0, calls: int = 0) -> bool:
        with self._changed:
            return self._changed.wait_for(
                lambda: self.steps >= steps and self.calls >= calls, timeout=WAIT_SECONDS
            )


def turns(tournament: Tournament) -> list[Turn]:
    return list(Turn.objects.filter(campaign=tournament.campaign_id).order_by("number", "id"))


def resolutions(tournament: Tournament) -> list[int]:
    return list(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved")
        .order_by("id")
        .values_list("turn", flat=True)
    )


def test_the_clock_thread_resolves_due_turns_on_time_and_opens_the_next(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """Each 1-second turn is resolved just after its deadline, once, and the next one opens
    with its full length."""
    # given
    tournament = make_running_tournament(turn_seconds=1)
    sweep = CountingSweep()
    clock = InProcessClock(interval=INTERVAL, sweep=sweep).start()

    # when
    try:
        reached = sweep.reached(steps=2)
    finally:
        stopped = clock.stop(timeout=WAIT_SECONDS)

    # then
    assert reached, "two turns were not resolved in time"
    assert stopped
    rows = turns(tournament)
    # A machine that stalls the test between the second step and the stop may let the clock
    # resolve turn 3 as well: each turn is still resolved once, in order, and the one after
    # the last resolved is open.
    resolved = [t for t in rows if t.status == Turn.Status.RESOLVED]
    assert len(resolved) >= 2
    assert [(t.number, t.status) for t in rows] == [
        *((n, Turn.Status.RESOLVED) for n in range(1, len(resolved) + 1)),
        (len(resolved) + 1, Turn.Status.OPEN),
    ]
    for turn in resolved:
        assert turn.deadline is not None and turn.resolved_at is not None
        assert turn.deadline <= turn.resolved_at <= turn.deadline + LATENESS
        assert turn.resolved_by == "clock"
    for turn in rows[1:]:
        assert turn.deadline == turn.opened_at + timedelta(seconds=1)
    assert resolutions(tournament) == [t.number for t in resolved]
    print("resolved after the deadline by", [str(t.resolved_at - t.deadline) for t in resolved])
    assert clock.failures == 0


def test_a_deadline_missed_while_the_server_was_down_is_resolved_by_the_first_sweep(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """Turn 1 ended nine minutes ago: the first sweep resolves it (once, not the nine turns
    the downtime covered), and turn 2 gets its full minute from then."""
    # given
    started = timezone.now() - timedelta(minutes=10)
    tournament = make_running_tournament(turn_seconds=60, now=started)
    sweep = CountingSweep()
    before = timezone.now()
    # A long interval: only the first sweep runs during the test.
    clock = InProcessClock(interval=60, sweep=sweep).start()

    # when
    try:
        swept = sweep.reached(calls=1)
    finally:
        stopped = clock.stop(timeout=WAIT_SECONDS)

    # then
    assert swept and stopped
    assert sweep.steps == 1
    first, second = turns(tournament)
    assert first.status == Turn.Status.RESOLVED
    assert first.deadline == started + timedelta(seconds=60)
    assert first.resolved_at is not None and first.resolved_at >= before
    assert second.status == Turn.Status.OPEN
    assert second.deadline == second.opened_at + timedelta(seconds=60)
    assert second.opened_at >= before
    tournament.refresh_from_db()
    assert tournament.deadline == second.deadline
    assert resolutions(tournament) == [1]


def test_the_clock_survives_a_failing_sweep(
    make_running_tournament: Callable[..., Tournament],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A sweep that raises is logged; the next sweep resolves the due turn."""
    # given
    tournament = make_running_tournament(turn_seconds=60, now=timezone.now() - timedelta(hours=1))
    real_sweep = services.clock_sweep
    calls = []

    def flaky_sweep(**kwargs: object) -> int:
        calls.append(kwargs)
        if len(calls) == 1:
            raise RuntimeError("the database went away")
        return real_sweep(**kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(services, "clock_sweep", flaky_sweep)
    caplog.set_level(logging.ERROR, logger=clock_module.__name__)
    clock = InProcessClock(interval=INTERVAL).start()

    # when
    try:
        resolved = wait_for(lambda: resolutions(tournament) == [1])
    finally:
        stopped = clock.stop(timeout=WAIT_SECONDS)

    # then
    assert resolved and stopped
    assert clock.failures == 1
    assert len(calls) >= 2
    failures = [r for r in caplog.records if "sweep failed" in r.getMessage()]
    assert len(failures) == 1
    assert failures[0].exc_info is not None
    assert "the database went away" in str(failures[0].exc_info[1])


def test_a_database_outage_is_logged_once_in_a_line_and_its_end_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """While the database refuses connections every sweep fails; the log says so once,
    without a traceback per sweep, and says when the clock reaches it again."""
    # given: a database down for three sweeps
    outcomes: list[Exception | int] = [
        OperationalError("connection failed: server closed the connection\nunexpectedly"),
        OperationalError("connection failed: Connection refused"),
        InterfaceError("connection already closed"),
        0,
        0,
    ]

    def sweep() -> int:
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    caplog.set_level(logging.INFO, logger=clock_module.__name__)
    clock = InProcessClock(interval=60, sweep=sweep)

    # when
    for _ in range(5):
        clock.sweep_once()

    # then
    said = [(r.levelno, r.getMessage(), r.exc_info) for r in caplog.records]
    assert said == [
        (
            logging.WARNING,
            "the turn clock cannot reach the database (OperationalError: connection failed: "
            "server closed the connection); trying every 60.0 s",
            None,
        ),
        (logging.WARNING, "the turn clock reaches the database again", None),
    ]
    assert clock.failures == 3 and not clock.database_down


def test_the_clock_stops_at_once_and_cannot_be_started_twice() -> None:
    """stop() wakes the loop from its wait and the thread ends; a running clock refuses a
    second start."""
    # given
    sweep_calls = threading.Event()

    def sweep() -> int:
        sweep_calls.set()
        return 0

    clock = InProcessClock(interval=300, sweep=sweep).start()
    assert sweep_calls.wait(WAIT_SECONDS)
    assert clock.running
    with pytest.raises(RuntimeError):
        clock.start()

    # when: stopped in the middle of its 300-second wait
    stopped = clock.stop(timeout=WAIT_SECONDS)

    # then: it did not wait the interval out (stop() says whether it ended in time)
    assert stopped
    assert not clock.running
    assert not any(t.name == clock.name for t in threading.enumerate())


def test_the_interval_comes_from_the_settings(settings: Settings) -> None:
    """Without an interval the clock uses SL5R_CLOCK_INTERVAL; a non-positive one is refused."""
    settings.SL5R_CLOCK_INTERVAL = 2.5

    assert InProcessClock().interval == 2.5
    with pytest.raises(ValueError):
        InProcessClock(interval=0)


def test_a_paused_clock_is_not_resolved(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """A paused tournament whose deadline had passed stays unresolved: the sweep skips it."""
    # given
    started = timezone.now() - timedelta(minutes=5)
    tournament = make_running_tournament(turn_seconds=60, now=started)
    services.clock_pause(
        tournament_id=tournament.pk,
        actor=services.CLOCK,
        now=started + timedelta(seconds=30),
    )
    clock = InProcessClock(interval=60)

    # when
    done = clock.sweep_once()

    # then
    assert done == 0
    assert [t.status for t in turns(tournament)] == [Turn.Status.OPEN]


def test_a_tournament_whose_tick_fails_does_not_hold_up_the_others(
    make_running_tournament: Callable[..., Tournament],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first tick of the sweep raises; the other overdue tournament is still resolved
    by the same sweep."""
    # given
    past = timezone.now() - timedelta(minutes=5)
    tournaments = [make_running_tournament(now=past), make_running_tournament(now=past)]
    real_tick = services.clock_tick
    ticked: list[int] = []

    def tick(*, tournament_id: int, now: datetime | None) -> bool:
        ticked.append(tournament_id)
        if len(ticked) == 1:
            raise RuntimeError("a board the engine cannot read")
        return real_tick(tournament_id=tournament_id, now=now)

    monkeypatch.setattr(clock_services, "clock_tick", tick)

    # when
    InProcessClock(interval=60).sweep_once()

    # then
    assert len(ticked) == 2
    other = next(t for t in tournaments if t.pk != ticked[0])
    assert resolutions(other) == [1]
