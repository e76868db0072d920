"""The messages of a tournament as each viewer may read them: the announcements, a Daimyo's
written instructions (R1.1) and the calls for a judge.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.db.models import Q

from referees.kernel.visibility import Viewer
from referees.models import Announcement, Instruction, JudgeCall, Player, Tournament

# --- Announcements -----------------------------------------------------------------------------

LATEST_ANNOUNCEMENTS = 5


def latest_announcements(
    *, tournament: Tournament, limit: int = LATEST_ANNOUNCEMENTS
) -> list[dict[str, Any]]:
    """The newest announcements first: what everyone may read (text and time)."""
    rows = Announcement.objects.filter(tournament=tournament).order_by("-created_at", "-id")
    return [
        {"id": a.pk, "text": a.text, "at": a.created_at.isoformat()}
        for a in rows.only("id", "text", "created_at")[:limit]
    ]


# --- A Daimyo's written instructions (R1.1) ---------------------------------------------------

LATEST_INSTRUCTIONS = 20


def visible_instructions(
    *, tournament: Tournament, viewer: Viewer, limit: int = LATEST_INSTRUCTIONS
) -> list[dict[str, Any]]:
    """The written instructions ``viewer`` may read, newest first (R1.1).

    Judges read all of them; a Daimyo his clan's; a General those addressed to him or to
    all the Generals of his clan. Nobody else reads any: a Karo (messages go by word of
    mouth where there is one), other clans, the public.
    """
    rows = Instruction.objects.filter(tournament=tournament)
    player = viewer.player
    if viewer.kind == "judge":
        pass
    elif player is not None and player.role == Player.Role.DAIMYO:
        rows = rows.filter(clan=player.clan)
    elif player is not None and player.role == Player.Role.GENERAL:
        rows = rows.filter(clan=player.clan).filter(Q(recipient__isnull=True) | Q(recipient=player))
    else:
        return []
    rows = rows.select_related("author", "recipient").order_by("-created_at", "-id")[:limit]
    return [instruction_row(i) for i in rows]


def instructions_readable(
    newest_first: Sequence[Instruction], viewer: Viewer, *, limit: int = LATEST_INSTRUCTIONS
) -> list[Instruction]:
    """``visible_instructions`` of instructions already read (newest first): the same rule."""
    player = viewer.player
    if viewer.kind == "judge":
        rows = list(newest_first)
    elif player is not None and player.role == Player.Role.DAIMYO:
        rows = [i for i in newest_first if i.clan == player.clan]
    elif player is not None and player.role == Player.Role.GENERAL:
        rows = [
            i for i in newest_first if i.clan == player.clan and i.recipient_id in (None, player.pk)
        ]
    else:
        return []
    return rows[:limit]


def instruction_row(instruction: Instruction) -> dict[str, Any]:
    recipient = instruction.recipient
    return {
        "id": instruction.pk,
        "clan": instruction.clan,
        "author": instruction.author.name,
        "author_id": instruction.author_id,
        "to": recipient.name if recipient is not None else "all",
        "to_id": recipient.pk if recipient is not None else None,
        "text": instruction.text,
        "at": instruction.created_at.isoformat(),
        "turn": instruction.turn,
    }


# --- Calls for a judge -------------------------------------------------------------------------

# A closed call stays on the judges' list this long (what a colleague just settled), and on
# its caller's page until he has had time to read the judge's note.
CALL_CLOSED_SHOWN = timedelta(minutes=10)
CALLS_CLOSED_LISTED = 10


def _judge_name(label: str) -> str:
    # ``Actor.of_user`` labels a judge "judge <username>": the pages say "judge" themselves.
    return label.removeprefix("judge ")


def call_row(call: JudgeCall) -> dict[str, Any]:
    player = call.player
    return {
        "id": call.pk,
        "player": player.name,
        "player_id": player.pk,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
        "province": call.province or None,
        "battle": call.battle,
        "reason": call.reason,
        "text": call.text,
        "at": call.created_at.isoformat(),
        "taken_by": _judge_name(call.taken_by) if call.taken_by else None,
        "taken_at": call.taken_at.isoformat() if call.taken_at else None,
        "closed_at": call.closed_at.isoformat() if call.closed_at else None,
        # The caller himself withdrew it, or the judge who closed it.
        "withdrawn": bool(call.closed_at) and not call.closed_by.startswith("judge "),
        "closed_by": _judge_name(call.closed_by) if call.closed_by else None,
        "note": call.note,
    }


def calls_queued(calls: Iterable[JudgeCall], *, now: datetime) -> list[JudgeCall]:
    """``call_rows``'s calls, of calls already read: open ones oldest first, then those
    closed lately, newest first."""
    calls = list(calls)
    open_calls = sorted(
        (c for c in calls if c.closed_at is None), key=lambda c: (c.created_at, c.pk)
    )
    closed = sorted(
        (c for c in calls if c.closed_at is not None and c.closed_at >= now - CALL_CLOSED_SHOWN),
        key=lambda c: (c.closed_at, c.pk),
        reverse=True,
    )[:CALLS_CLOSED_LISTED]
    return open_calls + closed


def call_rows(*, tournament: Tournament, now: datetime) -> list[dict[str, Any]]:
    """The judges' queue: every open call, oldest first, then the calls closed lately."""
    calls = JudgeCall.objects.filter(tournament=tournament).select_related("player", "player__army")
    open_calls = list(calls.filter(closed_at__isnull=True).order_by("created_at", "id"))
    closed = list(
        calls.filter(closed_at__gte=now - CALL_CLOSED_SHOWN).order_by("-closed_at", "-id")[
            :CALLS_CLOSED_LISTED
        ]
    )
    return [call_row(c) for c in open_calls + closed]


def own_call(*, player: Player, now: datetime) -> dict[str, Any] | None:
    """The player's own call (R1.1: nobody else's): open, or closed within the last minutes."""
    call = (
        JudgeCall.objects.filter(tournament_id=player.tournament_id, player=player)
        .filter(Q(closed_at__isnull=True) | Q(closed_at__gte=now - CALL_CLOSED_SHOWN))
        .select_related("player", "player__army")
        .order_by("-created_at", "-id")
        .first()
    )
    return call_row(call) if call is not None else None
