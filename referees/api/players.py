"""The players and their join links (tag ``players``)."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from django.utils import timezone
from ninja import Router, Status

from referees import services
from referees.api.common import ERRORS, done, judge_of
from referees.api.schemas.common import DoneOut, PlayerLinkOut
from referees.api.schemas.players import (
    PlayerChangeIn,
    PlayerIn,
    PlayerReplaceIn,
    RosterErrorOut,
    RosterIn,
    RosterOut,
)
from referees.forms.roster import roster_lines
from referees.http.auth import SIGNED_IN
from referees.http.schemas import ErrorOut
from referees.kernel.access import player_get, player_link_row, tournament_get, tournament_players
from referees.kernel.core import unit_of_work
from referees.services import players as player_edits
from referees.services import roster
from sl5r.api_errors import error_status

router = Router()


@router.post(
    "/tournaments/{tournament_id}/players",
    response={201: PlayerLinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="Register a player (judge)",
)
def player_register(
    request: HttpRequest, tournament_id: int, payload: PlayerIn
) -> Status[dict[str, Any]]:
    """R1: a player with his clan and role; a General gets his army. Answers his join link."""
    tournament, actor = judge_of(request, tournament_id)
    player = services.player_register(
        tournament=tournament,
        name=payload.name,
        clan=payload.clan,
        role=payload.role,
        actor=actor,
        now=timezone.now(),
    )
    return Status(201, player_link_row(request, player))


@router.get(
    "/tournaments/{tournament_id}/players",
    response={200: list[PlayerLinkOut], **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="List the players with their join links (judge)",
)
def player_list(request: HttpRequest, tournament_id: int) -> list[dict[str, Any]]:
    tournament, _ = judge_of(request, tournament_id)
    return [player_link_row(request, p) for p in tournament_players(tournament=tournament)]


@router.post(
    "/tournaments/{tournament_id}/players/{player_id}/join-link",
    response={200: PlayerLinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="Reissue a join link (judge)",
)
def join_link_reissue(request: HttpRequest, tournament_id: int, player_id: int) -> dict[str, Any]:
    """A new link for the player; the old one, and every device that used it, stop working."""
    tournament, actor = judge_of(request, tournament_id)
    player = player_get(tournament=tournament, player_id=player_id)
    services.player_token_reissue(player=player, actor=actor, now=timezone.now())
    return player_link_row(request, player)


@router.delete(
    "/tournaments/{tournament_id}/players/{player_id}/join-link",
    response={200: PlayerLinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="Revoke a join link (judge)",
)
def join_link_revoke(request: HttpRequest, tournament_id: int, player_id: int) -> dict[str, Any]:
    """The player's link stops working and his devices are logged out, until a reissue."""
    tournament, actor = judge_of(request, tournament_id)
    player = player_get(tournament=tournament, player_id=player_id)
    services.player_token_revoke(player=player, actor=actor, now=timezone.now())
    return player_link_row(request, player)


def _roster_lines_out(preview: roster.RosterPreview) -> list[dict[str, Any]]:
    return [
        {
            "line": row.number,
            "name": row.name,
            "clan": row.clan,
            "clan_proposed": row.proposed_clan,
            "role": row.role.value if row.role else None,
            "role_proposed": row.proposed_role,
            "army": row.army,
            "problems": list(row.problems),
        }
        for row in preview.rows
    ]


