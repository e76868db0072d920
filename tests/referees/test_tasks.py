"""The Celery tasks and the deadline hook, without a broker (a real worker: test_tasks_celery)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from celery import current_app
from django.db import transaction
from django.utils import timezone
from pytest_django import DjangoCaptureOnCommitCallbacks, Settings

from referees import tasks
from referees.kernel import deadlines as clock
from referees.models import LogEntry, Tournament
from referees.services import CLOCK, clock_extend, clock_pause, clock_resume
from sl5r.celery import app
from strategic_map.models import Turn

pytestmark = pytest.mark.django_db


def resolved_turns(tournament: Tournament) -> list[int]:
    return list(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved")
        .order_by("id")
        .values_list("turn", flat=True)
    )


def test_the_tick_task_resolves_a_due_turn_once(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """Run through Celery's own machinery (eagerly), the tick resolves the due turn; the
    same tick again finds nothing due."""
    # given
    tournament = make_running_tournament(now=timezone.now() - timedelta(minutes=5))

    # when
    first = tasks.tournament_tick.apply(args=[tournament.pk]).get()
    second = tasks.tournament_tick.apply(args=[tournament.pk]).get()

    # then
    assert (first, second) == (True, False)
    assert resolved_turns(tournament) == [1]


def test_the_tick_task_does_nothing_before_the_deadline(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """A tick that arrives early (an old task, a clock running fast) changes nothing."""
    tournament = make_running_tournament(turn_seconds=600)

    assert tasks.tournament_tick(tournament.pk) is False
    assert resolved_turns(tournament) == []


def test_the_tick_task_logs_a_vanished_tournament(caplog: pytest.LogCaptureFixture) -> None:
    """A tick for a tournament that no longer exists is logged and dropped, not raised."""
    caplog.set_level(logging.INFO, logger=tasks.__name__)

    assert tasks.tournament_tick(987_654) is False
    assert any("987654" in r.getMessage() for r in caplog.records)


def test_the_sweep_task_resolves_every_due_tournament(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """The beat sweep resolves every overdue tournament and leaves the others alone."""
    # given
    past = timezone.now() - timedelta(minutes=5)
    due = [make_running_tournament(now=past), make_running_tournament(now=past)]
    not_due = make_running_tournament(turn_seconds=600)

    # when
    steps = tasks.clock_sweep_task.apply().get()

    # then
    assert steps == 2
    assert [resolved_turns(t) for t in due] == [[1], [1]]
    assert resolved_turns(not_due) == []
    assert tasks.clock_sweep_task() == 0


def test_the_tasks_are_registered_and_beat_sweeps_every_two_seconds() -> None:
    """The worker finds both tasks by name, and beat's schedule runs the sweep every 2 s,
    dropping a sweep that waited in the queue too long."""
    app.loader.import_default_modules()

    assert {tasks.TICK_TASK, tasks.SWEEP_TASK} <= set(app.tasks)
    entries = [e for e in app.conf.beat_schedule.values() if e["task"] == tasks.SWEEP_TASK]
    assert len(entries) == 1
    assert float(entries[0]["schedule"]) == 2.0
    assert 0 < entries[0]["options"]["expires"] <= 10


# --- schedule_deadline ---------------------------------------------------------------------


class Sent:
    """Stands in for the Celery app's ``send_task`` and records the ticks sent."""

    def __init__(self, error: Exception | None = None) -> None:
        self.calls: list[dict[str, Any]] = []
        self.error = error

    def __call__(self, name: str, **options: Any) -> None:
        assert name == tasks.TICK_TASK
        self.calls.append(options)
        if self.error is not None:
            raise self.error


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> Sent:
    record = Sent()
    monkeypatch.setattr(current_app, "send_task", record)
    return record


