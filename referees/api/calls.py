"""Calls for a judge: a player calls from his page or his battle table, the judges take
and close the calls (tag ``calls``).

R1.1: a player reads only his own call; the judges read the queue; the public nothing.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Status

from referees import services
from referees.api.common import ERRORS, judge_of, player_of
from referees.api.schemas.calls import CallCloseIn, CallIn, CallMineOut, CallOut
from referees.http.auth import SIGNED_IN
from referees.http.ratelimit import rate_limit
from referees.reading.messages import call_row, call_rows, own_call

router = Router()


@router.post(
    "/tournaments/{tournament_id}/calls",
    response={201: CallOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["calls"],
    summary="Call a judge (player): one open call per player; a repeated call returns it",
)
def call_make(request: HttpRequest, tournament_id: int, payload: CallIn) -> Status[dict[str, Any]]:
    """Where the caller is (his table, else his army's province) is noted by the server.
    Counted with the player's other submissions (``SL5R_RATE_LIMITS["orders"]``)."""
    _, player = player_of(request, tournament_id)
    rate_limit("orders", f"player:{player.pk}")
    call = services.judge_call_make(
        player=player, reason=payload.reason, text=payload.text, now=timezone.now()
    )
    return Status(201, call_row(call))


@router.get(
    "/tournaments/{tournament_id}/calls/mine",
    response={200: CallMineOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["calls"],
    summary="The caller's own call: open, or closed in the last minutes (player)",
)
def call_mine(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    _, player = player_of(request, tournament_id)
    return {"call": own_call(player=player, now=timezone.now())}


@router.delete(
    "/tournaments/{tournament_id}/calls/mine",
    response={200: CallOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["calls"],
    summary="Withdraw one's open call (player)",
)
def call_withdraw(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    _, player = player_of(request, tournament_id)
    return call_row(services.judge_call_withdraw(player=player, now=timezone.now()))


@router.get(
    "/tournaments/{tournament_id}/calls",
    response={200: list[CallOut], **ERRORS},
    auth=SIGNED_IN,
    tags=["calls"],
    summary="The judges' queue: open calls oldest first, then those closed lately (judge)",
)
def call_list(request: HttpRequest, tournament_id: int) -> list[dict[str, Any]]:
    tournament, _ = judge_of(request, tournament_id)
    return call_rows(tournament=tournament, now=timezone.now())


@router.post(
    "/tournaments/{tournament_id}/calls/{call_id}/take",
    response={200: CallOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["calls"],
    summary="Take a call: on my way (judge); 409 if another judge has it or it is closed",
)
def call_take(request: HttpRequest, tournament_id: int, call_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    call = services.judge_call_take(
        tournament_id=tournament.pk, call_id=call_id, actor=actor, now=timezone.now()
    )
    return call_row(call)


@router.post(
    "/tournaments/{tournament_id}/calls/{call_id}/close",
    response={200: CallOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["calls"],
    summary="Close a call with a note for the caller (judge); 409 if already closed",
)
def call_close(
    request: HttpRequest, tournament_id: int, call_id: int, payload: CallCloseIn
) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    call = services.judge_call_close(
        tournament_id=tournament.pk,
        call_id=call_id,
        note=payload.note,
        actor=actor,
        now=timezone.now(),
    )
    return call_row(call)
