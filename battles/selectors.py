"""What each viewer may see of the battle tables (R1.1), decided here and nowhere else.

- a judge sees every table, with the game's full state;
- a General sees the tables his own army sat at, and acts at them as his army;
- a Daimyo watches the tables of his clan's armies, unless his clan has a Karo (then he
  hears of them only through the Karo);
- a Karo sees his clan's tables;
- the public sees none.

During a meeting a player sees the votes of his own army (a General) or of his clan's
armies (Daimyo, Karo), and of the others only whether they have spoken; once the meeting
is over every vote is shown. Rows are plain JSON-ready dicts, convenient for a page: the
engine's ``summary()``, the action types this viewer may send now, and what he may do
besides (vote, choose the survivors).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from typing import Any

from django.db.models import Prefetch, Q, QuerySet

from battles.draws import battle_commitment, battle_draw_steps, battle_seed_revealed
from battles.models import GATHERING_STATUSES, OPEN_STATUSES, Battle, BattleProposal, BattleSeat
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer, clan_roles
from referees.models import Player, Tournament
from sl5r.rules.games import GameError, game_for
from sl5r.rules.roles import Role
from strategic_map.selectors import campaign_game_map

log = logging.getLogger(__name__)

JUDGE = "judge"


def _watched_clan(viewer: Viewer, roles: Mapping[str, list[Role]]) -> str | None:
    """The clan whose tables a Daimyo (without a Karo) or a Karo watches; else None."""
    player = viewer.player
    if viewer.kind != "player" or player is None:
        return None
    if player.role == Player.Role.KARO:
        return player.clan
    if player.role == Player.Role.DAIMYO and Role.KARO not in roles.get(player.clan, []):
        return player.clan
    return None


def _own_army(viewer: Viewer) -> str | None:
    player = viewer.player
    if viewer.kind != "player" or player is None or player.role != Player.Role.GENERAL:
        return None
    return player.army.code if player.army is not None else None


def _visible_filter(viewer: Viewer, roles: Mapping[str, list[Role]]) -> Q | None:
    """The tables ``viewer`` may see as a query; None: none at all."""
    if viewer.kind == "judge":
        return Q()
    own = _own_army(viewer)
    if own is not None:
        return Q(seats__army__code=own)
    clan = _watched_clan(viewer, roles)
    if clan is not None:
        return Q(seats__army__clan=clan)
    return None


def _battles(tournament: Tournament) -> QuerySet[Battle]:
    seats = BattleSeat.objects.select_related("army").order_by("id")
    return Battle.objects.filter(tournament=tournament).prefetch_related(
        Prefetch("seats", queryset=seats)
    )


def battles_visible(*, tournament: Tournament, viewer: Viewer) -> list[dict[str, Any]]:
    """Every table ``viewer`` may see, the open ones first, newest first."""
    roles = clan_roles(tournament)
    where = _visible_filter(viewer, roles)
    if where is None:
        return []
    ids = Battle.objects.filter(Q(tournament=tournament) & where).values("pk")
    battles = list(_battles(tournament).filter(pk__in=ids).order_by("-opened_at", "-id"))
    battles.sort(key=lambda b: b.status not in OPEN_STATUSES)  # stable: open tables first
    names = _general_names(tournament, battles)
    return [_row(tournament, b, viewer, roles, names, with_state=False) for b in battles]


def battles_of_turn(*, tournament: Tournament, number: int, viewer: Viewer) -> list[dict[str, Any]]:
    """The tables of turn ``number`` for its history (R7, R8): those it opened and those
    decided in it, each with its armies, whether it was fought, its result and casualties.
    Only the tables ``viewer`` may see."""
    where = _visible_filter(viewer, clan_roles(tournament))
    if where is None:
        return []
    ids = Battle.objects.filter(
        Q(tournament=tournament) & where & (Q(opened_turn=number) | Q(outcome__turn=number))
    ).values("pk")
    battles = list(_battles(tournament).filter(pk__in=ids).order_by("opened_at", "id"))
    names = _general_names(tournament, battles)
    rows = []
    for battle in battles:
        outcome = battle.outcome if isinstance(battle.outcome, dict) else None
        rows.append(
            {
                "id": battle.pk,
                "province": battle.province,
                "status": battle.status,
                "status_label": str(Battle.Status(battle.status).label),
                "game": str(Battle.Game(battle.game).label),
                "opened_turn": battle.opened_turn,
                "opened_now": battle.opened_turn == number,
                "fought": battle.started_at is not None,
                "armies": [
                    {
                        "code": seat.army.code,
                        "clan": seat.army.clan,
                        "general": names.get(seat.army_id, ""),
                        "reinforcement": seat.reinforcement,
                        "joined_turn": seat.joined_turn,
                    }
                    for seat in battle.seats.all()
                ],
                "outcome": outcome,
                "decided_turn": outcome.get("turn") if outcome else None,
                "casualties": list(battle.casualties or []),
            }
        )
    return rows


def battle_get(*, tournament: Tournament, battle_id: int) -> Battle:
    """A table of ``tournament``; ``TournamentError`` ("not_found") when there is none."""
    battle = _battles(tournament).filter(pk=battle_id).first()
    if battle is None:
        raise TournamentError(
            f"there is no battle {battle_id} in this tournament", code="not_found"
        )
    return battle


def battle_may_see(*, battle: Battle, viewer: Viewer) -> bool:
    roles = clan_roles(battle.tournament)
    return _may_see(battle, viewer, roles)


def _may_see(battle: Battle, viewer: Viewer, roles: Mapping[str, list[Role]]) -> bool:
    if viewer.kind == "judge":
        return True
    seats = list(battle.seats.all())
    own = _own_army(viewer)
    if own is not None:
        return any(s.army.code == own for s in seats)
    clan = _watched_clan(viewer, roles)
    return clan is not None and any(s.army.clan == clan for s in seats)


def battle_detail(*, battle: Battle, viewer: Viewer) -> dict[str, Any] | None:
    """The table as ``viewer`` may see it, or None when he may not see it (R1.1)."""
    tournament = battle.tournament
    roles = clan_roles(tournament)
    if not _may_see(battle, viewer, roles):
        return None
    names = _general_names(tournament, [battle])
    return _row(tournament, battle, viewer, roles, names, with_state=True)


def army_current_battle(*, tournament: Tournament, army_code: str | None) -> dict[str, Any] | None:
    """The open table (meeting, peace, battle, decided) ``army_code`` sits at, for its General."""
    if not army_code:
        return None
    found = (
        Battle.objects.filter(
            tournament=tournament, status__in=OPEN_STATUSES, seats__army__code=army_code
        )
        .order_by("-opened_at", "-id")
        .values("pk", "status", "province")
        .first()
    )
    if found is None:
        return None
    return {"id": found["pk"], "status": found["status"], "province": found["province"]}


def armies_current_battles(*, tournament: Tournament) -> dict[str, dict[str, Any]]:
    """``army_current_battle`` of every army at an open table, in one query: what each
    General's view of a version shows (referees.reading.state)."""
    found: dict[str, dict[str, Any]] = {}
    rows = (
        Battle.objects.filter(tournament=tournament, status__in=OPEN_STATUSES)
        .order_by("-opened_at", "-id")
        .values_list("pk", "status", "province", "seats__army__code")
    )
    for pk, status, province, code in rows:
        if code is not None and code not in found:  # the newest table of each army
            found[code] = {"id": pk, "status": status, "province": province}
    return found


