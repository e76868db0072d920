"""The table's shared steps, private to ``battles.services``: who is asking, the locked
battle, the game's data as stored, the table's log lines, opening a table, playing a move and
storing it, and a result on the map (R8, R9, R6) with the table that follows it.

The entry modules (``lifecycle``, ``play``, ``consent``, ``results``) import from here and never
from each other; ``.importlinter`` keeps this module inside its package.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from battles.board import board_battle_result, province_armies, province_controller
from battles.draws import BattleDraws
from battles.models import GATHERING_STATUSES, Battle, BattleProposal, BattleSeat
from referees.kernel.core import Actor, log_line, refusal, tournament_lock
from referees.models import LogEntry, Player, Tournament
from sl5r.rules.battle import BattleSetup
from sl5r.rules.games import BattleGame, Casualty, Entrant, GameError, TableOutcome, game_for
from strategic_map.models import Army

Status = Battle.Status

ERROR_NOT_RUNNING = gettext_noop("battles are fought while the turns run")
ERROR_GAME_OVER = gettext_noop("the game has ended: its battles have stopped (R8)")


# --- Who is asking ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Who:
    actor: Actor
    judge: bool
    army: str | None  # the General's own army


def who_of(actor: Actor | Player, tournament: Tournament) -> Who:
    """A judge (``Actor`` with ``judge``), or a player: a General acts for his army only."""
    if isinstance(actor, Player):
        if actor.tournament_id != tournament.pk:
            raise refusal(_("only a player of this tournament may do this"), "forbidden")
        # The army comes with the player wherever he is read (token, session).
        army = actor.army if actor.role == Player.Role.GENERAL else None
        return Who(actor=Actor.of_player(actor), judge=False, army=army.code if army else None)
    return Who(actor=actor, judge=actor.judge, army=None)


def check_playing(tournament: Tournament) -> None:
    if tournament.phase == Tournament.Phase.FINISHED:
        raise refusal(_(ERROR_GAME_OVER), "phase")
    if tournament.phase != Tournament.Phase.RUNNING:
        raise refusal(_(ERROR_NOT_RUNNING), "phase")


def battle_locked(battle_id: int) -> tuple[Tournament, Battle]:
    """The battle and its tournament, the tournament (and its campaign) locked."""
    tournament_id = Battle.objects.filter(pk=battle_id).values_list("tournament_id", flat=True)
    found = tournament_id.first()
    if found is None:
        raise refusal(_("there is no battle %(id)s") % {"id": battle_id}, "not_found")
    tournament = tournament_lock(found)
    battle = Battle.objects.get(pk=battle_id)
    battle.tournament = tournament
    return tournament, battle


def as_stored(value: Any) -> Any:
    """What the database gives back: tuples become lists, keys strings."""
    return json.loads(json.dumps(value))


# --- The game's data -------------------------------------------------------------------------


def table_game(battle: Battle) -> BattleGame:
    try:
        return game_for(battle.game)
    except GameError as error:
        raise refusal(str(error), "game") from error


def table_entrants(setup: BattleSetup, codes: Collection[str]) -> list[Entrant]:
    return [
        Entrant(
            army=p.army,
            clan=p.clan,
            honor_bonus=p.honor_bonus,
            hand_size=p.hand_size,
            force_modifier=p.force_modifier,
            small_farms=p.small_farms,
            chooses_seating=p.army in setup.seating_chosen_by,
        )
        for p in setup.participants
        if p.army in codes
    ]


def participant_rows(
    setup: BattleSetup, codes: Collection[str], **extra: Any
) -> list[dict[str, Any]]:
    return [
        {**asdict(p), "notes": list(p.notes), **extra}
        for p in setup.participants
        if p.army in codes
    ]


def outcome_json(outcome: TableOutcome) -> dict[str, Any]:
    return {
        "kind": outcome.kind,
        "winner": outcome.winner,
        "losers": list(outcome.losers),
        "reason": outcome.reason,
    }


def casualty_json(casualty: Casualty) -> dict[str, Any]:
    return {
        "army": casualty.army,
        "destroyed_by": casualty.destroyed_by,
        "reform_from": casualty.reform_from,
    }


def seats_of(battle: Battle) -> dict[str, BattleSeat]:
    seats = BattleSeat.objects.filter(battle=battle).select_related("army").order_by("id")
    return {s.army.code: s for s in seats}


def battle_save(battle: Battle, now: datetime, *fields: str) -> None:
    battle.updated_at = now
    battle.save(update_fields=[*fields, "updated_at"])


def table_log(
    tournament: Tournament,
    battle: Battle,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    draws: Mapping[str, Any] | None = None,
    **data: Any,
) -> None:
    table_log_line(
        tournament,
        battle,
        actor=actor,
        action=action,
        now=now,
        turn=turn,
        reason=reason,
        draws=draws,
        **data,
    ).save()


def table_log_line(
    tournament: Tournament,
    battle: Battle,
    *,
    actor: Actor,
    action: str,
    now: datetime,
    turn: int | None = None,
    reason: str = "",
    draws: Mapping[str, Any] | None = None,
    **data: Any,
) -> LogEntry:
    """A table's log line, not yet saved: ``table_log`` saves one, a turn's sync all of its
    own together."""
    if draws is not None:
        data["draws"] = draws  # R11: what a player needs to recompute this step's draws
    return log_line(
        tournament,
        actor=actor,
        action=action,
        now=now,
        turn=turn,
        reason=reason,
        battle=battle.pk,
        province=battle.province,
        **data,
    )


# --- Opening a table (R7, R8) ----------------------------------------------------------------


def table_new(
    tournament: Tournament,
    *,
    province: str,
    armies: Mapping[str, Army],
    turn: int,
    now: datetime,
    votes: Mapping[str, str] | None = None,
) -> Battle:
    """A table about to open, not yet saved: at ``peace`` when every army said peace."""
    votes = votes or {}
    everyone_peace = bool(armies) and all(votes.get(code) == "peace" for code in armies)
    return Battle(
        tournament=tournament,
        province=province,
        opened_turn=turn,
        status=Status.PEACE if everyone_peace else Status.MEETING,
        game=tournament.battle_game,
        opened_at=now,
        updated_at=now,
    )


def table_seats(
    battle: Battle,
    *,
    armies: Mapping[str, Army],
    turn: int,
    now: datetime,
    votes: Mapping[str, str] | None = None,
) -> list[BattleSeat]:
    """The seats of a table that opens (``battle`` saved), not yet saved."""
    votes = votes or {}
    return [
        BattleSeat(
            battle=battle,
            army=army,
            vote=votes.get(code, ""),
            voted_at=now if votes.get(code) else None,
            joined_turn=turn,
        )
        for code, army in armies.items()
    ]


def open_table(
    tournament: Tournament,
    *,
    province: str,
    armies: Mapping[str, Army],
    turn: int,
    now: datetime,
    votes: Mapping[str, str] | None = None,
) -> Battle:
    battle = table_new(
        tournament, province=province, armies=armies, turn=turn, now=now, votes=votes
    )
    battle.save(force_insert=True)
    BattleSeat.objects.bulk_create(
        table_seats(battle, armies=armies, turn=turn, now=now, votes=votes)
    )
    return battle


# --- Playing a move --------------------------------------------------------------------------


def table_state(battle: Battle) -> Mapping[str, Any]:
    """The game on ``battle``'s table; a ``GameError`` (refused, not a crash) before the
    table is laid out, when there is none to play on."""
    state: Mapping[str, Any] | None = battle.state
    if state is None:
        raise GameError("table", "not laid out yet")
    return state


def played(
    game: BattleGame, battle: Battle, move: Mapping[str, Any], seats: Mapping[str, BattleSeat]
) -> tuple[Any, TableOutcome | None, dict[str, Any] | None]:
    """The table after ``move``, its outcome, and the log's record of its draws (R11)."""
    draws = BattleDraws(battle, state=battle.state, participants=seats, move=move)
    try:
        state = game.act(table_state(battle), move, rng=draws.rng, rng_label=draws.label)
        outcome = game.outcome(state)
    except GameError as error:
        raise refusal(str(error), "illegal_action") from error
    return state, outcome, draws.record(state)


