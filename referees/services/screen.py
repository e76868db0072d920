"""The big screen's settings a judge switches from the console (issue 32).

The big screen sounds a gong at each turn's deadline unless a judge switches it off (a quiet
hall, a second screen in the same room). The switch is public: the screen reads it from the
public state (``tournament.screen_gong``), so the change is announced with a kind every
watcher hears, and the screen follows it at once.
"""

from __future__ import annotations

from datetime import datetime

from referees.kernel.core import Actor, announce, log_write, tournament_lock, unit_of_work
from referees.models import Tournament
from strategic_map.selectors import campaign_open_turn


@unit_of_work()
def tournament_gong_set(*, tournament_id: int, on: bool, actor: Actor, now: datetime) -> Tournament:
    """Switch the big screen's gong on or off; logged with who did it (R11) and announced.

    Asking for what is already so (a second click, two judges at once) changes nothing:
    nothing is logged and no event is sent.
    """
    tournament = tournament_lock(tournament_id)
    if tournament.screen_gong == on:
        return tournament
    tournament.screen_gong = on
    tournament.save(update_fields=["screen_gong"])
    turn = campaign_open_turn(tournament.campaign)
    log_write(
        tournament,
        actor=actor,
        action="tournament_gong_set",
        now=now,
        turn=turn.number if turn else None,
        on=on,
    )
    announce(tournament, "screen")
    return tournament