def test_schedule_deadline_sends_a_tick_for_the_deadline_after_commit(
    make_running_tournament: Callable[..., Tournament],
    settings: Settings,
    sent: Sent,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    """With the Celery clock, a tick is sent with eta = the deadline, once committed."""
    # given
    settings.SL5R_CLOCK = "celery"
    tournament = make_running_tournament()

    # when
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        clock.schedule_deadline(tournament)
        assert sent.calls == []
    for callback in callbacks:
        callback()

    # then
    assert sent.calls == [
        {
            "args": [tournament.pk],
            "eta": tournament.deadline,
            "retry": True,
            "retry_policy": clock.SEND_RETRY_POLICY,
        }
    ]


def test_schedule_deadline_sends_nothing_when_the_transaction_rolls_back(
    make_running_tournament: Callable[..., Tournament],
    settings: Settings,
    sent: Sent,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    """A deadline that was never committed gets no tick."""
    settings.SL5R_CLOCK = "celery"
    tournament = make_running_tournament()

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        try:
            with transaction.atomic():
                clock.schedule_deadline(tournament)
                raise RuntimeError("rolled back")
        except RuntimeError:
            pass

    assert callbacks == []
    assert sent.calls == []


@pytest.mark.parametrize("case", ["inprocess clock", "paused", "no deadline"])
def test_schedule_deadline_sends_nothing_without_a_running_celery_clock(
    case: str,
    make_running_tournament: Callable[..., Tournament],
    settings: Settings,
    sent: Sent,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    """The in-process clock needs no task; a paused or stopped clock has no deadline."""
    settings.SL5R_CLOCK = "inprocess" if case == "inprocess clock" else "celery"
    tournament = make_running_tournament()
    if case == "paused":
        tournament = clock_pause(tournament_id=tournament.pk, actor=CLOCK, now=timezone.now())
    elif case == "no deadline":
        tournament.deadline = None

    with django_capture_on_commit_callbacks(execute=True):
        clock.schedule_deadline(tournament)

    assert sent.calls == []


def test_schedule_deadline_survives_a_broker_that_does_not_answer(
    make_running_tournament: Callable[..., Tournament],
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    """If the tick cannot be sent the change still stands; the beat sweep will find it."""
    settings.SL5R_CLOCK = "celery"
    monkeypatch.setattr(current_app, "send_task", Sent(error=ConnectionError("no broker")))
    tournament = make_running_tournament()
    caplog.set_level(logging.WARNING, logger=clock.__name__)

    with django_capture_on_commit_callbacks(execute=True):
        clock.schedule_deadline(tournament)

    assert any("beat sweep" in r.getMessage() for r in caplog.records)
    assert Turn.objects.filter(campaign=tournament.campaign_id, status="open").count() == 1


def test_every_deadline_the_services_set_sends_a_tick_for_it(
    make_running_tournament: Callable[..., Tournament],
    settings: Settings,
    sent: Sent,
    django_capture_on_commit_callbacks: DjangoCaptureOnCommitCallbacks,
) -> None:
    """With the Celery clock, turn 1 opening, a resolution, a resume and an extension each
    send a tick for the new deadline; a pause sends none."""
    settings.SL5R_CLOCK = "celery"
    started = timezone.now() - timedelta(minutes=5)

    def etas() -> list[Any]:
        return [call["eta"] for call in sent.calls]

    with django_capture_on_commit_callbacks(execute=True):
        tournament = make_running_tournament(now=started, turn_seconds=60)
    assert tournament.deadline is not None
    assert etas()[-1] == tournament.deadline == started + timedelta(seconds=60)
    assert all(call["args"] == [tournament.pk] for call in sent.calls)

    pk = tournament.pk
    steps: list[tuple[str, Callable[[datetime], Any]]] = [
        ("resolve", lambda now: tasks.tournament_tick(pk)),
        ("pause", lambda now: clock_pause(tournament_id=pk, actor=CLOCK, now=now)),
        ("resume", lambda now: clock_resume(tournament_id=pk, actor=CLOCK, now=now)),
        ("extend", lambda now: clock_extend(tournament_id=pk, seconds=30, actor=CLOCK, now=now)),
    ]
    for step, action in steps:
        before = len(sent.calls)
        with django_capture_on_commit_callbacks(execute=True):
            action(timezone.now())
        tournament.refresh_from_db()
        if step == "pause":
            assert len(sent.calls) == before, step
        else:
            assert len(sent.calls) == before + 1, step
            assert etas()[-1] == tournament.deadline, step
