"""Setting a tournament up: line-ups, maps, tournaments (tag ``set-up``)."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy
from ninja import Router, Status

# The function, typed (ninja.Query is the Annotated shortcut, a generic to mypy).
from ninja.params.functions import Query

from referees import services
from referees.api.common import ERRORS, judge_of
from referees.api.schemas.setup import (
    LineupOut,
    MapIn,
    MapOut,
    Shortfall,
    ThreeVariant,
    TournamentChangeIn,
    TournamentIn,
    TournamentOut,
)
from referees.http.auth import SIGNED_IN, caller_of
from referees.kernel.access import map_exists, map_get, user_may_create_tournament
from referees.kernel.core import TournamentError, unit_of_work
from strategic_map.services import map_import

router = Router()

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_NO_ACCOUNT = gettext_lazy("only a signed-in judge (an account on this site) may do this")
ERROR_MAP_EXISTS = gettext_lazy(
    'map: there is a map "{slug}" already; give the new map another slug'
)


@router.get(
    "/lineup",
    response={200: LineupOut, **ERRORS},
    tags=["set-up"],
    summary="Proposed line-up for a player count (anyone)",
)
def lineup(
    request: HttpRequest,
    players: int = Query(..., ge=1, le=1000),
    shortfall: Shortfall = "smaller_clans",
    variant: ThreeVariant = "generals_and_daimyo",
) -> dict[str, Any]:
    """R1: each clan's roles for ``players`` players."""
    proposed = services.tournament_lineup(
        player_count=players, shortfall=shortfall, three_variant=variant
    )
    return {
        "players": proposed.players,
        "excluded_clans": sorted(proposed.excluded_clans),
        "clans": {clan: [r.value for r in roles] for clan, roles in proposed.clans.items()},
    }


def _creator(request: HttpRequest) -> Any:
    user = caller_of(request).user
    if not user_may_create_tournament(user):
        raise PermissionDenied(ERROR_NO_ACCOUNT)
    return user


@router.post(
    "/maps",
    response={201: MapOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["set-up"],
    summary="Import a map (judge)",
)
def map_create(request: HttpRequest, payload: MapIn) -> Status[dict[str, Any]]:
    """Validate a map JSON (R2) and store it under a new slug."""
    _creator(request)
    if map_exists(slug=payload.slug):
        raise TournamentError(ERROR_MAP_EXISTS.format(slug=payload.slug), code="map_exists")
    stored = map_import(slug=payload.slug, data=payload.data)
    return Status(201, _map_out(stored.slug, stored.name, stored.data))


@router.post(
    "/tournaments",
    response={201: TournamentOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["set-up"],
    summary="Create a tournament (judge)",
)
def tournament_create(request: HttpRequest, payload: TournamentIn) -> Status[dict[str, Any]]:
    """A new tournament in set-up on a loaded map, or on ``map_data`` imported first.

    The caller becomes its judge.
    """
    user = _creator(request)
    with unit_of_work():
        if payload.map_data is not None:
            if map_exists(slug=payload.map):
                raise TournamentError(ERROR_MAP_EXISTS.format(slug=payload.map), code="map_exists")
            game_map = map_import(slug=payload.map, data=payload.map_data)
        else:
            game_map = map_get(slug=payload.map)
        tournament = services.tournament_create(
            name=payload.name,
            judge=user,
            game_map=game_map,
            player_count=payload.player_count,
            now=timezone.now(),
            turn_seconds=payload.turn_seconds,
            turns_total=payload.turns_total,
            ends_at=payload.ends_at,
            clan_abilities=payload.clan_abilities,
            base_hand=payload.base_hand,
            shortfall=payload.shortfall,
            three_variant=payload.three_variant,
            planning_seconds=payload.planning_seconds,
            negotiation_seconds=payload.negotiation_seconds,
            time_zone=payload.time_zone,
            battle_game=payload.battle_game,
            bushido_turns=payload.bushido_turns,
        )
    return Status(
        201,
        {
            "id": tournament.pk,
            "name": tournament.name,
            "phase": tournament.phase,
            "player_count": tournament.player_count,
            "map": game_map.slug,
            "excluded_clans": list(tournament.campaign.excluded_clans),
        },
    )


@router.patch(
    "/tournaments/{tournament_id}",
    response={200: TournamentOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["set-up"],
    summary="Change the settings before the start (judge)",
)
def tournament_update(
    request: HttpRequest, tournament_id: int, payload: TournamentChangeIn
) -> dict[str, Any]:
    """The settings given change, the others stay; refused (409 ``phase``) once started, and
    when the players already registered would not fit R1's new line-up (400 ``lineup``)."""
    tournament, actor = judge_of(request, tournament_id)
    tournament = services.tournament_update(
        tournament_id=tournament.pk, actor=actor, now=timezone.now(), **payload.changes()
    )
    campaign = tournament.campaign
    return {
        "id": tournament.pk,
        "name": tournament.name,
        "phase": tournament.phase,
        "player_count": tournament.player_count,
        "map": campaign.map.slug,
        "excluded_clans": list(campaign.excluded_clans),
    }


def _map_out(slug: str, name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "slug": slug,
        "name": name,
        "provinces": len(data.get("provinces", [])),
        "borders": len(data.get("borders", [])),
    }