def played_store(
    tournament: Tournament,
    battle: Battle,
    state: Any,
    outcome: TableOutcome | None,
    *,
    seats: Mapping[str, BattleSeat],
    who: Who,
    move: Mapping[str, Any],
    turn: int,
    now: datetime,
    draws: dict[str, Any] | None,
    proposal: BattleProposal | None = None,
) -> None:
    battle.state = as_stored(state)
    battle_save(battle, now, "state")
    # A confirmed proposal is one change: one line naming who proposed it and who confirmed
    # it (the confirmer is the entry's actor), never a second line crediting the confirmer.
    proposed: dict[str, Any] = (
        {"proposal": proposal.pk, "by_army": proposal.by, "to_army": proposal.to}
        if proposal is not None
        else {}
    )
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_proposal_confirmed" if proposal is not None else "battle_action",
        now=now,
        turn=turn,
        move=move,
        draws=draws,
        **proposed,
    )
    if outcome is not None:
        battle_decided(tournament, battle, outcome, seats=seats, who=who, turn=turn, now=now)


# --- A result on the map (R8, R9, R6) --------------------------------------------------------


def proposals_lapse(battle: Battle, now: datetime) -> None:
    """A decided battle takes no more changes: what still waits for consent lapses."""
    BattleProposal.objects.filter(battle=battle, status=BattleProposal.Status.OPEN).update(
        status=BattleProposal.Status.LAPSED, answered_at=now
    )


