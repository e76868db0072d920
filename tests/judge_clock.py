"""The judge's clock, as the tests' harnesses use it: a turn held open, then its time left set.

A story that plays against a real clock does not race it: its turns start
``HELD_TURN_SECONDS`` long (far longer than a test), and once the story has seen a turn open
and given its orders it sets the time left as a judge does (``clock_extend`` by the
difference, R4). A slow machine then makes a turn longer; it never makes an order late.
Used by the fault, venue, cluster and referees' Celery stories.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime

from django.utils import timezone

from referees.kernel.core import tournament_lock, unit_of_work
from referees.services import Actor, clock_extend
from strategic_map.selectors import campaign_open_turn

# The turn length a story starts with: each turn waits for the story to set its time left.
HELD_TURN_SECONDS = 3600


def time_left_seconds(deadline: datetime, seconds: float, now: datetime) -> int:
    """What a judge gives a turn (``clock_extend``'s ``seconds``) for ``seconds`` to be left
    at ``now`` of a turn ending at ``deadline``: a whole number, never 0 (refused)."""
    asked = round(seconds - (deadline - now).total_seconds())
    return asked or 1


@contextmanager
def time_left_setting(
    tournament_id: int, *, turn: int, seconds: float, actor: Actor, now: datetime | None = None
) -> Iterator[datetime]:
    """Set the time left of the open turn ``turn`` to about ``seconds`` (within half a
    second), as a judge does (``clock_extend`` by the difference, R4); yields the new
    deadline before the change commits.

    Under the tournament's lock, which every clock takes before it resolves: what the block
    does (send the clocks that fire at the deadline) is done before any clock can act on
    the deadline, however slow this process is. ``AssertionError`` when ``turn`` is no
    longer the open turn: the harness would be setting another turn's clock.
    """
    with unit_of_work():
        tournament = tournament_lock(tournament_id)
        open_turn = campaign_open_turn(tournament.campaign)
        assert open_turn is not None and open_turn.number == turn, (
            f"tournament {tournament_id}: turn {turn} is not the open turn ({open_turn})"
        )
        assert tournament.deadline is not None, f"turn {turn}: the clock is not running"
        now = now or timezone.now()
        changed = clock_extend(
            tournament_id=tournament_id,
            seconds=time_left_seconds(tournament.deadline, seconds, now),
            actor=actor,
            now=now,
        )
        assert changed.deadline is not None
        yield changed.deadline


def time_left_set(
    tournament_id: int, *, turn: int, seconds: float, actor: Actor, now: datetime | None = None
) -> datetime:
    """``time_left_setting`` with nothing else to do under the lock; the new deadline."""
    with time_left_setting(
        tournament_id, turn=turn, seconds=seconds, actor=actor, now=now
    ) as deadline:
        return deadline