@router.post(
    "/tournaments/{tournament_id}/players/bulk",
    response={
        (200, 201): RosterOut,
        422: RosterErrorOut,
        frozenset({400, 401, 403, 404, 409, 413, 429, 503}): ErrorOut,
    },
    auth=SIGNED_IN,
    tags=["players"],
    summary="Register many players at once, or preview them (judge)",
)
def player_register_bulk(
    request: HttpRequest, tournament_id: int, payload: RosterIn
) -> Status[dict[str, Any]]:
    """R1 on the whole list: each line's clan and role (proposed where left out), the army a
    General gets and every problem. ``dry_run`` stores nothing (200); otherwise all the
    players are stored (201) or none (422, the lines with their problems)."""
    tournament, actor = judge_of(request, tournament_id)
    lines = roster_lines(payload.lines, csv_format=payload.format == "csv")
    if payload.dry_run:
        preview = roster.roster_preview(tournament=tournament, lines=lines)
        return Status(
            200,
            {
                "dry_run": True,
                "ok": preview.ok,
                "registered_before": preview.registered,
                "player_count": preview.player_count,
                "lines": _roster_lines_out(preview),
                "players": [],
            },
        )
    try:
        players = roster.roster_register(
            tournament_id=tournament.pk, lines=lines, actor=actor, now=timezone.now()
        )
    except roster.RosterRefused as refused:
        return Status(
            error_status(refused),
            {
                "detail": refused.message,
                "code": refused.code,
                "lines": _roster_lines_out(refused.preview),
            },
        )
    # Every line became one player, in order.
    stored: list[dict[str, Any]] = [
        {
            "line": line.number,
            "name": player.name,
            "clan": player.clan,
            "clan_proposed": not line.clan,
            "role": player.role,
            "role_proposed": not line.role,
            "army": player.army.code if player.army else None,
            "problems": [],
        }
        for line, player in zip(lines, players, strict=True)
    ]
    return Status(
        201,
        {
            "dry_run": False,
            "ok": True,
            "registered_before": tournament.players.count() - len(players),
            "player_count": tournament.player_count,
            "lines": stored,
            "players": [player_link_row(request, p) for p in players],
        },
    )


@router.patch(
    "/tournaments/{tournament_id}/players/{player_id}",
    response={200: PlayerLinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="Rename a player, or move him to another clan or role (judge)",
)
def player_change(
    request: HttpRequest, tournament_id: int, player_id: int, payload: PlayerChangeIn
) -> dict[str, Any]:
    """A new name in any phase; another clan or role during set-up only, if R1 allows the
    line-up that results (his army follows his role). Both together, or neither."""
    tournament, actor = judge_of(request, tournament_id)
    player = player_get(tournament=tournament, player_id=player_id)
    now = timezone.now()
    with unit_of_work():
        if payload.clan is not None or payload.role is not None:
            player = player_edits.player_move(
                tournament_id=tournament.pk,
                player_id=player.pk,
                clan=payload.clan or player.clan,
                role=payload.role or player.role,
                actor=actor,
                now=now,
            )
        if payload.name is not None:
            player = player_edits.player_rename(
                tournament_id=tournament.pk,
                player_id=player.pk,
                name=payload.name,
                actor=actor,
                now=now,
            )
    return player_link_row(request, player_get(tournament=tournament, player_id=player.pk))


@router.delete(
    "/tournaments/{tournament_id}/players/{player_id}",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="Remove a player before the start (judge)",
)
def player_remove(request: HttpRequest, tournament_id: int, player_id: int) -> dict[str, Any]:
    """During set-up only: the player, his army and his join link are gone."""
    tournament, actor = judge_of(request, tournament_id)
    player_edits.player_remove(
        tournament_id=tournament.pk, player_id=player_id, actor=actor, now=timezone.now()
    )
    return done(tournament_get(tournament_id=tournament.pk))


@router.post(
    "/tournaments/{tournament_id}/players/{player_id}/replace",
    response={200: PlayerLinkOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="Replace a player who leaves the tournament (judge)",
)
def player_replace(
    request: HttpRequest, tournament_id: int, player_id: int, payload: PlayerReplaceIn
) -> dict[str, Any]:
    """After the start: the newcomer takes the army, clan and role, and gets a new join link
    (answered here); the old link, and every device that used it, stop working."""
    tournament, actor = judge_of(request, tournament_id)
    player = player_edits.player_replace(
        tournament_id=tournament.pk,
        player_id=player_id,
        name=payload.name,
        actor=actor,
        now=timezone.now(),
    )
    return player_link_row(request, player)
