"""When the turn clock must act: the deadlines, the settle window, and the Celery tick.

The services call these whenever a deadline changes; what then calls the services when a
deadline passes is ``referees.clock_thread`` (the in-process thread) or ``referees.tasks`` (Celery),
both above the services. Two clocks exist, chosen by ``settings.SL5R_CLOCK``; both only call
the services, which do each step exactly once however many clocks fire at the same moment:

- ``"inprocess"`` (the embedded default): ``referees.clock_thread.InProcessClock``, a daemon thread
  inside the web server (``manage.py serve``) or on its own (``manage.py runclock``) that
  sweeps every ``settings.SL5R_CLOCK_INTERVAL`` seconds.
- ``"celery"``: ``schedule_deadline`` sends the task ``TICK_TASK`` with ``eta`` = when the
  deadline is due (``tick_due_at``) when a deadline is set, and Celery beat runs
  ``SWEEP_TASK`` every two seconds to catch any tick that was lost (worker or Redis
  restarted).

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

The clock as pages and answers show it (``clock_left``, ``tournament_clock``) and the orders
that arrived around a deadline the site missed (``orders_around_deadline``) are read here too.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction

from referees.models import LogEntry, Tournament
from sl5r.serving.interface import waiting_order_requests

log = logging.getLogger(__name__)

CELERY = "celery"
INPROCESS = "inprocess"
RUNNING_PHASE = Tournament.Phase.RUNNING
# Sending a task must never hold up the request that changed the deadline for long: if the
# broker does not answer, the beat sweep still finds the deadline.
# The Celery tasks' names (``referees.tasks`` registers them under these).
TICK_TASK = "referees.tournament_tick"
SWEEP_TASK = "referees.clock_sweep"
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


def tick_send(tournament_id: int, **options: Any) -> None:
    """Send the Celery tick of ``tournament_id`` now, with Celery's ``options`` (``eta``,
    ``countdown``…). By the task's name: the tasks sit above the services that call this."""
    current_app.send_task(TICK_TASK, args=[tournament_id], **options)


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
        try:
            tick_send(tournament_id, eta=due_at, retry=True, retry_policy=SEND_RETRY_POLICY)
        except Exception:  # the deadline is stored; the beat sweep will find it
            log.warning(
                "could not schedule the clock tick of tournament %s at %s; "
                "the beat sweep will resolve it",
                tournament_id,
                due_at.isoformat(),
                exc_info=True,
            )

    transaction.on_commit(send)


def clock_left(tournament: Tournament, now: datetime) -> float | None:
    """The seconds the clock shows at ``now`` (paused or running); None when none runs."""
    if tournament.paused:
        return tournament.paused_remaining
    if tournament.deadline is not None:
        return max(0.0, (tournament.deadline - now).total_seconds())
    return None


def tournament_clock(tournament: Tournament, now: datetime) -> dict[str, Any]:
    """The clock as the server sees it: pages count down from ``remaining``, not their own."""
    remaining = clock_left(tournament, now)
    return {
        "phase": tournament.phase,
        "paused": tournament.paused,
        "deadline": tournament.deadline.isoformat() if tournament.deadline else None,
        "remaining": remaining,
        "server_time": now.isoformat(),
    }


# The orders shown with a missed deadline: those that arrived from this long before it
# until the turn was resolved, and those refused as late up to this long after: on waking,
# the clock and the requests that waited in the socket race, and either may go first.
AROUND_DEADLINE = timedelta(seconds=60)
AROUND_DEADLINE_MAX = 100


def orders_around_deadline(
    *, tournament: Tournament, deadline: datetime, resolved_at: datetime
) -> list[dict[str, Any]]:
    """The orders given, withdrawn or refused around a deadline the site missed, in order
    of arrival: what a judge rules from."""
    rows = (
        LogEntry.objects.filter(
            tournament=tournament,
            action__in=("order_given", "order_withdrawn", "order_refused"),
            at__gte=deadline - AROUND_DEADLINE,
            at__lte=resolved_at + AROUND_DEADLINE,
        )
        .order_by("at", "pk")
        .values("pk", "action", "at", "actor", "data")
    )
    around = []
    for row in rows:
        data = row["data"]
        if row["at"] > resolved_at and not (
            row["action"] == "order_refused" and data.get("code") == "late"
        ):
            continue  # the next turn's orders
        around.append(
            {
                "entry": row["pk"],
                "action": row["action"],
                "at": row["at"].isoformat(),
                "by": row["actor"],
                "army": data.get("army"),
                "code": data.get("code"),
            }
        )
    return around[:AROUND_DEADLINE_MAX]
