"""Celery faults: racing clocks, and a worker killed in the middle of a resolution.

Real Celery workers and beat run as subprocesses on the PostgreSQL test database (the test
commits its data) and a Redis database of their own. Each test plays the deterministic
scenario of ``tests/faults/scenario.py`` under a fault and must end with every turn resolved
exactly once, every acknowledged order carried out, and a fingerprint identical to the same
scenario played without the fault (in this process, ``scenario_reference``).

Every worker consumes the default queue and one of its own, so the test can send each of
them a tick and a sweep due at a deadline, and names its database connections
(``application_name``), so the test can tell from ``pg_stat_activity`` which one to kill.

No turn races this process: each is held open (``HELD_TURN_SECONDS``) until its orders are
in; then the tournament's judge sets its time left (``time_left_setting``) and, before that
change commits, the clocks that fire at the new deadline are sent (``deadline_race``). A
loaded machine makes a turn longer, never an order late (R4) or a deadline without its race.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import pytest
from django.utils import timezone
from kombu import Connection
from psycopg import sql

from battles.models import OPEN_STATUSES, Battle
from referees import tasks
from referees.models import Tournament
from referees.services import Actor
from sl5r.celery import app
from strategic_map.models import Turn
from tests.faults.scenario import (
    DISPERSALS,
    TURNS,
    Played,
    exactly_once_problems,
    fingerprint_differences,
    fingerprint_without_clock_settings,
    orders_problems,
    scenario_fingerprint,
    scenario_orders_give,
    scenario_reference,
    scenario_start,
    turn_progress,
)
from tests.judge_clock import HELD_TURN_SECONDS, time_left_setting
from tests.referees import celery_processes
from tests.referees.celery_processes import Service, service_tails

pytestmark = [pytest.mark.redis, pytest.mark.postgres, pytest.mark.slow]

CELERY_REDIS_DB = 11  # the broker's Redis database (celery_processes.celery_env)
# The time left a turn is given once its orders are in: the clocks are on their way before
# it starts to run. A run whose clocks were out less than half of it before the deadline
# doubles it for its next turns (up to the most), as a slow machine needs.
TIME_LEFT_SECONDS = 2.0
TIME_LEFT_MOST_SECONDS = 32.0
RACING_TOURNAMENTS = 4  # 4 × 6 turns: 24 deadlines, each fired by 5 clocks at once
KILL_TURNS = (4, 6)  # turns whose resolution disperses a table (scenario.DISPERSALS)
# An upper bound: the scenario takes TURNS × (orders + TIME_LEFT_SECONDS) per tournament,
# the tournaments side by side; a stuck turn never ends.
PLAY_SECONDS = 300.0
BLOCK_SECONDS = 40.0  # until a worker reaches the held lock: a deadline and a sweep away
POLL_SECONDS = 0.05

TICK_DONE = re.compile(r"Task referees\.tournament_tick\[[^\]]+\] succeeded in \S+: (True|False)")
SWEEP_DONE = re.compile(r"Task referees\.clock_sweep\[[^\]]+\] succeeded in \S+: (\d+)")

celery_env = celery_processes.celery_env
celery_start = celery_processes.celery_start


@dataclass
class Worker:
    """A worker process; ``name`` is its database connections' ``application_name``."""

    name: str
    queue: str
    service: Service


@dataclass
class Run:
    """One tournament playing the scenario against the real clocks."""

    played: Played
    judge: Actor  # who sets each turn's time left
    time_left: float = TIME_LEFT_SECONDS
    settings: int = 0  # the clock settings made (one a turn)
    # Seconds left before each turn's deadline once its clocks were sent (printed).
    margins: list[float] = field(default_factory=list)

    @property
    def done(self) -> bool:
        return len(self.played.progress) == TURNS


def with_application_name(url: str, name: str) -> str:
    parts = urlsplit(url)
    query = urlencode([*parse_qsl(parts.query), ("application_name", name)])
    return urlunsplit((parts.scheme, parts.netloc, parts.path, query, parts.fragment))


def worker_start(
    celery_start: Callable[..., Service], celery_env: dict[str, str], *, name: str, queue: str
) -> Worker:
    """A worker on the default queue and ``queue``, its connections named ``name``."""
    service = celery_start(
        "worker",
        args=[f"--queues=celery,{queue}"],
        env={"DATABASE_URL": with_application_name(celery_env["DATABASE_URL"], name)},
    )
    return Worker(name=name, queue=queue, service=service)