def spared_by_clan(outcome: TableOutcome, seats: Mapping[str, BattleSeat]) -> set[str]:
    """The winner and his clan's armies: they never fight each other, so they survive."""
    if outcome.kind != "win" or outcome.winner is None or outcome.winner not in seats:
        return set()
    clan = seats[outcome.winner].army.clan
    return {code for code, s in seats.items() if s.army.clan == clan}


def battle_decided(
    tournament: Tournament,
    battle: Battle,
    outcome: TableOutcome,
    *,
    seats: Mapping[str, BattleSeat],
    who: Who,
    turn: int,
    now: datetime,
) -> None:
    battle.outcome = outcome_json(outcome)
    battle.decided_at = now
    proposals_lapse(battle, now)
    if outcome.kind == "truce":
        battle_end(tournament, battle, outcome, survivors=set(seats), who=who, turn=turn, now=now)
        return
    spared = spared_by_clan(outcome, seats)
    undecided = set(seats) - spared - set(outcome.losers)
    if not undecided:
        battle_end(tournament, battle, outcome, survivors=spared, who=who, turn=turn, now=now)
        return
    battle.status = Status.DECIDED
    battle_save(battle, now, "status", "outcome", "decided_at")
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_decided",
        now=now,
        turn=turn,
        outcome=battle.outcome,
        to_choose=sorted(undecided),
    )


def battle_end(
    tournament: Tournament,
    battle: Battle,
    outcome: TableOutcome,
    *,
    survivors: Collection[str],
    who: Who,
    turn: int,
    now: datetime,
) -> None:
    """The battle's result on the map: casualties (R8, R9), ``in_battle`` off, control (R6)."""
    campaign = tournament.campaign
    seats = seats_of(battle)
    control_before = province_controller(campaign, battle.province)
    casualties = board_battle_result(
        campaign=campaign,
        province=battle.province,
        outcome=outcome,
        armies={code: seat.army for code, seat in seats.items()},
        survivors=survivors,
        turn=turn,
    )
    battle.status = Status.ENDED
    battle.ended_at = now
    battle.outcome = {
        **outcome_json(outcome),
        "survivors": sorted(set(seats) - {c.army for c in casualties}),
        "turn": turn,
        "control_before": control_before,
        "control_after": province_controller(campaign, battle.province),
    }
    battle.casualties = [casualty_json(c) for c in casualties]
    battle.decided_at = battle.decided_at or now
    battle_save(battle, now, "status", "ended_at", "outcome", "casualties", "decided_at")
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_ended",
        now=now,
        turn=turn,
        outcome=battle.outcome,
        casualties=battle.casualties,
    )
    table_after(tournament, battle, fought=set(seats), turn=turn, now=now, actor=who.actor)


def table_after(
    tournament: Tournament,
    battle: Battle,
    *,
    fought: Collection[str],
    turn: int,
    now: datetime,
    actor: Actor,
) -> None:
    """After a result, whoever is still together in the province sits at the next table."""
    campaign = tournament.campaign
    present = province_armies(campaign, battle.province)
    waiting = Battle.objects.filter(
        tournament=tournament, province=battle.province, status__in=GATHERING_STATUSES
    ).first()
    several = len({a.clan for a in present.values()}) >= 2
    if waiting is not None and not several:
        waiting.status = Status.DISPERSED
        waiting.ended_at = now
        battle_save(waiting, now, "status", "ended_at")
        table_log(tournament, waiting, actor=actor, action="battle_dispersed", now=now, turn=turn)
        return
    if waiting is not None or not several:
        return
    votes = {code: "peace" for code in present if code in fought}
    table = open_table(
        tournament, province=battle.province, armies=present, turn=turn, now=now, votes=votes
    )
    table_log(
        tournament,
        table,
        actor=actor,
        action="battle_opened",
        now=now,
        turn=turn,
        armies=sorted(present),
        after_battle=battle.pk,
        status=table.status,
    )
