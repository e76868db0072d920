"""Celery tasks: thin interfaces that take ids and call the clock services.

Both tasks may run any number of times, late, twice, or at the same moment in several
workers: ``clock_tick`` decides under the tournament's row lock whether anything is due,
and a turn is resolved through the OPEN → RESOLVING conditional update, so each step
happens once. That is why a task is never retried here: the next beat sweep (every two
seconds) is the retry.
"""

from __future__ import annotations

import logging

from celery import shared_task

from referees.kernel.deadlines import SWEEP_TASK, TICK_TASK, tick_send
from referees.services import TICK_DONE, TICK_HELD, TournamentError, clock_sweep, clock_tick_outcome

log = logging.getLogger(__name__)

# s: a tick that found its turn held by waiting orders runs again this much later.
HELD_COUNTDOWN = 0.3


@shared_task(name=TICK_TASK, ignore_result=True)
def tournament_tick(tournament_id: int) -> bool:
    """Do what is due for one tournament now; sent with ``eta`` = its deadline.

    True when a step was taken. A tournament that has gone (deleted) is logged and skipped.
    """
    try:
        outcome = clock_tick_outcome(tournament_id=tournament_id)
    except TournamentError as error:
        log.info("clock tick of tournament %s skipped: %s", tournament_id, error.message)
        return False
    if outcome == TICK_HELD:
        # Orders that arrived in time still wait to be stored: look again shortly rather
        # than block this worker (the ceiling, SL5R_ORDER_SETTLE_MAX_SECONDS, ends it).
        tick_send(tournament_id, countdown=HELD_COUNTDOWN)
    return outcome == TICK_DONE


@shared_task(name=SWEEP_TASK, ignore_result=True)
def clock_sweep_task() -> int:
    """Tick every tournament whose deadline has passed; Celery beat runs it every 2 s.

    It catches every deadline whose own tick was lost (a worker or Redis restarted, a
    deadline set while the broker was down). Returns the number of steps taken.
    """
    try:
        return clock_sweep()
    except TournamentError as error:
        # A tournament deleted between the list of due ones and its tick; the next sweep
        # goes on with the others.
        log.info("clock sweep stopped early: %s", error.message)
        return 0
