"""Check-in before the start: who has come, a judge's "present", a stand-in for a no-show,
and a line-up smaller by the no-shows where R1 (b) allows it (tag ``check-in``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router

from referees.api.common import ERRORS, judge_of
from referees.api.schemas.checkin import CheckinOut, PresenceIn, ShrinkIn, ShrinkOut, StandInIn
from referees.api.schemas.common import PlayerLinkOut
from referees.http.auth import SIGNED_IN
from referees.kernel.access import player_link_row
from referees.services import checkin

router = Router()


@router.get(
    "/tournaments/{tournament_id}/checkin",
    response={200: list[CheckinOut], **ERRORS},
    auth=SIGNED_IN,
    tags=["check-in"],
    summary="Every player's check-in, those missing first (judge)",
)
def checkin_list(request: HttpRequest, tournament_id: int) -> list[dict[str, Any]]:
    tournament, _ = judge_of(request, tournament_id)
    return checkin.tournament_checkin(tournament=tournament)


@router.post(
    "/tournaments/{tournament_id}/players/{player_id}/presence",
    response={200: CheckinOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["check-in"],
    summary="Mark a player present by hand (he plays on paper), or take the mark back (judge)",
)
def presence_set(
    request: HttpRequest, tournament_id: int, player_id: int, payload: PresenceIn
) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    player = checkin.player_presence_set(
        tournament_id=tournament.pk,
        player_id=player_id,
        present=payload.present,
        actor=actor,
        now=timezone.now(),
    )
    return checkin.checkin_row(player)


@router.post(
    "/tournaments/{tournament_id}/players/{player_id}/stand-in",
    response={200: PlayerLinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["check-in"],
    summary="During set-up, another person takes a no-show's seat, with a new join link (judge)",
)
def stand_in(
    request: HttpRequest, tournament_id: int, player_id: int, payload: StandInIn
) -> dict[str, Any]:
    """The seat (clan, role, army) stays; the old join link stops working. After the start,
    ``POST …/players/{id}/replace``."""
    tournament, actor = judge_of(request, tournament_id)
    player = checkin.player_stand_in(
        tournament_id=tournament.pk,
        player_id=player_id,
        name=payload.name,
        actor=actor,
        now=timezone.now(),
    )
    return player_link_row(request, player)


@router.post(
    "/tournaments/{tournament_id}/lineup/shrink-preview",
    response={200: ShrinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["check-in"],
    summary="The line-up without these players, as R1 (b) would make it; nothing changes (judge)",
)
def shrink_preview(request: HttpRequest, tournament_id: int, payload: ShrinkIn) -> dict[str, Any]:
    """``ok`` false and ``problem`` say why R1 (b) does not allow it."""
    tournament, _ = judge_of(request, tournament_id)
    preview = checkin.lineup_shrink_preview(tournament=tournament, player_ids=payload.players)
    return preview.as_dict()


@router.post(
    "/tournaments/{tournament_id}/lineup/shrink",
    response={200: ShrinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["check-in"],
    summary="Play without these players: the count goes down, R1 (b) reassigns roles (judge)",
)
def shrink_apply(request: HttpRequest, tournament_id: int, payload: ShrinkIn) -> dict[str, Any]:
    """Set-up only; refused (400 ``lineup``) with every reason when R1 (b) does not allow it.
    A Karo (or Daimyo) who steps into a missing General's place takes his army."""
    tournament, actor = judge_of(request, tournament_id)
    preview = checkin.lineup_shrink_apply(
        tournament_id=tournament.pk, player_ids=payload.players, actor=actor, now=timezone.now()
    )
    return preview.as_dict()
