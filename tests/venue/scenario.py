"""A tournament for the venue tests, built through the services before the server starts.

    SL5R_VENUE=1 VENUE_DIR=… DATABASE_URL=sqlite:////tmp/x.sqlite3 \
        python -m tests.venue.scenario OUT.json

Run on a migrated database, with the venue's settings, so the join tokens are signed with the
venue's secret key. Eight players, one General per clan; turn 1 is open with a long clock
(the tests resolve turns themselves, or shorten the clock); the crab General's army has a
free neighbouring province to move to. ``OUT.json`` holds the judge's login and API key, the
tournament's id and the crab General's join token, army, home and that neighbour.
"""

from __future__ import annotations

import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

TURN_SECONDS = 600
JUDGE_USERNAME = "venue-judge"


def main(out: str) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")
    import django

    django.setup()
    Path(out).write_text(json.dumps(build(), indent=2), encoding="utf-8")


def build() -> dict[str, Any]:
    from django.contrib.auth import get_user_model
    from django.utils import timezone

    from referees import services
    from referees.kernel.access import judge_key_create
    from referees.models import Player
    from referees.services import Actor
    from sl5r.rules.clans import CLANS
    from sl5r.rules.mapgraph import rokugan_map
    from strategic_map.services import map_import

    now = timezone.now()
    graph = rokugan_map()
    game_map = map_import(slug="rokugan", data=graph.to_dict())
    password = secrets.token_urlsafe(16)
    judge = get_user_model().objects.create_user(
        username=JUDGE_USERNAME, password=password, is_staff=True
    )
    actor = Actor.of_user(judge)
    tournament = services.tournament_create(
        name="Venue cup",
        judge=judge,
        game_map=game_map,
        player_count=len(CLANS),
        now=now,
        turn_seconds=TURN_SECONDS,
    )
    for clan in CLANS:
        services.player_register(
            tournament=tournament,
            name=f"{clan.title()} General",
            clan=clan,
            role="general",
            actor=actor,
            now=now,
        )
    services.tournament_start(tournament_id=tournament.pk, actor=actor, now=now)
    homes: dict[str, str] = {}
    for clan in CLANS:
        home = sorted(graph.home_provinces[clan], key=lambda p: (p not in graph.castles, p))[0]
        homes[clan] = home
        services.start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions={f"{clan}-1": home},
            actor=actor,
            now=now,
        )
    services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=now)
    general = Player.objects.get(tournament=tournament, clan="crab", role="general")
    blocked = graph.blocked_provinces()
    occupied = set(homes.values())
    home = homes["crab"]
    neighbour = sorted(p for p in graph.neighbours[home] if p not in blocked | occupied)[0]
    # Every clan's General, for the tests that play many phones at once.
    generals = [
        {
            "army": f"{clan}-1",
            "token": services.player_token(
                Player.objects.get(tournament=tournament, clan=clan, role="general")
            ),
            "home": homes[clan],
            "neighbour": sorted(
                p for p in graph.neighbours[homes[clan]] if p not in blocked | occupied
            )[0],
        }
        for clan in CLANS
    ]
    return {
        "generals": generals,
        "judge": {
            "username": JUDGE_USERNAME,
            "password": password,
            "key": judge_key_create(user=judge, label="venue tests").key,
        },
        "tournament": tournament.pk,
        "token": services.player_token(general),
        "army": "crab-1",
        "home": home,
        "neighbour": neighbour,
    }


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python -m tests.venue.scenario OUT.json")
    main(sys.argv[1])
