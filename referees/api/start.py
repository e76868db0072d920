"""The start (R3): starting positions and the phases before the first turn (tag ``start``)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy
from ninja import Router

from referees import services
from referees.api.common import ERRORS, done, judge_of
from referees.api.schemas.common import ClanId, DoneOut
from referees.api.schemas.start import PositionsIn, VenueAddressIn
from referees.http.auth import SIGNED_IN, caller_of
from referees.kernel.access import player_declares_for, tournament_get, user_judges
from referees.kernel.core import Actor

router = Router()

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_NOT_DECLARER = gettext_lazy(
    "the {clan} declare their starting positions through their Daimyo, or a General when "
    "the clan has no Daimyo, or a judge"
)


@router.post(
    "/tournaments/{tournament_id}/start",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["start"],
    summary="Start: end set-up, the clans' planning begins (judge)",
)
def start(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.tournament_start(tournament_id=tournament.pk, actor=actor, now=timezone.now())
    )


@router.put(
    "/tournaments/{tournament_id}/positions/{clan}",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["start"],
    summary="Declare a clan's starting positions (judge; the clan's Daimyo, or a General "
    "of a clan without Daimyo)",
)
def positions_declare(
    request: HttpRequest, tournament_id: int, clan: ClanId, payload: PositionsIn
) -> dict[str, Any]:
    """R3.1-R3.2: where each of the clan's armies starts, checked as a whole."""
    tournament = tournament_get(tournament_id=tournament_id)
    caller = caller_of(request)
    if caller.user is not None and user_judges(caller.user, tournament):
        actor = Actor.of_user(caller.user)
    elif caller.player is not None and player_declares_for(caller.player, tournament, clan):
        actor = Actor.of_player(caller.player)
    else:
        raise PermissionDenied(ERROR_NOT_DECLARER.format(clan=clan))
    return done(
        services.start_positions_declare(
            tournament_id=tournament.pk,
            clan=clan,
            positions=payload.positions,
            actor=actor,
            now=timezone.now(),
        )
    )


@router.post(
    "/tournaments/{tournament_id}/advance",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["start"],
    summary="Move on to the next phase without waiting for the timer (judge)",
)
def advance(request: HttpRequest, tournament_id: int, phase: str | None = None) -> dict[str, Any]:
    """``?phase=`` the phase the judge saw: if the tournament has moved on since (the clock
    started the negotiation, another judge pressed first), 409 ``stale`` and nothing skipped."""
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.tournament_advance(
            tournament_id=tournament.pk, actor=actor, now=timezone.now(), seen_phase=phase
        )
    )


@router.post(
    "/tournaments/{tournament_id}/venue-address",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["start"],
    summary="Choose which of the venue laptop's addresses the links carry (judge)",
)
def venue_address(
    request: HttpRequest, tournament_id: int, payload: VenueAddressIn
) -> dict[str, Any]:
    """``make venue`` only; 400 when ``site`` is not one of the laptop's addresses."""
    tournament, actor = judge_of(request, tournament_id)
    services.venue_address_choose(site=payload.site, actor=actor, now=timezone.now())
    tournament.refresh_from_db()
    return done(tournament)
