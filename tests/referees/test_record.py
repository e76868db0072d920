"""The record a judge rules from (issue 30): each order with its own arrival time and author
(R4, R11), refused orders logged, one log line per battle change."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from referees import services
from referees.selectors import Viewer, turn_history
from referees.services import OrderInput
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
