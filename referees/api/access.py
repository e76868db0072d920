"""Who am I, the CSRF token, and joining as a player (tag ``access``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.middleware.csrf import get_token
from django.utils.translation import gettext_lazy
from ninja import Router

from referees import services
from referees.api.common import ERRORS
from referees.api.schemas.access import CsrfOut, JoinIn, JoinOut, MeOut
from referees.http.auth import ANYONE, caller_of
from referees.http.ratelimit import client_ip, rate_check, rate_hit
from referees.http.schemas import ErrorOut
from referees.kernel.access import player_session_login
from referees.kernel.core import TournamentError
from referees.kernel.visibility import player_row

router = Router()

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_BAD_JOIN = gettext_lazy(
    "this join link is not valid: it was revoked or replaced by a new one; ask a judge"
)


# 401: a bearer token or API key that is not (or no longer) valid; 503: the database is down
# (the credential is read from it).
@router.get(
    "/me",
    response={200: MeOut, frozenset({401, 503}): ErrorOut},
    auth=ANYONE,
    tags=["access"],
    summary="Who am I",
)
def me(request: HttpRequest) -> dict[str, Any]:
    """The caller as the API sees him: a user (judge) and/or a player, or nobody."""
    caller = caller_of(request)
    return {
        "authenticated_as": caller.via,
        "user": caller.user.get_username() if caller.user else None,
        "player": player_row(caller.player) if caller.player else None,
        "tournament": caller.player.tournament_id if caller.player else None,
    }


# No credential is read (no auth, no database): it answers 200 to anyone, a bad token too.
@router.get("/csrf", response={200: CsrfOut}, tags=["access"], summary="CSRF token (anyone)")
def csrf(request: HttpRequest) -> dict[str, str]:
    """Sets the ``csrftoken`` cookie; a browser session sends it back as ``X-CSRFToken``."""
    return {"csrf_token": get_token(request)}


@router.post(
    "/join",
    response={200: JoinOut, **ERRORS},
    tags=["access"],
    summary="Join as a player (anyone with a join token)",
)
def join(request: HttpRequest, payload: JoinIn) -> dict[str, Any]:
    """Log this browser session in as the player the token belongs to.

    Scripts need not call this: they send the same token as ``Authorization: Bearer``.
    Failed attempts are limited per IP address (``SL5R_RATE_LIMITS["joins"]``).
    """
    address = f"ip:{client_ip(request)}"
    rate_check("joins", address)
    player = services.player_from_token(payload.token.strip())
    if player is None:
        rate_hit("joins", address)
        raise TournamentError(str(ERROR_BAD_JOIN), code="bad_token")
    player_session_login(request.session, player)
    return {"tournament": player.tournament_id, "player": player_row(player)}