# --- Rows ------------------------------------------------------------------------------------


def _general_names(tournament: Tournament, battles: Iterable[Battle]) -> dict[int, str]:
    army_ids = {s.army_id for b in battles for s in b.seats.all()}
    if not army_ids:
        return {}
    return dict(
        Player.objects.filter(tournament=tournament, army_id__in=army_ids).values_list(
            "army_id", "name"
        )
    )


def _row(
    tournament: Tournament,
    battle: Battle,
    viewer: Viewer,
    roles: Mapping[str, list[Role]],
    names: Mapping[int, str],
    *,
    with_state: bool,
) -> dict[str, Any]:
    judge = viewer.kind == "judge"
    own = _own_army(viewer)
    seats = list(battle.seats.all())
    mine = own if own in {s.army.code for s in seats} else None
    game_map = campaign_game_map(tournament.campaign)
    province = game_map.provinces.get(battle.province)

    setup = battle.setup or {}
    armies = _seat_rows(battle, seats, viewer, names, own=own, mine=mine)
    participants = _participant_rows(setup)

    summary = None
    actions: list[str] = []
    if battle.state is not None:
        by = JUDGE if judge else mine
        summary, actions = _engine_view(battle, battle.state, by)
    outcome = battle.outcome
    row: dict[str, Any] = {
        "id": battle.pk,
        "province": battle.province,
        "province_name": province.name if province is not None else battle.province,
        "status": battle.status,
        "game": battle.game,
        "opened_turn": battle.opened_turn,
        "opened_at": battle.opened_at.isoformat(),
        "started_at": battle.started_at.isoformat() if battle.started_at else None,
        "ended_at": battle.ended_at.isoformat() if battle.ended_at else None,
        "armies": armies,
        "setup": {
            "participants": participants,
            "seating_chosen_by": list(setup.get("seating_chosen_by", [])),
        }
        if setup
        else None,
        "summary": summary,
        "actions": actions,
        "outcome": outcome,
        "casualties": battle.casualties,
        # R11: the table's draws are sealed by this commitment; the seed shows once it is over.
        "draws": {
            "commitment": battle_commitment(battle),
            "seed": battle_seed_revealed(battle),
        },
        "you": _you(battle, judge=judge, mine=mine),
    }
    if with_state:
        row["proposals"] = _proposals(battle, judge=judge, mine=mine)
        row["proposals_answered"] = _proposals_answered(battle)
        row["draws"]["steps"] = battle_draw_steps(battle)
    if with_state and isinstance(battle.state, dict):
        # What the table page draws (seating and its draws, strongholds, rings, truce…):
        # what everyone at the table sees anyway; the judge's history stays in ``state``.
        row["table"] = {k: v for k, v in battle.state.items() if k != "history"}
    if judge:
        row["small_farms_total"] = sum(p["small_farms"] for p in participants)
        if with_state:
            row["state"] = battle.state  # the whole table, draws and history included (R11)
    return row


