"""The turn clock: what calls ``services.clock_tick`` when a deadline passes.

Two clocks exist, chosen by ``settings.SL5R_CLOCK``; both only call the services, which do
each step exactly once however many clocks fire at the same moment:

- ``"inprocess"`` (the embedded default): ``InProcessClock``, a daemon thread inside the web
  server (``manage.py serve``) or on its own (``manage.py runclock``) that sweeps every
  ``settings.SL5R_CLOCK_INTERVAL`` seconds.
- ``"celery"``: ``schedule_deadline`` sends ``referees.tasks.tournament_tick`` with
  ``eta`` = when the deadline is due (``tick_due_at``) when a deadline is set, and Celery
  beat runs ``referees.tasks.clock_sweep_task`` every two seconds to catch any tick that
  was lost (worker or Redis restarted).

A running turn is due ``settings.SL5R_ORDER_SETTLE_SECONDS`` after its deadline, not at
it: orders that reached the server before the deadline but still wait for an HTTP thread
are judged by their arrival (R4) and must be stored before the turn is resolved. That window
is a floor: past it, ``settle_hold`` keeps the turn open while order requests for the
tournament that arrived before the deadline are still unanswered (``sl5r.serving.waiting_orders``:
this process's own, and those other processes publish to Redis), up to
``SL5R_ORDER_SETTLE_MAX_SECONDS`` after the deadline. A held Celery tick sends itself again
a moment later (``referees.tasks.HELD_COUNTDOWN``); the in-process clock's next sweep looks
again.

A deadline that passed while nothing was running (the server was down) is found by the
first sweep; the turn is resolved then, and the next turn still gets its full length.

This module imports ``referees.services`` only inside functions: the services call
``schedule_deadline``, so a module-level import would be circular.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils import timezone

from sl5r.serving.interface import (
    DATABASE_OUTAGE_ERRORS,
    database_error_summary,
    waiting_order_requests,
)

if TYPE_CHECKING:
    from referees.models import Tournament

log = logging.getLogger(__name__)

CELERY = "celery"
INPROCESS = "inprocess"
# Tournament.Phase.RUNNING; spelled out, as this module does not import the models at run time.
RUNNING_PHASE = "running"
# Sending a task must never hold up the request that changed the deadline for long: if the
# broker does not answer, the beat sweep still finds the deadline.
SEND_RETRY_POLICY = {"max_retries": 2, "interval_start": 0, "interval_step": 0.5, "interval_max": 1}


def order_settle() -> timedelta:
    """How long after a turn's deadline the clocks resolve it (``SL5R_ORDER_SETTLE_SECONDS``)."""
    return timedelta(seconds=settings.SL5R_ORDER_SETTLE_SECONDS)


def order_settle_max() -> timedelta:
    """The longest a turn waits after its deadline (``SL5R_ORDER_SETTLE_MAX_SECONDS``)."""
    return max(
        order_settle(),
        timedelta(seconds=getattr(settings, "SL5R_ORDER_SETTLE_MAX_SECONDS", 15.0)),
    )


def settle_hold(tournament: Tournament, now: datetime) -> bool:
    """True when the clock must not resolve ``tournament``'s running turn yet at ``now``.

    The settle window is a floor: past it, the turn still waits while an order request for
    the tournament that arrived before the deadline is not answered (in this process, or in
    another one that publishes to Redis: ``sl5r.serving.waiting_orders``), but never beyond
    ``order_settle_max()`` after the deadline; then it resolves, and what still waits is
    refused as late.
    """
    deadline = tournament.deadline
    if tournament.phase != RUNNING_PHASE or deadline is None:
        return False
    if now >= deadline + order_settle_max():
        return False
    waiting = waiting_order_requests(tournament_id=tournament.pk, before=deadline)
    if waiting:
        log.info(
            "turn clock: tournament %s waits for %d order request(s) that arrived in time",
            tournament.pk,
            waiting,
        )
    return waiting > 0


def tick_due_at(tournament: Tournament) -> datetime | None:
    """When the clock acts on ``tournament``'s deadline; None when there is none.

    A running turn waits ``order_settle()`` after its deadline for the orders that arrived
    in time (R4); planning and negotiation take no orders and end at their deadline.
    """
    deadline = tournament.deadline
    if deadline is None:
        return None
    if tournament.phase == RUNNING_PHASE:
        return deadline + order_settle()
    return deadline


