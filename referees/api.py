"""The JSON API's endpoints: thin handlers that check who asks and call a service.

Who may call what is said in each endpoint's summary. The game's decisions (is the order
legal, is it late, may the line-up start) are the services'; their refusals come back as
``{"detail", "code"}`` with the status they carry (``sl5r.api`` installs the handlers).
"""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.middleware.csrf import get_token
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from ninja import Field as NinjaField
from ninja import Query, Router, Schema, Status

from referees import judging, roster, services
from referees.access import (
    map_exists,
    map_get,
    player_declares_for,
    player_get,
    player_join_link,
    player_session_login,
    tournament_get,
    tournament_players,
    user_judges,
    user_may_create_tournament,
)
from referees.auth import ANYONE, SIGNED_IN, Caller, caller_of
from referees.log_texts import LOG_KINDS, log_context, log_kind, log_text
from referees.models import Player, Tournament
from referees.ratelimit import client_ip, rate_check, rate_hit, rate_limit
from referees.schemas import (
    AnnouncementIn,
    AnnouncementOut,
    ArmyCorrectionIn,
    ClanId,
    ControlCorrectionIn,
    DoneOut,
    ErrorOut,
    ExtendIn,
    InstructionIn,
    InstructionOut,
    JoinIn,
    JoinOut,
    JudgeIn,
    JudgeOut,
    LineupOut,
    LogOut,
    MapIn,
    MapOut,
    OrderIn,
    OrderOut,
    PlayerChangeIn,
    PlayerIn,
    PlayerLinkOut,
    PlayerOut,
    PlayerReplaceIn,
    PositionsIn,
    RedrawIn,
    RosterErrorOut,
    RosterIn,
    RosterOut,
    Shortfall,
    SwapChoiceIn,
    ThreeVariant,
    TournamentChangeIn,
    TournamentIn,
    TournamentOut,
    UndoIn,
    UndoPreviewOut,
)
from referees.selectors import (
    LATEST_INSTRUCTIONS,
    LogFilter,
    Viewer,
    instruction_row,
    tournament_log,
    tournament_state,
    turn_case,
    visible_instructions,
)
from referees.services import Actor, OrderInput, TournamentError
from sl5r.public_url import public_url
from sl5r.rules.clans import CLANS
from sl5r.serving.interface import request_received_at
from strategic_map.models import Order
from strategic_map.services import map_import

router = Router()

ERRORS: dict[Any, Any] = {frozenset({400, 401, 403, 404, 409, 413, 422, 429}): ErrorOut}
LOG_PAGE = 500
LOG_PAGE_MAX = 1000

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_NOT_JUDGE = gettext_lazy("only a judge of this tournament may do this")
ERROR_NOT_PLAYER = gettext_lazy(
    "only a player of this tournament may do this: open your join link first"
)
ERROR_NO_ACCOUNT = gettext_lazy("only a signed-in judge (an account on this site) may do this")
ERROR_NOT_DECLARER = gettext_lazy(
    "the {clan} declare their starting positions through their Daimyo, or a General when "
    "the clan has no Daimyo, or a judge"
)
ERROR_BAD_JOIN = gettext_lazy(
    "this join link is not valid: it was revoked or replaced by a new one; ask a judge"
)
ERROR_MAP_EXISTS = gettext_lazy(
    'map: there is a map "{slug}" already; give the new map another slug'
)
ERROR_NO_CASE = gettext_lazy(
    "turn {number} has not been played (or was undone): there is no case file"
)


# --- Helpers ---------------------------------------------------------------------------------


def _judge(request: HttpRequest, tournament: Tournament) -> Actor:
    """The judge behind the request, as the log names him; 403 for anyone else."""
    user = caller_of(request).user
    if user is None or not user_judges(user, tournament):
        raise PermissionDenied(ERROR_NOT_JUDGE)
    return Actor.of_user(user)


def _player(request: HttpRequest, tournament: Tournament) -> Player:
    player = caller_of(request).player
    if player is None or player.tournament_id != tournament.pk:
        raise PermissionDenied(ERROR_NOT_PLAYER)
    return player


def judge_of(request: HttpRequest, tournament_id: int) -> tuple[Tournament, Actor]:
    """The tournament (404 if there is none) and its judge behind the request (403)."""
    tournament = tournament_get(tournament_id=tournament_id)
    return tournament, _judge(request, tournament)