@contextmanager
def broker_connection(celery_env: dict[str, str]) -> Iterator[Connection]:
    with app.connection_for_write(celery_env["REDIS_URL"]) as broker:
        yield broker


def clocks_send(
    broker: Connection, tournament_id: int, deadline: datetime, workers: list[Worker]
) -> None:
    """The tick a Celery clock sends itself when a judge sets a deadline (``schedule_deadline``
    in a server: this process's clock is the in-process one), on the default queue; and for
    each worker, a tick of the tournament and a sweep (beat's task): all due at the deadline,
    they fire at once."""
    tasks.tournament_tick.apply_async(args=[tournament_id], eta=deadline, connection=broker)
    for worker in workers:
        tasks.tournament_tick.apply_async(
            args=[tournament_id], eta=deadline, queue=worker.queue, connection=broker
        )
        tasks.clock_sweep_task.apply_async(eta=deadline, queue=worker.queue, connection=broker)


def runs_start(make_running_tournament: Callable[..., Tournament], names: list[str]) -> list[Run]:
    """The scenario's tournaments, each turn held open until the harness sets its time left."""
    runs = []
    for name in names:
        tournament = scenario_start(
            make_running_tournament, turn_seconds=HELD_TURN_SECONDS, name=name
        )
        played = Played(tournament_id=tournament.pk, progress={}, acknowledged={})
        runs.append(Run(played=played, judge=Actor.of_user(tournament.judges.get())))
    return runs


def deadline_race(run: Run, turn: int, *, broker: Connection, workers: list[Worker]) -> datetime:
    """``turn``'s orders are in: its judge sets its time left, and the clocks that fire at the
    new deadline (``clocks_send``) are sent before that change commits.

    No clock can act on a deadline before it is committed (a tick takes the tournament's lock
    first, a sweep lists committed deadlines), so all of them are on their way when the
    deadline starts to run: in time, or, if this process stalled past the deadline, the
    ticks queued on the lock. A margin under half the time left doubles it for the run's
    next turns. The new deadline.
    """
    tournament_id = run.played.tournament_id
    with time_left_setting(
        tournament_id, turn=turn, seconds=run.time_left, actor=run.judge
    ) as deadline:
        clocks_send(broker, tournament_id, deadline, workers)
    run.settings += 1
    margin = (deadline - timezone.now()).total_seconds()
    run.margins.append(margin)
    if margin < run.time_left / 2:
        # This process is slow now: the next turns are given more time before the race.
        run.time_left = min(2 * run.time_left, TIME_LEFT_MOST_SECONDS)
    return deadline


def runs_play(
    runs: list[Run],
    *,
    broker: Connection,
    workers: list[Worker],
    services: Callable[[], list[Service]],
    on_open: Callable[[Run, int, Callable[[], datetime]], None] | None = None,
) -> None:
    """Play every run to its end: as soon as a turn opens, its orders, then its time left and
    the racing clocks (``deadline_race``); once it is resolved, what ``turn_progress`` reads
    then. ``on_open(run, turn, race)`` instead of that last step: it calls ``race()`` (the
    new deadline) once, when it is ready for the deadline to run."""
    end = time.monotonic() + PLAY_SECONDS
    while not all(run.done for run in runs):
        for run in runs:
            played = run.played
            progress = turn_progress(played.tournament_id)
            seen = len(played.progress)
            if progress.resolved > seen:
                # A turn is held until this test has given its orders and set its time
                # left, so none ends unseen: one that did was resolved before its deadline.
                assert progress.resolved == seen + 1, (
                    f"tournament {played.tournament_id}: turns {seen + 1}..{progress.resolved}"
                    f" were resolved while held open for their orders"
                )
                played.progress[progress.resolved] = progress
            turn = progress.open_turn
            if (
                turn is not None
                and turn not in played.acknowledged
                and turn == progress.resolved + 1
            ):
                played.acknowledged[turn] = scenario_orders_give(played.tournament_id, turn=turn)
                race = functools.partial(deadline_race, run, turn, broker=broker, workers=workers)
                if on_open is None:
                    race()
                else:
                    on_open(run, turn, race)
        if time.monotonic() > end:
            state = {r.played.tournament_id: sorted(r.played.progress) for r in runs}
            pytest.fail(
                f"the scenario did not end in {PLAY_SECONDS} s; turns seen resolved: {state}\n"
                f"{service_tails(*services())}",
                pytrace=False,
            )
        time.sleep(POLL_SECONDS)


