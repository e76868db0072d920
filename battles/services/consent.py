"""Consent (R8, R13): the player concerned (or a judge) confirms or declines a proposed change
to his counts, its proposer withdraws it; a confirmed one is played as its proposer's action.
"""

from __future__ import annotations

from datetime import datetime

from django.utils.translation import gettext as _

from battles.board import campaign_turn_number
from battles.models import Battle, BattleProposal
from battles.services._table import (
    battle_locked,
    battle_save,
    check_playing,
    played,
    played_store,
    seats_of,
    table_game,
    table_log,
    who_of,
)
from referees.kernel.core import Actor, announce, refusal, unit_of_work
from referees.models import Player

Status = Battle.Status
ANSWERS = ("confirm", "decline", "withdraw")


@unit_of_work()
def battle_proposal_answer(
    *, battle_id: int, proposal_id: int, answer: str, actor: Actor | Player, now: datetime
) -> Battle:
    """The other player (or a judge) confirms or declines a proposal; its proposer (or a
    judge) withdraws it. A confirmed proposal is applied then, as its proposer's action.
    """
    tournament, battle = battle_locked(battle_id)
    who = who_of(actor, tournament)
    if answer not in ANSWERS:
        raise refusal(_('answer: "confirm", "decline" or "withdraw"'), "validation")
    check_playing(tournament)
    proposal = BattleProposal.objects.filter(battle=battle, pk=proposal_id).first()
    if proposal is None:
        raise refusal(
            _("there is no proposal %(id)s at this table") % {"id": proposal_id}, "not_found"
        )
    if proposal.status != BattleProposal.Status.OPEN:
        raise refusal(
            _("this proposal is %(status)s already") % {"status": proposal.get_status_display()},
            "status",
        )
    if not who.judge:
        if answer == "withdraw" and who.army != proposal.by:
            raise refusal(_("only its proposer (or a judge) withdraws a proposal"), "forbidden")
        if answer != "withdraw" and who.army != proposal.to:
            raise refusal(
                _("only the player it concerns (or a judge) confirms or declines a proposal"),
                "forbidden",
            )
    seats = seats_of(battle)
    turn = campaign_turn_number(tournament.campaign)
    if answer == "confirm":
        if battle.status != Status.BATTLE:
            raise refusal(
                _("no battle is being played at this table (%(status)s)")
                % {"status": battle.status},
                "status",
            )
        move = dict(proposal.action)
        state, outcome, draws = played(table_game(battle), battle, move, seats)
        proposal.status = BattleProposal.Status.CONFIRMED
    else:
        proposal.status = (
            BattleProposal.Status.DECLINED
            if answer == "decline"
            else BattleProposal.Status.WITHDRAWN
        )
    proposal.answered_at = now
    proposal.answered_by = (who.army or who.actor.label)[:150]
    proposal.save(update_fields=["status", "answered_at", "answered_by"])
    if answer == "confirm":
        played_store(
            tournament,
            battle,
            state,
            outcome,
            seats=seats,
            who=who,
            move=move,
            turn=turn,
            now=now,
            draws=draws,
            proposal=proposal,
        )
    else:
        table_log(
            tournament,
            battle,
            actor=who.actor,
            action=f"battle_proposal_{proposal.status}",
            now=now,
            turn=turn,
            proposal=proposal.pk,
            by_army=proposal.by,
            to_army=proposal.to,
            move=proposal.action,
        )
        battle_save(battle, now)
    announce(tournament, "battle")
    return battle
