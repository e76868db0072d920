"""The judge's side of the several-machines stories, run on a web machine of the deployment.

``python -m tests.hosts.control COMMAND [JSON]`` with the machine's environment (the
deployment's ``sl5r.env``: its PostgreSQL and Redis on the data host), printing one JSON
object; ``python -m tests.hosts.control serve`` reads one ``{"command": …, "options": …}``
a line on standard input and answers each with a line ``ANSWER_PREFIX`` + JSON (or
``{"error": …}``), so that a run of stories pays Django's start-up once:

- ``setup {"turn_seconds": S, "name": N}``: the fault scenario's eight-General tournament
  (``tests.faults.scenario``), one turn long, its turn 1 open until S seconds from now;
  its id, each army's join token, the deadline (seconds since the epoch) and an API key of
  its judge (``judge``), for the judge's clock API;
- ``progress {"tournament": T}``: how far its turns are (``turn_progress``);
- ``check {"tournament": T, "turns": N, "acknowledged": [[turn, army, given_at], ...]}``:
  what breaks "each turn resolved exactly once" and "no acknowledged order lost"
  (``exactly_once_problems``, ``orders_problems``), an order named by the ``given_at`` its
  acknowledgement gave; and the progress, read after.
"""

from __future__ import annotations

import json
import os
import sys
import traceback
from datetime import datetime, timedelta
from typing import Any


def main(argv: list[str]) -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "sl5r.settings")
    import django

    django.setup()
    command = argv[0]
    if command == "serve":
        return serve()
    options: dict[str, Any] = json.loads(argv[1]) if len(argv) > 1 else {}
    print(json.dumps(COMMANDS[command](**options), default=str))
    return 0


ANSWER_PREFIX = "control-answer "  # what else a command prints is not taken for its answer


def serve() -> int:
    """Commands from standard input, one a line, each answered on standard output."""
    from django.db import close_old_connections, connections

    for line in sys.stdin:
        request = json.loads(line)
        close_old_connections()
        try:
            answer = COMMANDS[request["command"]](**request.get("options", {}))
        except Exception:
            # A connection the data host's absence broke is not used again.
            connections.close_all()
            answer = {"error": traceback.format_exc()}
        print(ANSWER_PREFIX + json.dumps(answer, default=str), flush=True)
    return 0


def setup(*, turn_seconds: int, name: str) -> dict[str, Any]:
    from django.contrib.auth.models import User

    from referees.kernel.access import judge_key_create
    from referees.models import Player
    from referees.services import player_token
    from tests.building import running_tournament_build

    tournament = running_tournament_build(
        user_model=User, name=name, turn_seconds=turn_seconds, player_count=8, turns_total=1
    )
    judge = tournament.judges.get()
    tokens = {
        player.army.code: player_token(player)
        for player in Player.objects.filter(tournament=tournament).select_related("army")
        if player.army is not None
    }
    tournament.refresh_from_db()
    return {
        "tournament": tournament.pk,
        "tokens": tokens,
        "deadline": tournament.deadline.timestamp() if tournament.deadline else None,
        "judge": judge_key_create(user=judge, label="tests/hosts").key,
    }


def progress(*, tournament: int) -> dict[str, Any]:
    from strategic_map.models import Turn
    from tests.faults.scenario import turn_progress

    read = turn_progress(tournament)
    turns = Turn.objects.filter(campaign__tournament=tournament).order_by("number")
    return {
        "turns": [
            {
                "number": turn.number,
                "status": turn.status,
                "deadline": turn.deadline.timestamp() if turn.deadline else None,
                "resolved_at": turn.resolved_at.timestamp() if turn.resolved_at else None,
                "resolved_by": turn.resolved_by,
            }
            for turn in turns
        ],
        "phase": read.phase,
        "resolved": read.resolved,
        "open_turn": read.open_turn,
        "version": read.version,
        "deadline": read.deadline.timestamp() if read.deadline else None,
    }


def check(*, tournament: int, turns: int, acknowledged: list[list[Any]]) -> dict[str, Any]:
    from strategic_map.models import Order
    from tests.faults.scenario import exactly_once_problems, orders_problems

    ids: dict[int, list[int]] = {}
    problems = []
    for turn, army, given_at in acknowledged:
        at = datetime.fromisoformat(given_at.replace("Z", "+00:00"))
        # The API gives the time to the millisecond.
        found = list(
            Order.objects.filter(
                turn__campaign__tournament=tournament,
                turn__number=turn,
                army__code=army,
                created_at__gte=at,
                created_at__lt=at + timedelta(milliseconds=1),
            ).values_list("pk", flat=True)
        )
        if len(found) != 1:
            problems.append(f"turn {turn}: {army}'s order of {given_at} stored as {found}")
        ids.setdefault(turn, []).extend(found)
    problems += exactly_once_problems(tournament, turns=turns)
    problems += orders_problems(tournament, ids)
    return {"problems": problems, "progress": progress(tournament=tournament)}


COMMANDS = {"setup": setup, "progress": progress, "check": check}

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