def player_of(request: HttpRequest, tournament_id: int) -> tuple[Tournament, Player]:
    """The tournament (404 if there is none) and its player behind the request (403)."""
    tournament = tournament_get(tournament_id=tournament_id)
    return tournament, _player(request, tournament)


def _viewer(caller: Caller, tournament: Tournament) -> Viewer:
    if caller.user is not None and user_judges(caller.user, tournament):
        return Viewer.judge(label=f"judge {caller.user.get_username()}")
    if caller.player is not None and caller.player.tournament_id == tournament.pk:
        return Viewer.of_player(caller.player)
    return Viewer.public()


def _player_out(player: Player) -> dict[str, Any]:
    return {
        "id": player.pk,
        "name": player.name,
        "clan": player.clan,
        "role": player.role,
        "army": player.army.code if player.army else None,
    }


def _player_link_out(request: HttpRequest, player: Player) -> dict[str, Any]:
    token, url = player_join_link(request, player)
    return {**_player_out(player), "token": token, "join_url": url}


def _order_out(order: Order) -> dict[str, Any]:
    return {
        "army": order.army.code,
        "turn": order.turn.number,
        "kind": order.kind,
        "path": list(order.path),
        "reform": order.reform or None,
        "claim": order.claim,
        "on_swap": order.on_swap,
        "given_at": order.created_at,
        "given_by": order.author,
        "by_judge": order.by_judge,
    }


def _order_input(payload: OrderIn) -> OrderInput:
    return OrderInput(
        kind=payload.kind,
        path=tuple(payload.path),
        reform=payload.reform,
        claim=payload.claim,
        on_swap=payload.on_swap,
        turn=payload.turn,
    )


def _done(tournament: Tournament) -> dict[str, Any]:
    return {"ok": True, "phase": tournament.phase, "version": tournament.campaign.version}


def _map_out(slug: str, name: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "slug": slug,
        "name": name,
        "provinces": len(data.get("provinces", [])),
        "borders": len(data.get("borders", [])),
    }


# --- Who am I, CSRF --------------------------------------------------------------------------


class MeOut(Schema):
    authenticated_as: str = NinjaField(..., description="bearer, session or public")
    user: str | None
    player: PlayerOut | None
    tournament: int | None


# 401: a bearer token or API key that is not (or no longer) valid.
@router.get(
    "/me", response={200: MeOut, 401: ErrorOut}, auth=ANYONE, tags=["access"], summary="Who am I"
)
def me(request: HttpRequest) -> dict[str, Any]:
    """The caller as the API sees him: a user (judge) and/or a player, or nobody."""
    caller = caller_of(request)
    return {
        "authenticated_as": caller.via,
        "user": caller.user.get_username() if caller.user else None,
        "player": _player_out(caller.player) if caller.player else None,
        "tournament": caller.player.tournament_id if caller.player else None,
    }


class CsrfOut(Schema):
    csrf_token: str


@router.get("/csrf", response={200: CsrfOut}, tags=["access"], summary="CSRF token (anyone)")
def csrf(request: HttpRequest) -> dict[str, str]:
    """Sets the ``csrftoken`` cookie; a browser session sends it back as ``X-CSRFToken``."""
    return {"csrf_token": get_token(request)}


@router.post(
    "/join",
    response={200: JoinOut, **ERRORS},
    tags=["access"],
    summary="Join as a player (anyone with a join token)",
)
def join(request: HttpRequest, payload: JoinIn) -> dict[str, Any]:
    """Log this browser session in as the player the token belongs to.

    Scripts need not call this: they send the same token as ``Authorization: Bearer``.
    Failed attempts are limited per IP address (``SL5R_RATE_LIMITS["joins"]``).
    """
    address = f"ip:{client_ip(request)}"
    rate_check("joins", address)
    player = services.player_from_token(payload.token.strip())
    if player is None:
        rate_hit("joins", address)
        raise TournamentError(ERROR_BAD_JOIN, code="bad_token", status=403)
    player_session_login(request.session, player)
    return {"tournament": player.tournament_id, "player": _player_out(player)}


