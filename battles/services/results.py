"""A battle's result (R8): the winner's choice of survivors, and a judge's correction of an
ended battle's result, after which the table that gathered there follows the corrected board.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.utils.translation import gettext as _

from battles.board import (
    board_battle_result,
    board_casualties_restore,
    campaign_turn_number,
    province_armies,
    province_controller,
)
from battles.models import FIGHTING_STATUSES, GATHERING_STATUSES, Battle, BattleSeat
from battles.services._table import (
    Who,
    battle_end,
    battle_locked,
    battle_save,
    casualty_json,
    check_playing,
    outcome_json,
    seats_of,
    spared_by_clan,
    table_after,
    table_log,
    who_of,
)
from referees.kernel.core import Actor, announce, refusal, unit_of_work
from referees.models import Player, Tournament
from sl5r.rules.games import TableOutcome
from strategic_map.models import Campaign

Status = Battle.Status
OUTCOME_KINDS = ("win", "truce")


# --- The winner's choice (R8) ----------------------------------------------------------------


@unit_of_work()
def battle_result_choose(
    *, battle_id: int, survivors: Sequence[str], actor: Actor | Player, now: datetime
) -> Battle:
    """R8: the winner's General (or a judge) names the armies that survive; the rest of the
    armies that did not lose are destroyed by his choice and may reform the next turn.
    """
    tournament, battle = battle_locked(battle_id)
    who = who_of(actor, tournament)
    check_playing(tournament)
    seats = seats_of(battle)
    outcome = _outcome_of(battle.outcome) if battle.outcome else None
    if not who.judge and (outcome is None or who.army != outcome.winner):
        raise refusal(
            _("only the winner's General (or a judge) chooses who survives (R8)"), "forbidden"
        )
    if battle.status == Status.ENDED:
        raise refusal(_("the battle has ended already; a judge may correct its result"), "status")
    if battle.status != Status.DECIDED or outcome is None:
        raise refusal(
            _("there is no winner's choice to make at this table (%(status)s)")
            % {"status": battle.status},
            "status",
        )
    named = list(dict.fromkeys(survivors))
    for code in named:
        if code not in seats:
            raise refusal(
                _('survivors: "%(army)s" is not in this battle') % {"army": code}, "validation"
            )
        if code in outcome.losers:
            raise refusal(
                _('survivors: "%(army)s" lost the game and is destroyed (R8)') % {"army": code},
                "validation",
            )
    chosen = set(named) | spared_by_clan(outcome, seats)
    turn = campaign_turn_number(tournament.campaign)
    battle_end(tournament, battle, outcome, survivors=chosen, who=who, turn=turn, now=now)
    announce(tournament, "battle")
    return battle


def _outcome_of(data: Mapping[str, Any]) -> TableOutcome:
    return TableOutcome(
        kind=data["kind"],
        winner=data.get("winner"),
        losers=tuple(data.get("losers") or ()),
        reason=data.get("reason", ""),
    )


# --- A judge's correction --------------------------------------------------------------------


@unit_of_work()
def battle_correct(
    *,
    battle_id: int,
    kind: str,
    winner: str | None,
    survivors: Sequence[str],
    reason: str,
    actor: Actor | Player,
    now: datetime,
) -> Battle:
    """A judge corrects an ended battle's result: its casualties are undone on the board
    (the armies stand in the province again) and the corrected ones applied, with a reason.

    The destroyed are destroyed in the turn the battle ended in, as before. Losers of the
    corrected result are the original losers not named as winner or survivor; every other
    army not named is destroyed by the winner's choice.
    """
    tournament, battle = battle_locked(battle_id)
    who = who_of(actor, tournament)
    ended = _correction_allowed(battle, who=who, kind=kind, reason=reason)
    seats = seats_of(battle)
    _correction_names_seated(seats, kind=kind, winner=winner, survivors=survivors)
    campaign = tournament.campaign
    _correction_province_quiet(tournament, battle)
    before = {"outcome": battle.outcome, "casualties": battle.casualties}
    turn = int(ended.get("turn") or campaign_turn_number(campaign))
    restored, kept_off = board_casualties_restore(
        campaign=campaign,
        province=battle.province,
        armies={code: seat.army for code, seat in seats.items()},
        casualties=battle.casualties or [],
        turn=turn,
    )
    at_table = {c: s for c, s in seats.items() if c not in kept_off}
    outcome, alive = _corrected_outcome(
        ended,
        seats,
        at_table,
        kind=kind,
        winner=winner,
        survivors=survivors,
        reason=reason.strip(),
        kept_off=kept_off,
    )
    _corrected_result_apply(
        campaign,
        battle,
        ended,
        outcome,
        seats,
        at_table,
        alive=alive,
        kept_off=kept_off,
        turn=turn,
    )
    battle_save(battle, now, "outcome", "casualties")
    table_log(
        tournament,
        battle,
        actor=who.actor,
        action="battle_corrected",
        now=now,
        turn=campaign_turn_number(campaign),
        reason=reason.strip(),
        before=before,
        after={"outcome": battle.outcome, "casualties": battle.casualties},
        restored=restored,
        not_restored=kept_off,
    )
    _resync_after_correction(tournament, battle, fought=set(seats), now=now, actor=who.actor)
    announce(tournament, "battle")
    return battle


def _correction_allowed(battle: Battle, *, who: Who, kind: str, reason: str) -> dict[str, Any]:
    """Refused unless a judge corrects an ended battle, with a reason and a kind of result;
    the result it ended with."""
    if not who.judge:
        raise refusal(_("only a judge corrects a battle's result"), "forbidden")
    if not reason.strip():
        raise refusal(_("reason: say why the result is corrected"), "validation")
    if kind not in OUTCOME_KINDS:
        raise refusal(_('kind: "win" or "truce"'), "validation")
    if battle.status != Status.ENDED or not battle.outcome:
        raise refusal(
            _("only an ended battle's result is corrected (this one is %(status)s)")
            % {"status": battle.status},
            "status",
        )
    ended: dict[str, Any] = battle.outcome
    return ended


def _correction_names_seated(
    seats: Mapping[str, BattleSeat], *, kind: str, winner: str | None, survivors: Sequence[str]
) -> None:
    """Refused unless the winner (a win has one, a truce none) and survivors fought here."""
    if kind == "win" and winner not in seats:
        raise refusal(
            _('winner: "%(army)s" is not in this battle') % {"army": winner or ""}, "validation"
        )
    if kind == "truce" and winner:
        raise refusal(_("winner: a truce has no winner"), "validation")
    for code in survivors:
        if code not in seats:
            raise refusal(
                _('survivors: "%(army)s" is not in this battle') % {"army": code}, "validation"
            )


def _corrected_outcome(
    ended: Mapping[str, Any],
    seats: Mapping[str, BattleSeat],
    at_table: Mapping[str, BattleSeat],
    *,
    kind: str,
    winner: str | None,
    survivors: Sequence[str],
    reason: str,
    kept_off: Collection[str],
) -> tuple[TableOutcome, set[str]]:
    """The corrected outcome and the armies it leaves alive, among those back at the table
    (``at_table``: the fighters less ``kept_off``, who reformed or moved since)."""
    if kind == "truce":
        return TableOutcome(kind="truce", winner=None, losers=(), reason=reason), set(at_table)
    if winner in kept_off:
        raise refusal(
            _("winner: %(army)s has reformed or moved since; move it back first")
            % {"army": winner},
            "validation",
        )
    assert winner is not None
    losers = tuple(
        code
        for code in ended.get("losers") or ()
        if code in at_table and code != winner and code not in survivors
    )
    outcome = TableOutcome(kind="win", winner=winner, losers=losers, reason=reason)
    return outcome, (set(survivors) | spared_by_clan(outcome, seats)) & set(at_table)


def _correction_province_quiet(tournament: Tournament, battle: Battle) -> None:
    """Refused while another battle is fought in the province: its armies are on the board."""
    if Battle.objects.filter(
        tournament=tournament, province=battle.province, status__in=FIGHTING_STATUSES
    ).exists():
        raise refusal(
            _("another battle is going on in this province; correct this one after it ends"),
            "busy",
        )


def _corrected_result_apply(
    campaign: Campaign,
    battle: Battle,
    ended: Mapping[str, Any],
    outcome: TableOutcome,
    seats: Mapping[str, BattleSeat],
    at_table: Mapping[str, BattleSeat],
    *,
    alive: Collection[str],
    kept_off: Collection[str],
    turn: int,
) -> None:
    """The corrected result on the board (R8, R9, R6), and in ``battle``'s outcome and
    casualties (not yet saved); ``ended`` is the result it ended with."""
    casualties = board_battle_result(
        campaign=campaign,
        province=battle.province,
        outcome=outcome,
        armies={code: seat.army for code, seat in at_table.items()},
        survivors=alive,
        turn=turn,
        control_before=(ended.get("control_before"),),
    )
    battle.outcome = {
        **outcome_json(outcome),
        "survivors": sorted(set(seats) - {c.army for c in casualties} - set(kept_off)),
        "turn": turn,
        "control_before": ended.get("control_before"),
        "control_after": province_controller(campaign, battle.province),
        "corrected": True,
    }
    battle.casualties = [casualty_json(c) for c in casualties]


def _resync_after_correction(
    tournament: Tournament, battle: Battle, *, fought: set[str], now: datetime, actor: Actor
) -> None:
    """The table that gathered after the battle follows the corrected board."""
    campaign = tournament.campaign
    turn = campaign_turn_number(campaign)
    waiting = Battle.objects.filter(
        tournament=tournament, province=battle.province, status__in=GATHERING_STATUSES
    ).first()
    if waiting is not None:
        present = province_armies(campaign, battle.province)
        seats = seats_of(waiting)
        if len({a.clan for a in present.values()}) >= 2:
            joined = [c for c in present if c not in seats]
            BattleSeat.objects.filter(battle=waiting).exclude(army__code__in=list(present)).delete()
            BattleSeat.objects.bulk_create(
                [
                    BattleSeat(
                        battle=waiting,
                        army=present[c],
                        joined_turn=turn,
                        vote="peace" if c in fought else "",
                        voted_at=now if c in fought else None,
                    )
                    for c in joined
                ]
            )
            votes = BattleSeat.objects.filter(battle=waiting).values_list("vote", flat=True)
            waiting.status = Status.PEACE if all(v == "peace" for v in votes) else Status.MEETING
            battle_save(waiting, now, "status")
            return
    table_after(tournament, battle, fought=fought, turn=turn, now=now, actor=actor)
