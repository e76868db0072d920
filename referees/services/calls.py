"""A player calls a judge from his page or his battle table; the judges take and close calls.

A call is between the caller and the judges only (R1.1): the event it sends carries no
detail, the public group is not told, and only the caller and the judges read it
(``referees.reading.messages.call_rows``, ``own_call``). Every step is a line in the log (R11).
"""

from __future__ import annotations

from datetime import datetime

from django.db import IntegrityError, transaction
from django.utils.translation import gettext as _

from battles.selectors import army_current_battle
from referees.kernel.core import Actor, announce, log_write, refusal, tournament_lock, unit_of_work
from referees.models import JudgeCall, Player, Tournament
from strategic_map.board import Board
from strategic_map.selectors import campaign_open_turn

MAX_CALL_TEXT = JudgeCall.MAX_TEXT


def _text_checked(text: str, field: str) -> str:
    text = " ".join(text.split())
    if len(text) > MAX_CALL_TEXT:
        raise refusal(
            _("%(field)s: at most %(count)s characters") % {"field": field, "count": MAX_CALL_TEXT},
            "validation",
        )
    return text


def _turn_number(tournament: Tournament) -> int | None:
    turn = campaign_open_turn(tournament.campaign)
    return turn.number if turn else None


@unit_of_work()
def judge_call_make(*, player: Player, reason: str, text: str, now: datetime) -> JudgeCall:
    """The player's call for a judge: where he is (his table, else his army's province), why.

    A repeated tap, or a second phone of the same player, finds his open call and changes
    nothing: one player has one open call at a time (a constraint also says so, for two
    requests that race).
    """
    if reason not in JudgeCall.Reason.values:
        raise refusal(
            _("reason: one of %(reasons)s") % {"reasons": ", ".join(JudgeCall.Reason.values)},
            "validation",
        )
    text = _text_checked(text, _("text"))
    tournament = tournament_lock(player.tournament_id)
    open_call = JudgeCall.objects.filter(
        tournament=tournament, player=player, closed_at__isnull=True
    ).first()
    if open_call is not None:
        return open_call
    army = player.army
    table = army_current_battle(tournament=tournament, army_code=army.code if army else None)
    province = table["province"] if table else ""
    if not province and army is not None:
        # Where his army stands now (a Daimyo or Karo has none: the judge finds him by name).
        province = Board.of(tournament.campaign).province_of(army.code) or ""
    try:
        with transaction.atomic():
            call = JudgeCall.objects.create(
                tournament=tournament,
                player=player,
                province=province,
                battle=table["id"] if table else None,
                reason=reason,
                text=text,
                created_at=now,
            )
    except IntegrityError:  # pragma: no cover - the tournament's lock orders the requests
        return JudgeCall.objects.get(tournament=tournament, player=player, closed_at__isnull=True)
    log_write(
        tournament,
        actor=Actor.of_player(player),
        action="call_made",
        now=now,
        turn=_turn_number(tournament),
        call=call.pk,
        player=player.pk,
        # ``reason`` is the log line's own column (a judge's stated reason): the call's
        # reason goes with its data.
        call_reason=reason,
        text=text,
        province=province or None,
        battle=call.battle,
    )
    announce(tournament, "call", players=[call.player_id])
    return call


def _open_call(tournament: Tournament, call_id: int) -> JudgeCall:
    call = (
        JudgeCall.objects.select_for_update()
        .filter(tournament=tournament, pk=call_id)
        .select_related("player")
        .first()
    )
    if call is None:
        raise refusal(_("there is no call %(id)s") % {"id": call_id}, "not_found")
    if call.closed_at is not None:
        raise refusal(
            _("this call was already closed by %(who)s") % {"who": call.closed_by}, "closed"
        )
    return call


@unit_of_work()
def judge_call_take(*, tournament_id: int, call_id: int, actor: Actor, now: datetime) -> JudgeCall:
    """A judge answers the call ("on my way"): the caller sees his name.

    A call another judge has taken is not taken from him silently: the second judge is
    told who has it (two judges walking to the same table is what the queue prevents).
    """
    tournament = tournament_lock(tournament_id)
    call = _open_call(tournament, call_id)
    if call.taken_by == actor.label:
        return call
    if call.taken_by:
        raise refusal(_("%(who)s has already taken this call") % {"who": call.taken_by}, "taken")
    call.taken_by, call.taken_at = actor.label, now
    call.save(update_fields=["taken_by", "taken_at"])
    log_write(
        tournament,
        actor=actor,
        action="call_taken",
        now=now,
        turn=_turn_number(tournament),
        call=call.pk,
        player=call.player_id,
    )
    announce(tournament, "call", players=[call.player_id])
    return call


@unit_of_work()
def judge_call_close(
    *, tournament_id: int, call_id: int, note: str, actor: Actor, now: datetime
) -> JudgeCall:
    """A judge closes the call with a note on what was decided (the caller reads it)."""
    note = _text_checked(note, _("note"))
    tournament = tournament_lock(tournament_id)
    call = _open_call(tournament, call_id)
    if not call.taken_by:
        # Closed without being taken first: the judge who closes it is the one who dealt
        # with it.
        call.taken_by, call.taken_at = actor.label, now
    call.closed_by, call.closed_at, call.note = actor.label, now, note
    call.save(update_fields=["taken_by", "taken_at", "closed_by", "closed_at", "note"])
    log_write(
        tournament,
        actor=actor,
        action="call_closed",
        now=now,
        turn=_turn_number(tournament),
        call=call.pk,
        player=call.player_id,
        note=note,
    )
    announce(tournament, "call", players=[call.player_id])
    return call


@unit_of_work()
def judge_call_withdraw(*, player: Player, now: datetime) -> JudgeCall:
    """The caller withdraws his open call (he no longer needs a judge)."""
    tournament = tournament_lock(player.tournament_id)
    call = (
        JudgeCall.objects.select_for_update()
        .filter(tournament=tournament, player=player, closed_at__isnull=True)
        .first()
    )
    if call is None:
        raise refusal(_("you have no open call"), "not_found")
    actor = Actor.of_player(player)
    call.closed_by, call.closed_at = actor.label, now
    call.save(update_fields=["closed_by", "closed_at"])
    log_write(
        tournament,
        actor=actor,
        action="call_withdrawn",
        now=now,
        turn=_turn_number(tournament),
        call=call.pk,
        player=player.pk,
    )
    announce(tournament, "call", players=[call.player_id])
    return call