def clock_steps(services: list[Service], *, expected: int) -> tuple[int, int, int]:
    """From the workers' logs: steps taken (ticks that returned True plus what the sweeps
    returned), ticks that found nothing to do, and sweeps run.

    A worker logs a task's return after its transaction committed: the log is read until it
    shows ``expected`` steps, or for ``BLOCK_SECONDS``.
    """
    counts = _clock_steps(services)
    end = time.monotonic() + BLOCK_SECONDS
    while counts[0] < expected and time.monotonic() < end:
        time.sleep(POLL_SECONDS)
        counts = _clock_steps(services)
    return counts


def _clock_steps(services: list[Service]) -> tuple[int, int, int]:
    done = idle = sweeps = 0
    for service in services:
        output = service.output()
        ticks = TICK_DONE.findall(output)
        done += ticks.count("True")
        idle += ticks.count("False")
        swept = [int(n) for n in SWEEP_DONE.findall(output)]
        done += sum(swept)
        sweeps += len(swept)
    return done, idle, sweeps


def assert_like_the_reference(expected: dict[str, Any], run: Run) -> None:
    """Each turn resolved once, by a clock, at or after the deadline its judge set; every
    acknowledged order carried out; the reference's fingerprint, once the judge's clock
    settings (one a turn, none in the reference) are taken out."""
    played = run.played
    assert exactly_once_problems(played.tournament_id) == []
    assert orders_problems(played.tournament_id, played.acknowledged) == []
    turns = Turn.objects.filter(campaign__tournament=played.tournament_id).order_by("number")
    early = [
        (t.number, t.resolved_at, t.deadline)
        for t in turns
        if t.resolved_at is None or t.deadline is None or t.resolved_at < t.deadline
    ]
    assert early == [], "resolved before the deadline (or never)"
    actual, settings = fingerprint_without_clock_settings(
        scenario_fingerprint(played.tournament_id, played.progress), by=run.judge.label
    )
    assert settings == run.settings == TURNS
    assert fingerprint_differences(expected, actual) == []


def timing(runs: list[Run]) -> str:
    """For the printed numbers: the latest ``resolved_at`` after its deadline (the ``now`` of
    the clock that resolved it), the least time left once a turn's clocks were sent, and the
    longest time left a slow moment made a run ask for."""
    late = max(
        turn.resolved_at - turn.deadline
        for turn in Turn.objects.filter(
            campaign__tournament__in=[r.played.tournament_id for r in runs],
            status=Turn.Status.RESOLVED,
        )
        if turn.resolved_at is not None and turn.deadline is not None
    )
    margin = min(m for r in runs for m in r.margins)
    asked = max(r.time_left for r in runs)
    return (
        f"resolved_at at most {late.total_seconds():.3f} s after the deadline; "
        f"clocks sent at least {margin:.2f} s before the deadline; "
        f"time left given up to {asked:g} s"
    )