def schedule_deadline(tournament: Tournament) -> None:
    """Have Celery tick ``tournament`` when its deadline is due, once the transaction commits.

    Call it after every change of ``tournament.deadline``. It does nothing unless
    ``settings.SL5R_CLOCK`` is ``"celery"``, or when the clock is stopped (no deadline, or
    paused). A task left over from an earlier deadline is harmless: when it runs, nothing is
    due and ``clock_tick`` does nothing.
    """
    if settings.SL5R_CLOCK != CELERY:
        return
    due_at = tick_due_at(tournament)
    if due_at is None or tournament.paused_remaining is not None:
        return
    tournament_id = tournament.pk

    def send() -> None:
        from referees.tasks import tournament_tick

        try:
            tournament_tick.apply_async(
                args=[tournament_id], eta=due_at, retry=True, retry_policy=SEND_RETRY_POLICY
            )
        except Exception:  # the deadline is stored; the beat sweep will find it
            log.warning(
                "could not schedule the clock tick of tournament %s at %s; "
                "the beat sweep will resolve it",
                tournament_id,
                due_at.isoformat(),
                exc_info=True,
            )

    transaction.on_commit(send)


def clock_sweep_now() -> int:
    """Sweep once: tick every tournament whose deadline has passed, each at the time its
    tournament is locked."""
    from referees.services import clock_sweep

    return clock_sweep()


class InProcessClock:
    """A daemon thread that sweeps for due tournaments every ``interval`` seconds.

    A failed sweep is logged and the loop goes on; the next sweep tries again. Database
    connections are closed around every sweep, as Django does around a request, so a
    connection the server dropped is not reused and none is held open between sweeps.
    """

    def __init__(
        self,
        *,
        interval: float | None = None,
        sweep: Callable[[], int] = clock_sweep_now,
        name: str = "sl5r-clock",
    ) -> None:
        self.interval = float(settings.SL5R_CLOCK_INTERVAL if interval is None else interval)
        if self.interval <= 0:
            raise ValueError("the clock's interval must be positive")
        self.sweep = sweep
        self.name = name
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.sweeps = 0
        self.failures = 0
        self.database_down = False

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> InProcessClock:
        """Start the thread; returns the clock, so ``clock = InProcessClock().start()``."""
        if self.running:
            raise RuntimeError("the clock is already running")
        self._stop.clear()
        self._thread = threading.Thread(target=self.run, name=self.name, daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float | None = 30.0) -> bool:
        """Ask the loop to stop and wait for it; True when the thread has ended.

        A sweep in progress is finished first (its transaction is never cut short).
        """
        self._stop.set()
        thread = self._thread
        if thread is None or thread is threading.current_thread():
            return True
        thread.join(timeout)
        return not thread.is_alive()

    def run(self) -> None:
        """The loop itself, in the calling thread, until ``stop()``."""
        log.info("turn clock started: sweeping every %s s", self.interval)
        try:
            while not self._stop.is_set():
                self.sweep_once()
                self._stop.wait(self.interval)
        finally:
            # This thread's connections end with it.
            connections.close_all()
            log.info("turn clock stopped")

    def sweep_once(self) -> int:
        """One sweep; returns the number of steps taken (0 after a logged failure)."""
        close_old_connections_quietly()
        try:
            done = self.sweep()
        except DATABASE_OUTAGE_ERRORS as error:
            # Said once per outage, in one line: a traceback every sweep buried the log
            # while the database restarted, and told nothing the first line does not.
            self.failures += 1
            if not self.database_down:
                log.warning(
                    "the turn clock cannot reach the database (%s); trying every %s s",
                    database_error_summary(error),
                    self.interval,
                )
            self.database_down = True
            return 0
        except Exception:
            self.failures += 1
            log.exception("the turn clock's sweep failed; trying again in %s s", self.interval)
            return 0
        finally:
            self.sweeps += 1
            close_old_connections_quietly()
        if self.database_down:
            self.database_down = False
            log.warning("the turn clock reaches the database again")
        if done:
            log.info("turn clock: %d step(s) taken at %s", done, _stamp(timezone.now()))
        return done


def close_old_connections_quietly() -> None:
    """``close_old_connections()``, never raising: a broken connection is dropped anyway."""
    try:
        close_old_connections()
    except DATABASE_OUTAGE_ERRORS as error:
        log.debug("could not close a database connection (%s)", database_error_summary(error))
    except Exception:
        log.warning("could not close a database connection", exc_info=True)


def _stamp(moment: datetime) -> str:
    return moment.isoformat(timespec="seconds")
