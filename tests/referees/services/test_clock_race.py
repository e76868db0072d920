"""Exactly once: several clocks (and a judge) firing at the same moment resolve a turn once.

Every caller runs in its own thread with its own database connection, as separate web
server processes, Celery workers and the beat sweep would. The race is repeated over many
turns. It runs on the default database (SQLite in the first ``make test`` pass, PostgreSQL
in the second) and, marked ``postgres``, with more threads on PostgreSQL.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.db import connection, connections, transaction
from django.utils import timezone

from referees.kernel.core import CLOCK
from referees.models import LogEntry, Tournament
from referees.services import Actor, TournamentError, clock_resolve_now, clock_tick
from referees.services import clock as clock_service
from strategic_map.models import Turn
from strategic_map.selectors import campaign_open_turn

JOIN_SECONDS = 60.0
JUDGE = Actor(label="judge race", judge=True)


@dataclass
class Round:
    """What the callers of one round got back."""

    ticks: list[bool] = field(default_factory=list)
    judge: list[str] = field(default_factory=list)  # "resolved" or the refusal's code
    errors: list[BaseException] = field(default_factory=list)


def race(calls: list[Callable[[], Any]], outcome: Round) -> None:
    """Run ``calls`` at the same instant, one thread (and one connection) each."""
    barrier = threading.Barrier(len(calls))
    lock = threading.Lock()

    def run(call: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout=JOIN_SECONDS)
            result = call()
        except BaseException as error:
            with lock:
                outcome.errors.append(error)
        else:
            with lock:
                if isinstance(result, bool):
                    outcome.ticks.append(result)
                else:
                    outcome.judge.append(result)
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(call,)) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(JOIN_SECONDS)
    assert not any(thread.is_alive() for thread in threads), "a caller is stuck"


def tick(tournament_id: int, now: datetime) -> Callable[[], bool]:
    return lambda: clock_tick(tournament_id=tournament_id, now=now)


def resolve_now(tournament_id: int, now: datetime, turn: int) -> Callable[[], str]:
    """A judge's "resolve now" for the turn on his screen."""

    def call() -> str:
        try:
            clock_resolve_now(tournament_id=tournament_id, actor=JUDGE, now=now, turn=turn)
        except TournamentError as refused:
            return refused.code
        return "resolved"

    return call


def current_deadline(tournament: Tournament) -> datetime:
    tournament.refresh_from_db(fields=["deadline", "phase", "paused_remaining"])
    assert tournament.phase == Tournament.Phase.RUNNING
    assert tournament.deadline is not None
    return tournament.deadline


def assert_each_turn_resolved_once(tournament: Tournament, resolved: int) -> None:
    """Turns 1..resolved are resolved, one log line each; the next is open; no duplicates."""
    rows = list(
        Turn.objects.filter(campaign=tournament.campaign_id)
        .order_by("number", "id")
        .values_list("number", "status")
    )
    assert [n for n, _ in rows] == list(range(1, resolved + 2)), "turn numbers"
    assert [s for _, s in rows] == [Turn.Status.RESOLVED] * resolved + [Turn.Status.OPEN]
    logged = Counter(
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved").values_list(
            "turn", flat=True
        )
    )
    assert logged == Counter(range(1, resolved + 1)), "one turn_resolved line per turn"
    opened = Counter(
        LogEntry.objects.filter(tournament=tournament, action="turn_opened").values_list(
            "turn", flat=True
        )
    )
    assert all(count == 1 for count in opened.values())


def ticks_race(tournament: Tournament, *, threads: int, rounds: int) -> None:
    """Clocks only: every round, ``threads`` ticks at the deadline; exactly one acts."""
    for number in range(1, rounds + 1):
        now = current_deadline(tournament)
        outcome = Round()

        race([tick(tournament.pk, now) for _ in range(threads)], outcome)

        assert not outcome.errors, outcome.errors
        assert sorted(outcome.ticks) == [False] * (threads - 1) + [True], f"round {number}"
    assert_each_turn_resolved_once(tournament, rounds)


def mixed_race(tournament: Tournament, *, threads: int, rounds: int) -> None:
    """Clocks and a judge's "resolve now" for the same turn: exactly one of them resolves it.

    The judge names the turn he saw; when a clock got there first he is told it is stale
    instead of resolving the turn that has just opened.
    """
    for number in range(1, rounds + 1):
        now = current_deadline(tournament)
        calls: list[Callable[[], Any]] = [tick(tournament.pk, now) for _ in range(threads - 1)]
        calls.insert(number % threads, resolve_now(tournament.pk, now, turn=number))
        outcome = Round()

        race(calls, outcome)

        assert not outcome.errors, outcome.errors
        assert len(outcome.judge) == 1 and outcome.judge[0] in {"resolved", "stale"}
        done = outcome.ticks.count(True) + outcome.judge.count("resolved")
        assert done == 1, f"round {number}: {outcome}"
    assert_each_turn_resolved_once(tournament, rounds)