def test_two_workers_and_beat_firing_the_same_deadlines_resolve_each_turn_once(
    celery_start: Callable[..., Service],
    celery_env: dict[str, str],
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """Four tournaments, 24 deadlines, each set by the judge once the turn's orders are in:
    at each one the tick the clock sends itself, and a tick and a sweep sent to each of two
    workers (separate processes), fire together, with beat's own sweep every 2 s. Each turn
    is resolved once, by one of them, with every order acknowledged before its deadline
    (R4), and each tournament ends as the reference."""
    # given: two workers, beat, and the scenario's fault-free outcome
    workers = [
        worker_start(celery_start, celery_env, name=f"sl5r-fault-{n}", queue=f"sl5r-fault-{n}")
        for n in ("a", "b")
    ]
    beat = celery_start("beat")
    expected = scenario_reference(make_running_tournament)
    for worker in workers:
        worker.service.wait_for(" ready.")
    beat.wait_for("Sending due task")
    runs = runs_start(
        make_running_tournament, [f"Race {n}" for n in range(1, RACING_TOURNAMENTS + 1)]
    )
    services = [*(w.service for w in workers), beat]

    # when
    with broker_connection(celery_env) as broker:
        runs_play(runs, broker=broker, workers=workers, services=lambda: services)

    # then
    for run in runs:
        assert_like_the_reference(expected, run)
    deadlines = RACING_TOURNAMENTS * TURNS
    done, idle, sweeps = clock_steps([w.service for w in workers], expected=deadlines)
    assert done == deadlines, "each step was reported by exactly one tick or sweep"
    # Every deadline got a copy per worker: the race was real (losers found nothing due).
    assert idle >= deadlines, (done, idle)
    for worker in workers:
        assert TICK_DONE.search(worker.service.output()), f"{worker.name} ran no tick"
        assert "Traceback" not in worker.service.output(), worker.service.tail()
    print(
        f"\n{deadlines} deadlines: {done} steps, {idle} ticks that found nothing due, "
        f"{sweeps} sweeps; {timing(runs)}"
    )


@dataclass(frozen=True)
class Kill:
    """A worker killed while its database transaction waited in the middle of a resolution."""

    turn: int
    worker: str
    backend_pid: int
    xid: int


def blocked_by(monitor: psycopg.Connection[Any], holder_pid: int) -> tuple[int, str, int] | None:
    """The backend waiting for a lock ``holder_pid`` holds: its pid, application name, xid."""
    row = monitor.execute(
        "SELECT pid, application_name, backend_xid::text FROM pg_stat_activity"
        " WHERE %s = ANY(pg_blocking_pids(pid))",
        [holder_pid],
    ).fetchone()
    if row is None:
        return None
    pid, name, xid = row
    assert xid is not None, f"backend {pid} ({name}) waits without having written anything"
    return int(pid), str(name), int(xid)


def row_locked(monitor: psycopg.Connection[Any], table: str, pk: int) -> bool:
    try:
        monitor.execute(
            sql.SQL("SELECT 1 FROM {} WHERE id = %s FOR UPDATE NOWAIT").format(
                sql.Identifier(table)
            ),
            [pk],
        )
    except psycopg.errors.LockNotAvailable:
        return True
    return False


def xact_status(monitor: psycopg.Connection[Any], xid: int) -> str:
    """``committed``, ``aborted`` or ``in progress``, for a 32-bit xid of a recent transaction.

    ``pg_xact_status`` wants the 64-bit id: the current epoch, or the one before when the
    counter has wrapped since.
    """
    row = monitor.execute("SELECT pg_snapshot_xmax(pg_current_snapshot())::text").fetchone()
    assert row is not None
    current = int(row[0])
    epoch = current >> 32
    if xid > current & 0xFFFFFFFF:
        epoch -= 1
    status = monitor.execute(
        "SELECT pg_xact_status(%s::text::xid8)", [str(epoch << 32 | xid)]
    ).fetchone()
    assert status is not None
    return str(status[0])


def wait_until(condition: Callable[[], bool], timeout: float, what: str) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"waited {timeout} s for {what}", pytrace=False)
        time.sleep(POLL_SECONDS)


