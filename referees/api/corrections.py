"""A judge's corrections of the board, each with a reason (tag ``corrections``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router

from referees import services
from referees.api.common import ERRORS, done, judge_of
from referees.api.schemas.common import DoneOut
from referees.api.schemas.corrections import ArmyCorrectionIn, ControlCorrectionIn
from referees.http.auth import SIGNED_IN
from referees.kernel.access import tournament_get

router = Router()


@router.post(
    "/tournaments/{tournament_id}/corrections/army",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["corrections"],
    summary="Move or destroy an army by hand, with a reason (judge)",
)
def army_correct(
    request: HttpRequest, tournament_id: int, payload: ArmyCorrectionIn
) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    services.army_correct(
        tournament_id=tournament.pk,
        army_code=payload.army,
        province=payload.province,
        destroyed_by=payload.destroyed_by,
        reason=payload.reason,
        actor=actor,
        now=timezone.now(),
    )
    return done(tournament_get(tournament_id=tournament.pk))


@router.post(
    "/tournaments/{tournament_id}/corrections/control",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["corrections"],
    summary="Set who controls a province, with a reason (judge)",
)
def control_correct(
    request: HttpRequest, tournament_id: int, payload: ControlCorrectionIn
) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    services.control_correct(
        tournament_id=tournament.pk,
        province=payload.province,
        clan=payload.clan,
        reason=payload.reason,
        actor=actor,
        now=timezone.now(),
    )
    return done(tournament_get(tournament_id=tournament.pk))