def _seat_rows(
    battle: Battle,
    seats: Iterable[BattleSeat],
    viewer: Viewer,
    names: Mapping[int, str],
    *,
    own: str | None,
    mine: str | None,
) -> list[dict[str, Any]]:
    """The armies at the table. During a meeting a vote shows to a judge, to its army's
    General, and to its clan's players who have no army (Daimyo, Karo); after it, to all."""
    judge = viewer.kind == "judge"
    clan = viewer.player.clan if viewer.player is not None else None
    meeting = battle.status == Battle.Status.MEETING
    armies = []
    for seat in seats:
        code = seat.army.code
        shows_vote = judge or not meeting or code == own or (own is None and seat.army.clan == clan)
        armies.append(
            {
                "code": code,
                "clan": seat.army.clan,
                "general": names.get(seat.army_id),
                "vote": (seat.vote or None) if shows_vote else None,
                "voted": bool(seat.vote),
                "joined_turn": seat.joined_turn,
                "reinforcement": seat.reinforcement,
                "mine": code == mine,
            }
        )
    return armies


def _participant_rows(setup: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The armies as the battle's set-up saw them (R8), one per army."""
    by_army = {p["army"]: p for p in setup.get("participants", [])}
    return [
        {
            "army": p["army"],
            "clan": p["clan"],
            "force_modifier": p["force_modifier"],
            "honor_bonus": p["honor_bonus"],
            "hand_size": p["hand_size"],
            "small_farms": p["small_farms"],
            "notes": list(p.get("notes", [])),
            "reinforcement": bool(p.get("reinforcement")),
        }
        for p in by_army.values()
    ]


def _you(battle: Battle, *, judge: bool, mine: str | None) -> dict[str, Any]:
    """What the viewer may do at the table: vote, choose the survivors, correct the result."""
    winner = battle.outcome.get("winner") if battle.outcome else None
    return {
        "army": mine,
        "may_vote": battle.status in GATHERING_STATUSES and (judge or mine is not None),
        "may_choose_survivors": battle.status == Battle.Status.DECIDED
        and (judge or (mine is not None and mine == winner)),
        "may_correct": judge and battle.status == Battle.Status.ENDED,
    }


def _proposals(battle: Battle, *, judge: bool, mine: str | None) -> list[dict[str, Any]]:
    """R8, R13: the changes to a player's counts waiting for his consent, with who may answer.

    Everyone at the table sees them (they see the counts anyway); they wait only while the
    battle is played.
    """
    if battle.status != Battle.Status.BATTLE:
        return []
    waiting = BattleProposal.objects.filter(battle=battle, status=BattleProposal.Status.OPEN)
    return [
        {
            "id": p.pk,
            "by": p.by,
            "to": p.to,
            "action": p.action,
            "made_at": p.made_at.isoformat(),
            "may_answer": judge or (mine is not None and mine == p.to),
            "may_withdraw": judge or (mine is not None and mine == p.by),
        }
        for p in waiting.order_by("id")
    ]


# How many of the latest proposals that came to nothing the table shows.
ANSWERED_SHOWN = 5


def _proposals_answered(battle: Battle) -> list[dict[str, Any]]:
    """The latest proposals that came to nothing (declined, withdrawn, lapsed when the
    battle was decided), newest first: the proposer learns that his change was not made and
    who said no (issue 30), and so does everyone at the table."""
    ended = BattleProposal.objects.filter(
        battle=battle,
        status__in=(
            BattleProposal.Status.DECLINED,
            BattleProposal.Status.WITHDRAWN,
            BattleProposal.Status.LAPSED,
        ),
    ).order_by("-answered_at", "-id")[:ANSWERED_SHOWN]
    return [
        {
            "id": p.pk,
            "by": p.by,
            "to": p.to,
            "action": p.action,
            "status": p.status,
            "answered_by": p.answered_by,
            "answered_at": p.answered_at.isoformat() if p.answered_at else None,
        }
        for p in ended
    ]


def _engine_view(
    battle: Battle, state: Mapping[str, Any], by: str | None
) -> tuple[dict[str, Any] | None, list[str]]:
    """The game's summary and the action types ``by`` may send now (none when not playing)."""
    try:
        game = game_for(battle.game)
        summary = game.summary(state)
        playing = battle.status == Battle.Status.BATTLE or (
            battle.status == Battle.Status.DECIDED and by == JUDGE
        )
        actions = game.actions(state, by=by) if by and playing else []
    except GameError:
        log.warning("battle %s: the game could not read its state", battle.pk, exc_info=True)
        return None, []
    return summary, actions