def worker_kill_mid_resolution(
    *,
    database_url: str,
    tournament_id: int,
    turn: int,
    workers: list[Worker],
    race: Callable[[], datetime],
) -> tuple[Kill, Worker]:
    """Hold the row of the table ``turn``'s resolution disperses, let the deadline run
    (``race``), wait until a worker's transaction waits for the row, kill that worker
    (SIGKILL, its whole session), let go.

    The resolving transaction reaches the Battle row only after it has moved the turn
    OPEN → RESOLVING → RESOLVED, stored the new board and logged the resolution, so the
    kill lands in the middle of it; that the turn's row is locked shows it got that far.
    """
    battle_id = Battle.objects.values_list("pk", flat=True).get(
        tournament_id=tournament_id, province=DISPERSALS[turn], status__in=OPEN_STATUSES
    )
    turn_id = Turn.objects.values_list("pk", flat=True).get(
        campaign__tournament=tournament_id, number=turn, status=Turn.Status.OPEN
    )
    with (
        psycopg.connect(database_url, autocommit=True) as monitor,
        psycopg.connect(database_url) as holder,
    ):
        holder.execute(
            sql.SQL("SELECT 1 FROM {} WHERE id = %s FOR UPDATE").format(
                sql.Identifier(Battle._meta.db_table)
            ),
            [battle_id],
        )
        holder_pid = holder.info.backend_pid
        race()
        found: list[tuple[int, str, int]] = []

        def reached() -> bool:
            backend = blocked_by(monitor, holder_pid)
            if backend is not None:
                found.append(backend)
            return backend is not None

        wait_until(reached, BLOCK_SECONDS, f"a worker to reach the held table of turn {turn}")
        pid, name, xid = found[0]
        assert row_locked(monitor, Turn._meta.db_table, turn_id), "not past OPEN → RESOLVING"
        victim = next(w for w in workers if w.name == name)
        os.killpg(victim.service.process.pid, signal.SIGKILL)
        victim.service.process.wait(timeout=30)
        holder.rollback()
        # The killed worker's backend finds its client gone once it may go on; until then
        # it keeps the transaction (and the tournament's lock) open.
        wait_until(
            lambda: (
                monitor.execute("SELECT 1 FROM pg_stat_activity WHERE pid = %s", [pid]).fetchone()
                is None
            ),
            BLOCK_SECONDS,
            f"the killed worker's backend {pid} to end",
        )
        assert xact_status(monitor, xid) == "aborted"
    status = Turn.objects.values_list("status", flat=True).get(pk=turn_id)
    assert status in (Turn.Status.OPEN, Turn.Status.RESOLVED), f"turn {turn} left {status}"
    return Kill(turn=turn, worker=name, backend_pid=pid, xid=xid), victim


def test_a_worker_killed_in_the_middle_of_a_resolution_leaves_the_turn_to_another_worker(
    celery_start: Callable[..., Service],
    celery_env: dict[str, str],
    subprocess_database_url: str,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    """Twice (turn 4, and turn 6 with the game's end), the worker resolving the turn is
    SIGKILLed while its transaction waits on a row lock the test holds, past the turn's
    OPEN → RESOLVING update. Its transaction is rolled back; the other worker (or beat's
    sweep) resolves the turn, once, with every order; a new worker replaces the dead one.
    The tournament ends as the reference."""
    # given: two workers, beat, the fault-free outcome, and the tournament under test
    workers = [
        worker_start(celery_start, celery_env, name=f"sl5r-fault-{n}", queue=f"sl5r-fault-{n}")
        for n in ("a", "b")
    ]
    beat = celery_start("beat")
    started = [*(w.service for w in workers), beat]
    expected = scenario_reference(make_running_tournament)
    for worker in workers:
        worker.service.wait_for(" ready.")
    beat.wait_for("Sending due task")
    [run] = runs_start(make_running_tournament, ["Killed worker"])
    kills: list[Kill] = []

    def kill_in_the_middle(run: Run, turn: int, race: Callable[[], datetime]) -> None:
        if turn not in KILL_TURNS:
            race()
            return
        kill, victim = worker_kill_mid_resolution(
            database_url=subprocess_database_url,
            tournament_id=run.played.tournament_id,
            turn=turn,
            workers=workers,
            race=race,
        )
        kills.append(kill)
        replacement = worker_start(
            celery_start, celery_env, name=f"{victim.name}-{len(kills)}", queue=victim.queue
        )
        workers[workers.index(victim)] = replacement
        started.append(replacement.service)

    # when
    with broker_connection(celery_env) as broker:
        runs_play(
            [run],
            broker=broker,
            workers=workers,
            services=lambda: started,
            on_open=kill_in_the_middle,
        )

    # then
    assert [k.turn for k in kills] == list(KILL_TURNS)
    assert_like_the_reference(expected, run)
    done, _, _ = clock_steps([s for s in started if s is not beat], expected=TURNS)
    assert done == TURNS, "the killed workers' steps were never reported done"
    for service in started:
        if service.process.returncode != -signal.SIGKILL:
            assert "Traceback" not in service.output(), service.tail()
    print(
        f"\nkilled {[(k.turn, k.worker) for k in kills]}, their transactions aborted; "
        f"{timing([run])}"
    )
