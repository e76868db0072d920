"""What every module of the API shares: who asks (a judge, a player, a viewer), the refusals
every operation documents, and the shapes several answers have in common.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils.translation import gettext_lazy

from referees.http.auth import Caller, caller_of
from referees.http.schemas import ErrorOut
from referees.kernel.access import tournament_get, user_judges
from referees.kernel.core import Actor
from referees.kernel.visibility import Viewer
from referees.models import Player, Tournament

# Every status an operation may refuse with: ERROR_STATUS's for the services' codes, 401 for
# a credential not (or no longer) valid, 429 for a rate limit, 503 while the database is down.
ERRORS: dict[Any, Any] = {frozenset({400, 401, 403, 404, 409, 413, 422, 429, 503}): ErrorOut}

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_NOT_JUDGE = gettext_lazy("only a judge of this tournament may do this")
ERROR_NOT_PLAYER = gettext_lazy(
    "only a player of this tournament may do this: open your join link first"
)


def _judge(request: HttpRequest, tournament: Tournament) -> Actor:
    """The judge behind the request, as the log names him; 403 for anyone else."""
    user = caller_of(request).user
    if user is None or not user_judges(user, tournament):
        raise PermissionDenied(ERROR_NOT_JUDGE)
    return Actor.of_user(user)


def _player(request: HttpRequest, tournament: Tournament) -> Player:
    player = caller_of(request).player
    if player is None or player.tournament_id != tournament.pk:
        raise PermissionDenied(ERROR_NOT_PLAYER)
    return player


def judge_of(request: HttpRequest, tournament_id: int) -> tuple[Tournament, Actor]:
    """The tournament (404 if there is none) and its judge behind the request (403)."""
    tournament = tournament_get(tournament_id=tournament_id)
    return tournament, _judge(request, tournament)


def player_of(request: HttpRequest, tournament_id: int) -> tuple[Tournament, Player]:
    """The tournament (404 if there is none) and its player behind the request (403)."""
    tournament = tournament_get(tournament_id=tournament_id)
    return tournament, _player(request, tournament)


def viewer_of(caller: Caller, tournament: Tournament) -> Viewer:
    """Who the caller is to ``tournament``: one of its judges, one of its players, or the public."""
    if caller.user is not None and user_judges(caller.user, tournament):
        return Viewer.judge(label=f"judge {caller.user.get_username()}")
    if caller.player is not None and caller.player.tournament_id == tournament.pk:
        return Viewer.of_player(caller.player)
    return Viewer.public()


def done(tournament: Tournament) -> dict[str, Any]:
    return {"ok": True, "phase": tournament.phase, "version": tournament.campaign.version}
