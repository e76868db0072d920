"""The tournament's judges: list, add or invite, remove (tag ``judges``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Status

from referees.api.common import ERRORS, judge_of
from referees.api.schemas.judges import JudgeIn, JudgeOut
from referees.http.auth import SIGNED_IN
from referees.services import judges as judging
from sl5r.public_url import public_url

router = Router()


def _judge_out(user: Any, sign_in_url: str | None = None) -> dict[str, Any]:
    return {
        "id": user.pk,
        "username": user.get_username(),
        "pending": not user.has_usable_password(),
        "sign_in_url": sign_in_url,
    }


@router.get(
    "/tournaments/{tournament_id}/judges",
    response={200: list[JudgeOut], **ERRORS},
    auth=SIGNED_IN,
    tags=["judges"],
    summary="List the judges (judge)",
)
def judge_list(request: HttpRequest, tournament_id: int) -> list[dict[str, Any]]:
    tournament, _ = judge_of(request, tournament_id)
    return [_judge_out(user) for user in judging.tournament_judges(tournament=tournament)]


@router.post(
    "/tournaments/{tournament_id}/judges",
    response={201: JudgeOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["judges"],
    summary="Add an existing account as a judge, or invite a new one (judge)",
)
def judge_add(request: HttpRequest, tournament_id: int, payload: JudgeIn) -> Status[dict[str, Any]]:
    """``invite: true`` makes the account, without a password, and answers its one-time
    sign-in link (``sign_in_url``), which is not stored and not shown again."""
    tournament, actor = judge_of(request, tournament_id)
    if payload.invite:
        invitation = judging.judge_invite(
            tournament_id=tournament.pk,
            username=payload.username,
            actor=actor,
            now=timezone.now(),
        )
        url = public_url(request, invitation.path)
        return Status(201, _judge_out(invitation.user, sign_in_url=url))
    user = judging.judge_add(
        tournament_id=tournament.pk, username=payload.username, actor=actor, now=timezone.now()
    )
    return Status(201, _judge_out(user))


@router.delete(
    "/tournaments/{tournament_id}/judges/{user_id}",
    response={200: list[JudgeOut], **ERRORS},
    auth=SIGNED_IN,
    tags=["judges"],
    summary="Remove a judge, never the last (judge)",
)
def judge_remove(request: HttpRequest, tournament_id: int, user_id: int) -> list[dict[str, Any]]:
    """Answers the judges left; 409 ``last_judge`` for the only one."""
    tournament, actor = judge_of(request, tournament_id)
    judging.judge_remove(
        tournament_id=tournament.pk, user_id=user_id, actor=actor, now=timezone.now()
    )
    return [_judge_out(user) for user in judging.tournament_judges(tournament=tournament)]
