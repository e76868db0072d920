"""The clock (R4): pause, resume, extend, resolve, undo, and the big screen's gong at the
deadlines (tag ``clock``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router

from referees import services
from referees.api.common import ERRORS, done, judge_of
from referees.api.schemas.clock import ExtendIn, GongIn, RedrawIn, ReopenIn, UndoIn, UndoPreviewOut
from referees.api.schemas.common import DoneOut
from referees.http.auth import SIGNED_IN

router = Router()


Operation = TypeVar("Operation", bound=Callable[..., Any])


def _clock_route(path: str, summary: str) -> Callable[[Operation], Operation]:
    return router.post(
        f"/tournaments/{{tournament_id}}/clock/{path}",
        response={200: DoneOut, **ERRORS},
        auth=SIGNED_IN,
        tags=["clock"],
        summary=f"{summary} (judge)",
    )


@_clock_route("pause", "Pause the clock")
def clock_pause(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(services.clock_pause(tournament_id=tournament.pk, actor=actor, now=timezone.now()))


@_clock_route("resume", "Resume the clock")
def clock_resume(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(services.clock_resume(tournament_id=tournament.pk, actor=actor, now=timezone.now()))


@_clock_route("extend", "Give the current phase or turn more (or less) time")
def clock_extend(request: HttpRequest, tournament_id: int, payload: ExtendIn) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.clock_extend(
            tournament_id=tournament.pk, seconds=payload.seconds, actor=actor, now=timezone.now()
        )
    )


@_clock_route("resolve-now", "Resolve the current turn now")
def clock_resolve_now(
    request: HttpRequest,
    tournament_id: int,
    turn: int,
) -> dict[str, Any]:
    """Only turn ``?turn=N``: a click that the clock beat, a double click, a retried request
    or a second judge's click on the same turn is refused (409), never the next turn played."""
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.clock_resolve_now(
            tournament_id=tournament.pk,
            actor=actor,
            now=timezone.now(),
            turn=turn,
        )
    )


@_clock_route("end", "End the game now")
def clock_end(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(services.clock_end(tournament_id=tournament.pk, actor=actor, now=timezone.now()))


@_clock_route("reopen", "Reopen a game ended by mistake: its unplayed turn, paused")
def game_reopen(request: HttpRequest, tournament_id: int, payload: ReopenIn) -> dict[str, Any]:
    """After "End the game" by mistake: the turn it left unplayed opens again, paused, with
    its orders, and the tables it stopped go on (409 ``phase`` for a game that ended after
    its last turn)."""
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.game_reopen(
            tournament_id=tournament.pk, actor=actor, now=timezone.now(), reason=payload.reason
        )
    )


@_clock_route("redraw", "Renew the open turn's draws: a new seed and commitment (R11)")
def clock_redraw(request: HttpRequest, tournament_id: int, payload: RedrawIn) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.turn_redraw(
            tournament_id=tournament.pk, actor=actor, now=timezone.now(), reason=payload.reason
        )
    )


@_clock_route("flags/{flag_id}/ruled", "Clear a missed deadline's flag, once ruled on")
def deadline_flag_rule(request: HttpRequest, tournament_id: int, flag_id: int) -> dict[str, Any]:
    """A deadline that passed while the server was not serving is flagged on the console
    (the state's ``flags``) until a judge clears it here; the log keeps both."""
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.deadline_flag_rule(
            tournament_id=tournament.pk, flag_id=flag_id, actor=actor, now=timezone.now()
        )
    )


@_clock_route("undo", "Undo the last resolution; the clock pauses")
def clock_undo(request: HttpRequest, tournament_id: int, payload: UndoIn) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.clock_undo(
            tournament_id=tournament.pk,
            actor=actor,
            now=timezone.now(),
            reason=payload.reason,
            turn=payload.turn,
            seconds=payload.seconds,
        )
    )


@router.get(
    "/tournaments/{tournament_id}/clock/undo",
    response={200: UndoPreviewOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["clock"],
    summary="What an undo of the last resolved turn would discard, and its time (judge)",
)
def clock_undo_preview(request: HttpRequest, tournament_id: int) -> services.UndoPreview:
    tournament, _ = judge_of(request, tournament_id)
    return services.undo_preview(tournament_id=tournament.pk)


@router.post(
    "/tournaments/{tournament_id}/screen/gong",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["clock"],
    summary="Switch the big screen's gong at each deadline on or off (judge)",
)
def screen_gong(request: HttpRequest, tournament_id: int, payload: GongIn) -> dict[str, Any]:
    """Issue 32: ``{"on": false}`` silences the gong of every big screen of the tournament;
    the public state says it (``tournament.screen_gong``). Logged; the same value twice
    changes nothing."""
    tournament, actor = judge_of(request, tournament_id)
    return done(
        services.tournament_gong_set(
            tournament_id=tournament.pk, on=payload.on, actor=actor, now=timezone.now()
        )
    )