# --- Maps and set-up -------------------------------------------------------------------------


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
        raise TournamentError(
            ERROR_MAP_EXISTS.format(slug=payload.slug), code="map_exists", status=409
        )
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
    with transaction.atomic():
        if payload.map_data is not None:
            if map_exists(slug=payload.map):
                raise TournamentError(
                    ERROR_MAP_EXISTS.format(slug=payload.map), code="map_exists", status=409
                )
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


# --- Players and join links ------------------------------------------------------------------


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
    return Status(201, _player_link_out(request, player))


@router.get(
    "/tournaments/{tournament_id}/players",
    response={200: list[PlayerLinkOut], **ERRORS},
    auth=SIGNED_IN,
    tags=["players"],
    summary="List the players with their join links (judge)",
)
def player_list(request: HttpRequest, tournament_id: int) -> list[dict[str, Any]]:
    tournament, _ = judge_of(request, tournament_id)
    return [_player_link_out(request, p) for p in tournament_players(tournament=tournament)]


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
    return _player_link_out(request, player)


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
    return _player_link_out(request, player)


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
        frozenset({400, 401, 403, 404, 409, 413, 429}): ErrorOut,
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
    lines = roster.roster_lines(payload.lines, csv_format=payload.format == "csv")
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
            refused.status,
            {
                "detail": refused.message,
                "code": refused.code,
                "lines": _roster_lines_out(refused.preview),
            },
        )
    # Every line became one player, in order.
    stored = [
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
            "players": [_player_link_out(request, p) for p in players],
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
    with transaction.atomic():
        if payload.clan is not None or payload.role is not None:
            player = roster.player_move(
                tournament_id=tournament.pk,
                player_id=player.pk,
                clan=payload.clan or player.clan,
                role=payload.role or player.role,
                actor=actor,
                now=now,
            )
        if payload.name is not None:
            player = roster.player_rename(
                tournament_id=tournament.pk,
                player_id=player.pk,
                name=payload.name,
                actor=actor,
                now=now,
            )
    return _player_link_out(request, player_get(tournament=tournament, player_id=player.pk))


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
    roster.player_remove(
        tournament_id=tournament.pk, player_id=player_id, actor=actor, now=timezone.now()
    )
    return _done(tournament_get(tournament_id=tournament.pk))


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
    player = roster.player_replace(
        tournament_id=tournament.pk,
        player_id=player_id,
        name=payload.name,
        actor=actor,
        now=timezone.now(),
    )
    return _player_link_out(request, player)


# --- The start (R3) --------------------------------------------------------------------------


@router.post(
    "/tournaments/{tournament_id}/start",
    response={200: DoneOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["start"],
    summary="Start: end set-up, the clans' planning begins (judge)",
)
def start(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return _done(
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
    return _done(
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
def advance(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return _done(
        services.tournament_advance(tournament_id=tournament.pk, actor=actor, now=timezone.now())
    )


# --- The clock (R4) --------------------------------------------------------------------------


def _clock_route(path: str, summary: str) -> Any:
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
    return _done(services.clock_pause(tournament_id=tournament.pk, actor=actor, now=timezone.now()))


@_clock_route("resume", "Resume the clock")
def clock_resume(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return _done(
        services.clock_resume(tournament_id=tournament.pk, actor=actor, now=timezone.now())
    )


@_clock_route("extend", "Give the current phase or turn more (or less) time")
def clock_extend(request: HttpRequest, tournament_id: int, payload: ExtendIn) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return _done(
        services.clock_extend(
            tournament_id=tournament.pk, seconds=payload.seconds, actor=actor, now=timezone.now()
        )
    )


@_clock_route("resolve-now", "Resolve the current turn now")
def clock_resolve_now(
    request: HttpRequest, tournament_id: int, turn: int | None = None
) -> dict[str, Any]:
    """With ``?turn=N``, only turn N: a click that the clock beat is refused (409)."""
    tournament, actor = judge_of(request, tournament_id)
    return _done(
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
    return _done(services.clock_end(tournament_id=tournament.pk, actor=actor, now=timezone.now()))


@_clock_route("redraw", "Renew the open turn's draws: a new seed and commitment (R11)")
def clock_redraw(request: HttpRequest, tournament_id: int, payload: RedrawIn) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return _done(
        services.turn_redraw(
            tournament_id=tournament.pk, actor=actor, now=timezone.now(), reason=payload.reason
        )
    )


@_clock_route("undo", "Undo the last resolution; the clock pauses")
def clock_undo(request: HttpRequest, tournament_id: int, payload: UndoIn) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    return _done(
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


# --- Orders (R4) -----------------------------------------------------------------------------


def _player_order(request: HttpRequest, tournament_id: int, order: OrderInput) -> dict[str, Any]:
    # The caller's player row already names his tournament: no need to read it first (the
    # service locks it anyway). Only a refusal looks it up, to tell 404 from 403.
    player = caller_of(request).player
    if player is None or player.tournament_id != tournament_id:
        _player(request, tournament_get(tournament_id=tournament_id))
        raise PermissionDenied(ERROR_NOT_PLAYER)
    rate_limit("orders", f"player:{player.pk}")
    # R4: late or not by when the order reached the server, not when a thread took it up.
    stored = services.order_give(player=player, order=order, now=request_received_at(request))
    return _order_out(stored)


@router.put(
    "/tournaments/{tournament_id}/orders/mine",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Give or change my army's order (General)",
)
def order_give(request: HttpRequest, tournament_id: int, payload: OrderIn) -> dict[str, Any]:
    """R4: the last order given before the deadline counts. An order the turn would reject
    is refused with 422 and the engine's reason code (e.g. ``not_adjacent``); after the
    deadline, 409 ``late``. Limited per player (``SL5R_RATE_LIMITS["orders"]``).
    """
    return _player_order(request, tournament_id, _order_input(payload))


@router.delete(
    "/tournaments/{tournament_id}/orders/mine",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Withdraw my army's order (General)",
)
def order_withdraw(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    """The army holds (and claims) as with no order; recorded as a ``withdraw`` order."""
    return _player_order(request, tournament_id, OrderInput(kind=Order.Kind.WITHDRAW))


@router.put(
    "/tournaments/{tournament_id}/armies/{code}/on-swap",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Decide where a swap battle is fought (Daimyo, R5.3)",
)
def swap_choice(
    request: HttpRequest, tournament_id: int, code: str, payload: SwapChoiceIn
) -> dict[str, Any]:
    """Where the clan has a Daimyo, he chooses ``on_swap`` for its armies' move orders."""
    _, player = player_of(request, tournament_id)
    rate_limit("orders", f"player:{player.pk}")
    stored = services.order_swap_choice(
        player=player, army_code=code, on_swap=payload.on_swap, now=request_received_at(request)
    )
    return _order_out(stored)


def _judge_order(
    request: HttpRequest, tournament_id: int, code: str, order: OrderInput
) -> dict[str, Any]:
    tournament, actor = judge_of(request, tournament_id)
    stored = services.order_enter(
        tournament_id=tournament.pk,
        army_code=code,
        order=order,
        actor=actor,
        now=request_received_at(request),
    )
    return _order_out(stored)


@router.put(
    "/tournaments/{tournament_id}/armies/{code}/order",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Enter an order on a General's behalf (judge)",
)
def order_enter(
    request: HttpRequest, tournament_id: int, code: str, payload: OrderIn
) -> dict[str, Any]:
    """R4: a paper order handed in on time; the record names the judge who entered it."""
    return _judge_order(request, tournament_id, code, _order_input(payload))


@router.delete(
    "/tournaments/{tournament_id}/armies/{code}/order",
    response={200: OrderOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["orders"],
    summary="Withdraw an army's order on a General's behalf (judge)",
)
def order_enter_withdraw(request: HttpRequest, tournament_id: int, code: str) -> dict[str, Any]:
    return _judge_order(request, tournament_id, code, OrderInput(kind=Order.Kind.WITHDRAW))


# --- Corrections -----------------------------------------------------------------------------


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
    return _done(tournament_get(tournament_id=tournament.pk))


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
    return _done(tournament_get(tournament_id=tournament.pk))


# --- Reading: state, map, log, case files ----------------------------------------------------


@router.get(
    "/tournaments/{tournament_id}/state",
    response={200: dict[str, Any], **ERRORS},
    auth=ANYONE,
    tags=["reading"],
    summary="What the caller may see now (judge, player, or anyone)",
)
def state(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    """R1.1: the judge sees everything; a player what his role allows; anyone else the
    public display. ``tournament.version`` grows with every change.
    """
    tournament = tournament_get(tournament_id=tournament_id)
    viewer = _viewer(caller_of(request), tournament)
    return tournament_state(tournament=tournament, viewer=viewer, now=timezone.now())


@router.get(
    "/tournaments/{tournament_id}/map",
    response={200: dict[str, Any], **ERRORS},
    tags=["reading"],
    summary="The campaign's map JSON (anyone)",
)
def campaign_map(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament = tournament_get(tournament_id=tournament_id)
    data: dict[str, Any] = tournament.campaign.map_data
    return data


@router.get(
    "/tournaments/{tournament_id}/log",
    response={200: LogOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["reading"],
    summary="The tournament's log, oldest first, in pages (judge)",
)
def log(
    request: HttpRequest,
    tournament_id: int,
    after: int = Query(0, ge=0),
    limit: int = Query(LOG_PAGE, ge=1, le=LOG_PAGE_MAX),
    turn: int | None = Query(None, ge=0, description="only entries of this turn"),
    army: str = Query("", max_length=64, description="only entries about this army"),
    clan: str = Query("", max_length=16, description="only entries about this clan"),
    kind: str = Query("", max_length=16, description="only entries of this kind"),
) -> dict[str, Any]:
    """R11: entries with an id above ``after``; ``more`` says whether another page follows.

    Each entry has ``text``, the entry as a sentence in the reader's language, and
    ``kind``; ``turn``, ``army``, ``clan`` and ``kind`` filter the entries.
    """
    tournament, _ = judge_of(request, tournament_id)
    if kind and kind not in LOG_KINDS:
        raise TournamentError(
            gettext("kind: one of %(kinds)s") % {"kinds": ", ".join(LOG_KINDS)},
            code="invalid",
            status=422,
        )
    if clan and clan not in CLANS:
        raise TournamentError(
            gettext('clan: there is no clan "%(clan)s"') % {"clan": clan},
            code="invalid",
            status=422,
        )
    wanted = LogFilter(turn=turn, army=army.strip(), clan=clan, kind=kind)
    entries = tournament_log(tournament=tournament, after=after, limit=limit + 1, wanted=wanted)
    more = len(entries) > limit
    entries = entries[:limit]
    context = log_context(tournament)
    for entry in entries:
        entry["text"] = log_text(entry, context)
        entry["kind"] = log_kind(entry["action"])
    return {"entries": entries, "after": entries[-1]["id"] if entries else after, "more": more}


@router.get(
    "/tournaments/{tournament_id}/log/export",
    response={200: dict[str, Any], **ERRORS},
    auth=SIGNED_IN,
    tags=["reading"],
    summary="Download the whole log as a JSON file (judge)",
)
def log_export(request: HttpRequest, tournament_id: int) -> HttpResponse:
    tournament, _ = judge_of(request, tournament_id)
    entries: list[dict[str, Any]] = []
    after = 0
    while True:
        page = tournament_log(tournament=tournament, after=after, limit=LOG_PAGE_MAX)
        entries.extend(page)
        if len(page) < LOG_PAGE_MAX:
            break
        after = page[-1]["id"]
    document = {
        "tournament": {"id": tournament.pk, "name": tournament.name},
        "exported_at": timezone.now().isoformat(),
        "entries": entries,
    }
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="tournament-{tournament.pk}-log.json"'
    return response


@router.get(
    "/tournaments/{tournament_id}/turns/{number}/case",
    response={200: dict[str, Any], **ERRORS},
    auth=SIGNED_IN,
    tags=["reading"],
    summary="A played turn as an adjudication case file (judge)",
)
def case_file(request: HttpRequest, tournament_id: int, number: int) -> dict[str, Any]:
    """The turn as the engine saw it, with its draws and its result as ``expect``:
    ``manage.py adjudicate --check`` on the file replays it and confirms the result.
    """
    tournament, _ = judge_of(request, tournament_id)
    case = turn_case(tournament=tournament, number=number)
    if case is None:
        raise TournamentError(ERROR_NO_CASE.format(number=number), code="not_found", status=404)
    return case


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
    viewer = _viewer(caller_of(request), tournament)
    return visible_instructions(tournament=tournament, viewer=viewer, limit=limit)


# --- Judges ----------------------------------------------------------------------------------


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
