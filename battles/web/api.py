"""The battle tables' endpoints (R7, R8): thin handlers that check who asks and call a service.

What a viewer may see of a table is ``battles.selectors``' decision (R1.1); whether a vote,
an action or a choice is allowed is the services' (and the table game's). Refusals come back
as ``{"detail", "code"}`` with a 4xx status, as everywhere in the API.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import HttpRequest
from django.utils import timezone
from django.utils.translation import gettext_lazy
from ninja import Router

from battles.models import Battle
from battles.selectors import battle_detail, battle_get, battles_visible
from battles.services import consent, play, results
from battles.web.schemas import ActionIn, AnswerIn, BattleOut, CorrectionIn, ResultIn, VoteIn
from referees.http.auth import SIGNED_IN, caller_of
from referees.http.ratelimit import rate_limit
from referees.http.schemas import ErrorOut
from referees.kernel.access import tournament_get, user_judges
from referees.kernel.core import Actor
from referees.kernel.visibility import Viewer
from referees.models import Player, Tournament

router = Router(tags=["battles"])

# As referees.api's: the services' refusals, a bad credential, a rate limit, a database down.
ERRORS: dict[Any, Any] = {frozenset({400, 401, 403, 404, 409, 413, 422, 429, 503}): ErrorOut}

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_NOT_PLAYER = gettext_lazy("only a judge or a player of this tournament may do this")
ERROR_NOT_JUDGE = gettext_lazy("only a judge of this tournament may do this")
ERROR_NOT_WATCHING = gettext_lazy(
    "you may not see this battle (R1.1): a General sees his own army's tables, a Daimyo "
    "his clan's unless the clan has a Karo, a Karo his clan's"
)


# --- Helpers ---------------------------------------------------------------------------------


def _viewer(request: HttpRequest, tournament: Tournament) -> Viewer:
    caller = caller_of(request)
    if caller.user is not None and user_judges(caller.user, tournament):
        return Viewer.judge(label=f"judge {caller.user.get_username()}")
    if caller.player is not None and caller.player.tournament_id == tournament.pk:
        return Viewer.of_player(caller.player)
    raise PermissionDenied(ERROR_NOT_PLAYER)


def _acting(request: HttpRequest, tournament: Tournament) -> tuple[Viewer, Actor | Player]:
    """Who acts: a judge (as an ``Actor``) or a player, whose actions are rate-limited."""
    viewer = _viewer(request, tournament)
    if viewer.kind == "judge":
        user = caller_of(request).user
        assert user is not None
        return viewer, Actor.of_user(user)
    assert viewer.player is not None
    rate_limit("orders", f"battle:{viewer.player.pk}")
    return viewer, viewer.player


def _table(request: HttpRequest, tournament_id: int, battle_id: int) -> tuple[Tournament, Battle]:
    tournament = tournament_get(tournament_id=tournament_id)
    battle = battle_get(tournament=tournament, battle_id=battle_id)
    battle.tournament = tournament
    return tournament, battle


def _shown(tournament: Tournament, battle_id: int, viewer: Viewer) -> dict[str, Any]:
    """The table after a change, as the caller may see it now."""
    battle = battle_get(tournament=tournament, battle_id=battle_id)
    battle.tournament = Tournament.objects.select_related("campaign").get(pk=tournament.pk)
    row = battle_detail(battle=battle, viewer=viewer)
    if row is None:  # pragma: no cover - whoever acted at a table may see it
        raise PermissionDenied(ERROR_NOT_WATCHING)
    return row


def _may_see(battle: Battle, viewer: Viewer) -> dict[str, Any]:
    row = battle_detail(battle=battle, viewer=viewer)
    if row is None:
        raise PermissionDenied(ERROR_NOT_WATCHING)
    return row


# --- Endpoints -------------------------------------------------------------------------------


@router.get(
    "/tournaments/{tournament_id}/battles",
    response={200: list[BattleOut], **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="The battle tables the caller may see (judge, General, Daimyo, Karo)",
)
def battle_list(request: HttpRequest, tournament_id: int) -> list[dict[str, Any]]:
    """R1.1: a judge sees every table; a General his army's; a Daimyo his clan's where it
    has no Karo; a Karo his clan's. Open tables first, newest first.
    """
    tournament = tournament_get(tournament_id=tournament_id)
    return battles_visible(tournament=tournament, viewer=_viewer(request, tournament))


@router.get(
    "/tournaments/{tournament_id}/battles/{battle_id}",
    response={200: BattleOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="One battle table (whoever may see it)",
)
def battle_show(request: HttpRequest, tournament_id: int, battle_id: int) -> dict[str, Any]:
    """The table with the game's summary and the actions the caller may send now; a judge
    also gets the game's whole ``state`` (draws and history, R11).
    """
    tournament, battle = _table(request, tournament_id, battle_id)
    return _may_see(battle, _viewer(request, tournament))


@router.post(
    "/tournaments/{tournament_id}/battles/{battle_id}/vote",
    response={200: BattleOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="Say peace or battle at a meeting (General for his army; judge for a General)",
)
def battle_vote(
    request: HttpRequest, tournament_id: int, battle_id: int, payload: VoteIn
) -> dict[str, Any]:
    """R7: all peace, the armies stay together; one battle, the battle starts at once (also
    from peace). Limited per player as orders are.
    """
    tournament, battle = _table(request, tournament_id, battle_id)
    viewer, actor = _acting(request, tournament)
    play.meeting_vote(
        battle_id=battle.pk,
        army_code=payload.army,
        vote=payload.vote,
        actor=actor,
        now=timezone.now(),
    )
    return _shown(tournament, battle.pk, viewer)


@router.post(
    "/tournaments/{tournament_id}/battles/{battle_id}/actions",
    response={200: BattleOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="Act at a battle table (General as his army; judge)",
)
def battle_action(
    request: HttpRequest, tournament_id: int, battle_id: int, payload: ActionIn
) -> dict[str, Any]:
    """The body is the action itself, e.g. ``{"type": "honor", "army": "crab-1", "delta":
    2}``. An action the game does not allow now is refused with 422 and the game's reason.

    R8, R13: a General's change to another player's honor, provinces or rings becomes a
    proposal (in the table's ``proposals``) until that player or a judge confirms it. An
    action that ends the game at the table (his last province, a win, −20 honor) is refused
    with 409 ``confirm`` unless the body says ``"confirm": true``; a judge needs neither.
    """
    tournament, battle = _table(request, tournament_id, battle_id)
    viewer, actor = _acting(request, tournament)
    play.battle_act(
        battle_id=battle.pk, action=payload.model_dump(), actor=actor, now=timezone.now()
    )
    return _shown(tournament, battle.pk, viewer)


@router.post(
    "/tournaments/{tournament_id}/battles/{battle_id}/proposals/{proposal_id}",
    response={200: BattleOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="Confirm, decline or withdraw a proposal (the player concerned; its proposer; judge)",
)
def battle_proposal(
    request: HttpRequest, tournament_id: int, battle_id: int, proposal_id: int, payload: AnswerIn
) -> dict[str, Any]:
    """R8, R13: a confirmed proposal is applied at once, as its proposer's action."""
    tournament, battle = _table(request, tournament_id, battle_id)
    viewer, actor = _acting(request, tournament)
    consent.battle_proposal_answer(
        battle_id=battle.pk,
        proposal_id=proposal_id,
        answer=payload.answer,
        actor=actor,
        now=timezone.now(),
    )
    return _shown(tournament, battle.pk, viewer)


@router.post(
    "/tournaments/{tournament_id}/battles/{battle_id}/result",
    response={200: BattleOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="Choose the surviving armies (the winner's General; judge)",
)
def battle_result(
    request: HttpRequest, tournament_id: int, battle_id: int, payload: ResultIn
) -> dict[str, Any]:
    """R8, R9: the armies not named (and not the winner's clan) are destroyed by the
    winner's choice and may reform next turn; losers may reform two turns later.
    """
    tournament, battle = _table(request, tournament_id, battle_id)
    viewer, actor = _acting(request, tournament)
    results.battle_result_choose(
        battle_id=battle.pk, survivors=payload.survivors, actor=actor, now=timezone.now()
    )
    return _shown(tournament, battle.pk, viewer)


@router.post(
    "/tournaments/{tournament_id}/battles/{battle_id}/correct",
    response={200: BattleOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    summary="Correct an ended battle's result, with a reason (judge)",
)
def battle_correct(
    request: HttpRequest, tournament_id: int, battle_id: int, payload: CorrectionIn
) -> dict[str, Any]:
    """The battle's casualties are undone on the board and the corrected ones applied."""
    tournament, battle = _table(request, tournament_id, battle_id)
    viewer = _viewer(request, tournament)
    if viewer.kind != "judge":
        raise PermissionDenied(ERROR_NOT_JUDGE)
    user = caller_of(request).user
    assert user is not None
    results.battle_correct(
        battle_id=battle.pk,
        kind=payload.kind,
        winner=payload.winner,
        survivors=payload.survivors,
        reason=payload.reason,
        actor=Actor.of_user(user),
        now=timezone.now(),
    )
    return _shown(tournament, battle.pk, viewer)
