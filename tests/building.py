"""A running tournament built through the services, for tests and the harnesses' control.

``running_tournament_build`` is what the ``make_running_tournament`` fixture calls; the
several-machines harness (``tests/hosts/control.py``) calls it on a deployment's database.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.utils import timezone

from referees.models import Tournament
from referees.services import (
    Actor,
    player_register,
    start_positions_declare,
    tournament_advance,
    tournament_create,
    tournament_start,
)
from sl5r.rules.clans import CLANS
from sl5r.rules.mapgraph import rokugan_map
from strategic_map.services import map_import


def running_tournament_build(
    *,
    user_model: Any,
    name: str,
    now: datetime | None = None,
    turn_seconds: int = 60,
    player_count: int = 8,
    turns_total: int | None = None,
) -> Tournament:
    """A tournament up to turn 1 open.

    ``now`` is when everything happened (turn 1's deadline is ``now + turn_seconds``), so a
    ``now`` in the past gives a tournament whose deadline passed while nothing was running.
    Every clan has ``player_count / 8`` Generals and nobody else, starting in castle home
    provinces first: R1 gives that line-up for 8, 16 and 24 players (24 with three Generals).
    """
    if player_count not in (8, 16, 24):
        raise ValueError("player_count: 8, 16 or 24 (R1: Generals only)")
    now = now or timezone.now()
    graph = rokugan_map()
    game_map = map_import(slug="rokugan", data=graph.to_dict())
    judge, _ = user_model.objects.get_or_create(username="fixture-judge")
    actor = Actor.of_user(judge)
    tournament = tournament_create(
        name=name,
        judge=judge,
        game_map=game_map,
        player_count=player_count,
        now=now,
        turn_seconds=turn_seconds,
        turns_total=turns_total,
        three_variant="three_generals" if player_count == 24 else "generals_and_daimyo",
    )
    per_clan = player_count // len(CLANS)
    for clan in CLANS:
        for number in range(1, per_clan + 1):
            player_register(
                tournament=tournament,
                name=f"{clan.title()} General {number}",
                clan=clan,
                role="general",
                actor=actor,
                now=now,
            )
    tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
    for clan in CLANS:
        homes = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))
        positions = {f"{clan}-{n}": homes[n - 1] for n in range(1, per_clan + 1)}
        start_positions_declare(
            tournament_id=tournament.pk, clan=clan, positions=positions, actor=actor, now=now
        )
    tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)  # negotiation
    return tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)  # turn 1
