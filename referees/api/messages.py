"""Messages: the judges' announcements and a Daimyo's written instructions (R1.1) (tags
``announcements``, ``instructions``).
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Status

# The function, typed (ninja.Query is the Annotated shortcut, a generic to mypy).
from ninja.params.functions import Query

from referees import services
from referees.api.common import ERRORS, judge_of, player_of, viewer_of
from referees.api.schemas.messages import (
    AnnouncementIn,
    AnnouncementOut,
    InstructionIn,
    InstructionOut,
)
from referees.http.auth import ANYONE, SIGNED_IN, caller_of
from referees.http.ratelimit import rate_limit
from referees.kernel.access import tournament_get
from referees.reading.messages import LATEST_INSTRUCTIONS, instruction_row, visible_instructions

router = Router()


# --- Announcements ---------------------------------------------------------------------------


@router.post(
    "/tournaments/{tournament_id}/announcements",
    response={201: AnnouncementOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["announcements"],
    summary="Post an announcement for everyone: the big screen and every page (judge)",
)
def announcement_post(
    request: HttpRequest, tournament_id: int, payload: AnnouncementIn
) -> Status[dict[str, Any]]:
    """The latest announcements are in every viewer's state; an empty text is refused (422)."""
    tournament, actor = judge_of(request, tournament_id)
    announcement = services.announcement_post(
        tournament_id=tournament.pk, text=payload.text, actor=actor, now=timezone.now()
    )
    return Status(
        201,
        {
            "id": announcement.pk,
            "text": announcement.text,
            "at": announcement.created_at,
            "author": announcement.author,
        },
    )


# --- Written instructions (R1.1) -------------------------------------------------------------


@router.post(
    "/tournaments/{tournament_id}/instructions",
    response={201: InstructionOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["instructions"],
    summary="Send a written instruction to the clan's Generals (Daimyo of a clan without a Karo)",
)
def instruction_send(
    request: HttpRequest, tournament_id: int, payload: InstructionIn
) -> Status[dict[str, Any]]:
    """R1.1: to one General of the clan (``to``: his player id) or to all of them (null).

    Refused with 403 to anyone but a Daimyo, and to a Daimyo whose clan has a Karo (his
    messages go by word of mouth through the Karo). Counted with the Daimyo's other
    submissions (``SL5R_RATE_LIMITS["orders"]``).
    """
    _, player = player_of(request, tournament_id)
    rate_limit("orders", f"player:{player.pk}")
    instruction = services.instruction_send(
        player=player, text=payload.text, recipient_id=payload.to, now=timezone.now()
    )
    return Status(201, instruction_row(instruction))


@router.get(
    "/tournaments/{tournament_id}/instructions",
    response={200: list[InstructionOut], **ERRORS},
    auth=ANYONE,
    tags=["instructions"],
    summary="The written instructions the caller may read, newest first (judge, Daimyo, General)",
)
def instruction_list(
    request: HttpRequest,
    tournament_id: int,
    limit: int = Query(LATEST_INSTRUCTIONS, ge=1, le=500),
) -> list[dict[str, Any]]:
    """R1.1: a judge reads all; a Daimyo his clan's; a General those to him or to all the
    Generals of his clan. Anyone else (a Karo, the public) gets an empty list.
    """
    tournament = tournament_get(tournament_id=tournament_id)
    viewer = viewer_of(caller_of(request), tournament)
    return visible_instructions(tournament=tournament, viewer=viewer, limit=limit)
