"""The record a judge rules from (issue 30): each order with its own arrival time and author
(R4, R11), refused orders logged, one log line per battle change."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from referees import services
from referees.log_texts import log_context, log_text
from referees.models import LogEntry
from referees.selectors import Viewer, turn_history
from referees.services import OrderInput, TournamentError
from sl5r.api_errors import error_status
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db


def test_r4_the_history_shows_each_order_its_own_time_and_author(game16: Game) -> None:
    """It showed every order of a turn at the time of the turn's last order."""
    start = timezone.now()
    crab = game16.player("crab")
    services.order_give(player=crab, order=OrderInput("hold"), now=start)
    services.order_enter(
        tournament_id=game16.id,
        army_code="lion-1",
        order=OrderInput("hold"),
        actor=game16.judge_actor,
        now=start + timedelta(seconds=37),
    )
    services.order_give(
        player=game16.player("crane"), order=OrderInput("hold"), now=start + timedelta(seconds=61)
    )
    services.clock_resolve_now(tournament_id=game16.id, actor=game16.judge_actor, now=start)

    played = turn_history(tournament=game16.refresh(), number=1, viewer=Viewer.judge())

    assert played is not None
    rows = {row["army"]: row for row in played["orders"]}
    assert rows["crab-1"]["given_at"] == start.isoformat()
    assert crab.name in rows["crab-1"]["given_by"]
    assert not rows["crab-1"]["by_judge"]
    assert rows["lion-1"]["given_at"] == (start + timedelta(seconds=37)).isoformat()
    assert rows["lion-1"]["by_judge"]
    assert rows["crane-1"]["given_at"] == (start + timedelta(seconds=61)).isoformat()


def _clock_entries(game: Game) -> list[dict[str, object]]:
    return list(
        LogEntry.objects.filter(tournament=game.tournament, action="clock_extended")
        .order_by("id")
        .values_list("data", flat=True)
    )


def test_taking_time_off_logs_what_the_clock_lost_and_at_zero_is_refused(game16: Game) -> None:
    """Issue 30: "-1 min" at 0:00 logged "took 1:00 off" while nothing changed."""
    now = timezone.now()
    tournament = game16.refresh()
    assert tournament.deadline is not None
    left = (tournament.deadline - now).total_seconds()
    judge = game16.judge_actor

    services.clock_extend(tournament_id=game16.id, seconds=-600, actor=judge, now=now)
    services.clock_extend(tournament_id=game16.id, seconds=-600, actor=judge, now=now)
    with pytest.raises(TournamentError) as refused:
        services.clock_extend(tournament_id=game16.id, seconds=-60, actor=judge, now=now)

    assert error_status(refused.value) == 409
    assert "0:00" in refused.value.message
    lost = [entry["seconds"] for entry in _clock_entries(game16)]
    assert round(left) == 900  # a 15-minute turn, just opened
    assert lost == [-600, -300], lost  # the second took what was left
    ctx = log_context(game16.refresh())
    row = {"action": "clock_extended", "data": {"seconds": lost[1]}, "by": "judge"}
    assert "took 5:00 off" in log_text(row, ctx)


def test_time_taken_off_a_paused_clock_is_what_it_had_left(game16: Game) -> None:
    now = timezone.now()
    judge = game16.judge_actor
    services.clock_pause(tournament_id=game16.id, actor=judge, now=now)
    left = game16.refresh().paused_remaining
    assert left is not None and round(left) == 900

    services.clock_extend(tournament_id=game16.id, seconds=-1200, actor=judge, now=now)

    assert game16.refresh().paused_remaining == 0.0
    assert [entry["seconds"] for entry in _clock_entries(game16)] == [-900]
    with pytest.raises(TournamentError):
        services.clock_extend(tournament_id=game16.id, seconds=-1, actor=judge, now=now)
    services.clock_extend(tournament_id=game16.id, seconds=90, actor=judge, now=now)
    assert game16.refresh().paused_remaining == 90.0