@pytest.mark.django_db(transaction=True)
def test_racing_clocks_resolve_each_turn_once(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """On the default database, four clocks ticking at each deadline resolve each turn once."""
    tournament = make_running_tournament(turn_seconds=60, turns_total=1000)

    ticks_race(tournament, threads=4, rounds=12)


@pytest.mark.django_db(transaction=True)
def test_racing_clocks_and_a_judge_resolve_each_turn_once(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """On the default database, clocks and a judge's "resolve now" resolve each turn once."""
    tournament = make_running_tournament(turn_seconds=60, turns_total=1000)

    mixed_race(tournament, threads=4, rounds=8)


@pytest.mark.postgres
def test_racing_clocks_resolve_each_turn_once_on_postgresql(
    postgres_default_database: None,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """On PostgreSQL, eight clocks ticking at each deadline resolve each turn once."""
    assert connection.vendor == "postgresql"
    tournament = make_running_tournament(turn_seconds=60, turns_total=1000)

    ticks_race(tournament, threads=8, rounds=25)


@pytest.mark.postgres
def test_racing_clocks_and_a_judge_resolve_each_turn_once_on_postgresql(
    postgres_default_database: None,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """On PostgreSQL, seven clocks and a judge's "resolve now" resolve each turn once."""
    tournament = make_running_tournament(turn_seconds=60, turns_total=1000)

    mixed_race(tournament, threads=8, rounds=15)


@pytest.mark.django_db(transaction=True)
def test_resolve_now_racing_the_clock_resolves_only_the_turn_the_judge_saw(
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """The clock resolves turn 1 at its deadline; the judge's "resolve now" for turn 1, a
    moment later, is refused instead of resolving turn 2."""
    # given
    tournament = make_running_tournament(turn_seconds=60, turns_total=1000)
    now = current_deadline(tournament)
    assert clock_tick(tournament_id=tournament.pk, now=now)

    # when
    with pytest.raises(TournamentError):
        clock_resolve_now(tournament_id=tournament.pk, actor=JUDGE, now=now, turn=1)

    # then
    assert_each_turn_resolved_once(tournament, 1)


@pytest.mark.django_db
@pytest.mark.parametrize("second", ["clock", "judge"])
def test_a_caller_that_read_the_turn_open_before_it_was_resolved_resolves_nothing(
    second: str,
    make_running_tournament: Callable[..., Tournament],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """R4, R11: a turn is resolved once even by a caller that gets past the tournament's lock.

    The races above never reach ``turn_resolve`` twice: the lock lets one caller in at a
    time and each reads the open turn under it. Here the second caller read turn 1 open
    before the clock's resolution committed (a stale read, as a path that read it before
    the lock would make) and gets the lock after that commit: a clock's tick at turn 2's
    deadline, or a judge's "resolve now" for turn 1. The conditional update in
    ``turn_resolve`` (only an OPEN turn becomes RESOLVING) is what stops it."""
    # given: turn 1 read open, then resolved by the clock, and turn 2 open
    tournament = make_running_tournament(turn_seconds=60, turns_total=1000)
    stale = campaign_open_turn(tournament.campaign)
    assert stale is not None and stale.number == 1
    resolved_at = current_deadline(tournament)
    assert clock_tick(tournament_id=tournament.pk, now=resolved_at)
    board = Tournament.objects.get(pk=tournament.pk).campaign.board

    # when: the stale caller, with turn 2 due, still holds turn 1 as the open turn
    monkeypatch.setattr(clock_service, "campaign_open_turn", lambda campaign: stale)
    later = current_deadline(tournament)
    if second == "clock":
        assert clock_tick(tournament_id=tournament.pk, now=later) is False
    else:
        with pytest.raises(TournamentError) as refused:
            clock_resolve_now(tournament_id=tournament.pk, actor=JUDGE, now=later, turn=1)
        assert refused.value.code == "busy"
    monkeypatch.undo()

    # then: turn 1 resolved once, by the clock, turn 2 opened once, the board as it was
    assert_each_turn_resolved_once(tournament, 1)
    turn1 = Turn.objects.get(campaign=tournament.campaign_id, number=1)
    assert (turn1.resolved_at, turn1.resolved_by) == (resolved_at, CLOCK.label)
    assert Tournament.objects.get(pk=tournament.pk).campaign.board == board


@pytest.mark.postgres
def test_a_tick_that_waited_for_the_lock_gives_the_next_turn_its_full_length(
    postgres_default_database: None,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """R4: the next turn begins when the turn is carried out and lasts the full turn. A
    clock's tick that waited for another transaction holding the tournament (a judge's
    change, another clock) opens it when it got the lock, not when it fired."""
    # given: turn 1's deadline long past, and the tournament row held by someone else
    turn_seconds, hold_seconds = 60, 1.5
    tournament = make_running_tournament(
        now=timezone.now() - timedelta(minutes=5), turn_seconds=turn_seconds, turns_total=10
    )
    holding, released_at = threading.Event(), []

    def hold() -> None:
        try:
            with transaction.atomic():
                Tournament.objects.select_for_update().get(pk=tournament.pk)
                holding.set()
                time.sleep(hold_seconds)
                released_at.append(timezone.now())
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold)
    holder.start()
    assert holding.wait(JOIN_SECONDS)

    # when: the clock ticks (as the clocks do: without a time of its own)
    fired_at = timezone.now()
    ticked = clock_tick(tournament_id=tournament.pk)
    holder.join(JOIN_SECONDS)

    # then: turn 2 opened after the lock was released, with a full turn ahead of it
    assert ticked
    turn2 = Turn.objects.get(campaign=tournament.campaign_id, number=2)
    assert turn2.opened_at >= released_at[0] > fired_at + timedelta(seconds=1)
    assert current_deadline(tournament) == turn2.opened_at + timedelta(seconds=turn_seconds)
