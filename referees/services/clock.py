"""The clock (R4): what a due deadline does, one step at a time, and the judge's clock.

A turn is resolved once, with its battles, in one unit of work, whichever clock calls.
"""

from __future__ import annotations

import logging
import math
from datetime import datetime, timedelta

from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext as _

from battles.services.lifecycle import battles_resume, battles_stop, battles_sync
from referees.kernel.core import (
    CLOCK,
    Actor,
    TournamentError,
    announce,
    log_write,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.kernel.deadlines import (
    clock_left,
    order_settle,
    order_settle_max,
    orders_around_deadline,
    schedule_deadline,
    settle_hold,
    tick_due_at,
)
from referees.models import LogEntry, Tournament
from referees.services.setup import MAX_TURN_SECONDS
from referees.services.start import phase_advance, phase_enter
from strategic_map.models import Turn
from strategic_map.selectors import campaign_open_turn
from strategic_map.services import (
    turn_open,
    turn_resolve,
    turn_seed_renew,
)

log = logging.getLogger(__name__)

Phase = Tournament.Phase


# --- The clock (R4) -------------------------------------------------------------------------


def due_tournament_ids(*, now: datetime) -> list[int]:
    """Tournaments whose clock has run out: the sweep's work list.

    A running turn is due ``order_settle()`` after its deadline, as ``tick_due_at`` says.
    """
    return list(
        Tournament.objects.filter(paused_remaining__isnull=True)
        .filter(
            Q(phase=Phase.RUNNING, deadline__lte=now - order_settle())
            | Q(phase__in=[Phase.PLANNING, Phase.NEGOTIATION], deadline__lte=now)
        )
        .values_list("pk", flat=True)
    )


def clock_tick(*, tournament_id: int, now: datetime | None = None) -> bool:
    """Do what is due for one tournament, if anything; True when something was done.

    Every clock calls this: the in-process clock, the Celery task scheduled for the
    deadline and the Celery beat sweep. The tournament row is locked and the due check is
    made inside the transaction, and a turn is resolved through ``turn_resolve``'s
    conditional update, so however many of them fire, each step happens once.

    ``now`` is the time of the tick; the clocks leave it out, and it is then read once the
    row is locked. A time read before waiting for the lock (another clock resolving, a
    judge's change, the other tournaments of a sweep) would open the next turn in the past
    and cut the wait off its length.
    """
    return clock_tick_outcome(tournament_id=tournament_id, now=now) == TICK_DONE


TICK_DONE, TICK_NOTHING, TICK_HELD = "done", "nothing", "held"


def clock_tick_outcome(*, tournament_id: int, now: datetime | None = None) -> str:
    """``clock_tick``, telling apart a turn held by waiting orders (``TICK_HELD``: try again
    shortly) from nothing due (``TICK_NOTHING``) and a step taken (``TICK_DONE``).

    A held turn is seen before the tournament is locked, so that the clock does not queue
    for the lock with the orders it waits for, and again under the lock.
    """
    unlocked = Tournament.objects.filter(pk=tournament_id).first()
    if unlocked is not None and not unlocked.paused:
        seen_at = now or timezone.now()
        due_at = tick_due_at(unlocked)
        if due_at is not None and due_at <= seen_at and settle_hold(unlocked, seen_at):
            return TICK_HELD
    with unit_of_work():
        tournament = tournament_lock(tournament_id)
        if now is None:
            now = timezone.now()
        due_at = tick_due_at(tournament)
        if tournament.paused or due_at is None or due_at > now:
            return TICK_NOTHING
        if tournament.phase == Phase.RUNNING:
            if settle_hold(tournament, now):
                return TICK_HELD
            return TICK_DONE if _resolve_current(tournament, actor=CLOCK, now=now) else TICK_NOTHING
        if tournament.phase in (Phase.PLANNING, Phase.NEGOTIATION):
            phase_advance(tournament, CLOCK, now)
            return TICK_DONE
        return TICK_NOTHING


def clock_sweep(*, now: datetime | None = None) -> int:
    """Tick every due tournament; returns how many steps were taken.

    Without ``now`` (the clocks), each tick reads the time once its tournament is locked.
    """
    steps = 0
    for pk in due_tournament_ids(now=now or timezone.now()):
        # One tournament that cannot be ticked must not hold up the others.
        try:
            steps += clock_tick(tournament_id=pk, now=now)
        except TournamentError:
            continue
        except Exception:
            log.exception("clock tick of tournament %s failed", pk)
    return steps


def _game_over(tournament: Tournament, number: int, now: datetime) -> bool:
    if tournament.turns_total is not None and number >= tournament.turns_total:
        return True
    return tournament.ends_at is not None and now >= tournament.ends_at


# Past the settle window, the clocks resolve a turn within a sweep or two (1-2 s). A
# resolution later than this after the window means nothing was serving at the deadline:
# the process was stalled, the laptop asleep, the server down. Orders sent then got "too
# late" on waking, through no fault of their senders: the judges are told, to rule.
STALL_SECONDS = 10.0


def _deadline_missed_flag(
    tournament: Tournament, *, number: int, deadline: datetime, now: datetime
) -> None:
    late = now - deadline
    if late <= order_settle_max() + timedelta(seconds=STALL_SECONDS):
        return
    log_write(
        tournament,
        actor=CLOCK,
        action="turn_deadline_missed",
        now=now,
        turn=number,
        deadline=deadline.isoformat(),
        late_by=round(late.total_seconds()),
        orders=orders_around_deadline(tournament=tournament, deadline=deadline, resolved_at=now),
    )


@unit_of_work()
def deadline_flag_rule(
    *, tournament_id: int, flag_id: int, actor: Actor, now: datetime
) -> Tournament:
    """A judge has seen a missed deadline's flag (``turn_deadline_missed``) and ruled on it:
    it leaves the consoles, and the log keeps who cleared it and when."""
    tournament = tournament_lock(tournament_id)
    flag = LogEntry.objects.filter(
        tournament=tournament, pk=flag_id, action="turn_deadline_missed"
    ).first()
    if flag is None:
        raise refusal(_("there is no such flag in this tournament"), "not_found")
    if LogEntry.objects.filter(
        tournament=tournament, action="turn_deadline_ruled", data__flag=flag_id
    ).exists():
        return tournament  # cleared already (by another judge, or a second click)
    log_write(
        tournament,
        actor=actor,
        action="turn_deadline_ruled",
        now=now,
        turn=flag.turn,
        flag=flag_id,
    )
    announce(tournament, "flag")
    return tournament


def _resolve_current(tournament: Tournament, *, actor: Actor, now: datetime) -> bool:
    turn = campaign_open_turn(tournament.campaign)
    if turn is None:
        return False
    # What the turn had left, so that an undo can give it back (clock_undo).
    remaining = clock_left(tournament, now) or 0.0
    deadline = None if tournament.paused else tournament.deadline
    resolved = turn_resolve(turn_id=turn.pk, now=now, by=actor.label)
    if resolved is None:
        return False
    result = resolved.result or {}
    if actor == CLOCK and deadline is not None:
        _deadline_missed_flag(tournament, number=resolved.number, deadline=deadline, now=now)
    log_write(
        tournament,
        actor=actor,
        action="turn_resolved",
        now=now,
        turn=resolved.number,
        remaining=round(remaining),
        draws=result.get("draws", []),
        meetings=result.get("meetings", []),
        # The orders the rules refused, with why: the line a judge rules a dispute from.
        rejected=[
            {"army": o.get("army"), "reason": o.get("reason")}
            for o in result.get("orders", [])
            if o.get("outcome") == "rejected"
        ],
        scores=result.get("scores", {}),
        # R11: the seed is revealed once the draws are made, beside the commitment it meets.
        commitment=resolved.commitment,
        draw_seed=resolved.draw_seed,
    )
    tournament.campaign.refresh_from_db(fields=["version", "board"])
    # Battle tables follow the turn (R7, R8): meetings open, parted ones disperse, newcomers
    # join battles. Imported here: ``battles`` depends on this module.

    battles_sync(tournament=tournament, turn_number=resolved.number, result=result, now=now)
    if _game_over(tournament, resolved.number, now):
        phase_enter(tournament, Phase.FINISHED, now, None)
        log_write(tournament, actor=actor, action="game_ended", now=now, turn=resolved.number)
        battles_stop(tournament=tournament, actor=actor, now=now)  # R8
    else:
        # The next turn opens at once (R4) with its full length, whether this one was
        # resolved at its deadline, early by a judge, or late after downtime.
        tournament.deadline = now + timedelta(seconds=tournament.turn_seconds)
        tournament.save(update_fields=["deadline"])
        schedule_deadline(tournament)
        turn_open(
            campaign=tournament.campaign,
            number=resolved.number + 1,
            now=now,
            deadline=tournament.deadline,
        )
    announce(tournament, "turn_resolved", turn=resolved.number, phase=tournament.phase)
    return True


@unit_of_work()
def turn_redraw(*, tournament_id: int, actor: Actor, now: datetime, reason: str) -> Tournament:
    """A judge's deliberate re-draw (R11): the open turn gets a new secret seed.

    Undo keeps a turn's seed, so this is the only way its draws change for the same orders;
    it is logged with the commitment withdrawn and the one now published, for all to see,
    and with its reason: a re-draw nobody can explain is what R11's commitment guards
    against, so a blank reason is refused.
    """
    reason = " ".join(reason.split())
    if not reason:
        raise refusal(_("reason: say why this turn's draws are renewed"), "invalid")
    tournament = tournament_lock(tournament_id)
    turn = campaign_open_turn(tournament.campaign) if tournament.phase == Phase.RUNNING else None
    if turn is None:
        raise refusal(_("turn: no turn is open, so there are no draws to renew"), "phase")
    withdrawn = turn.commitment
    turn_seed_renew(turn=turn)
    log_write(
        tournament,
        actor=actor,
        action="draw_renewed",
        now=now,
        turn=turn.number,
        reason=reason,
        withdrawn=withdrawn,
        commitment=turn.commitment,
    )
    announce(tournament, "draw_renewed", turn=turn.number)
    return tournament


def refuse_unless_in_play(tournament: Tournament) -> None:
    if tournament.phase == Phase.FINISHED:
        raise refusal(_("the game has ended"), "phase")
    if tournament.phase == Phase.SETUP:
        raise refusal(_("the tournament has not started"), "phase")


@unit_of_work()
def clock_pause(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """Stop the clock; the time left is kept (R4)."""
    tournament = tournament_lock(tournament_id)
    refuse_unless_in_play(tournament)
    if tournament.paused:
        raise refusal(_("the clock is already paused"), "paused")
    if tournament.deadline is None:
        raise refusal(_("no clock is running in this phase"), "phase")
    remaining = max(0.0, (tournament.deadline - now).total_seconds())
    tournament.paused_remaining = remaining
    tournament.deadline = None
    tournament.save(update_fields=["paused_remaining", "deadline"])
    log_write(tournament, actor=actor, action="clock_paused", now=now, remaining=remaining)
    announce(tournament, "clock")
    return tournament


@unit_of_work()
def clock_resume(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    tournament = tournament_lock(tournament_id)
    refuse_unless_in_play(tournament)
    if not tournament.paused:
        raise refusal(_("the clock is not paused"), "not_paused")
    remaining = tournament.paused_remaining or 0.0
    _set_deadline(tournament, now + timedelta(seconds=remaining))
    tournament.paused_remaining = None
    tournament.save(update_fields=["paused_remaining", "deadline"])
    schedule_deadline(tournament)
    log_write(tournament, actor=actor, action="clock_resumed", now=now, remaining=remaining)
    announce(tournament, "clock")
    return tournament


def _set_deadline(tournament: Tournament, deadline: datetime) -> None:
    tournament.deadline = deadline
    if tournament.phase == Phase.RUNNING:
        turn = campaign_open_turn(tournament.campaign)
        if turn is not None:
            Turn.objects.filter(pk=turn.pk).update(deadline=deadline)


@unit_of_work()
def clock_extend(*, tournament_id: int, seconds: int, actor: Actor, now: datetime) -> Tournament:
    """Give the current phase or turn more time (or less, with a negative number)."""
    tournament = tournament_lock(tournament_id)
    refuse_unless_in_play(tournament)
    if not -MAX_TURN_SECONDS <= seconds <= MAX_TURN_SECONDS or seconds == 0:
        raise refusal(
            _("seconds: a non-zero number of seconds up to %(max)s") % {"max": MAX_TURN_SECONDS}
        )
    if tournament.paused:
        before = tournament.paused_remaining or 0.0
        after = max(0.0, before + seconds)
    elif tournament.deadline is not None:
        before = max(0.0, (tournament.deadline - now).total_seconds())
        deadline = max(now, tournament.deadline + timedelta(seconds=seconds))
        after = (deadline - now).total_seconds()
    else:
        raise refusal(_("no clock is running in this phase"), "phase")
    # The log says what the clock gained or lost, not what was asked: "-1 min" at 0:00
    # changes nothing, and is refused rather than logged as a minute taken off. Measured as
    # the clocks show time (rounded up), so that "paused with 1:00 left" is followed by
    # "took 1:00 off", never by 0:59 or 1:01.
    changed = math.ceil(after) - math.ceil(before)
    if changed == 0:
        raise refusal(_("the clock shows 0:00 already: there is no time to take off"), "phase")
    if tournament.paused:
        tournament.paused_remaining = after
    else:
        _set_deadline(tournament, deadline)
    tournament.save(update_fields=["paused_remaining", "deadline"])
    schedule_deadline(tournament)
    log_write(
        tournament, actor=actor, action="clock_extended", now=now, seconds=changed, asked=seconds
    )
    announce(tournament, "clock")
    return tournament


@unit_of_work()
def clock_resolve_now(
    *, tournament_id: int, actor: Actor, now: datetime, turn: int | None = None
) -> Tournament:
    """Resolve the current turn at once, whatever the clock says (paused or not).

    ``turn`` is the turn the judge saw: if the clock (or a double click) got there first,
    that turn is no longer open and nothing more is resolved.
    """
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.RUNNING:
        raise refusal(_("there is no turn to resolve"), "phase")
    if turn is not None:
        open_turn = campaign_open_turn(tournament.campaign)
        if open_turn is None or open_turn.number != turn:
            raise refusal(
                _("turn %(turn)s is no longer open: it has been resolved") % {"turn": turn},
                "stale",
            )
    was_paused = tournament.paused
    if not _resolve_current(tournament, actor=actor, now=now):
        raise refusal(_("the turn is being resolved already"), "busy")
    if was_paused and tournament.phase == Phase.RUNNING:
        # The new turn starts paused too, with its full length to come.
        tournament.paused_remaining = float(tournament.turn_seconds)
        tournament.deadline = None
        tournament.save(update_fields=["paused_remaining", "deadline"])
        Turn.objects.filter(campaign=tournament.campaign, status=Turn.Status.OPEN).update(
            deadline=None
        )
    return tournament


@unit_of_work()
def clock_end(*, tournament_id: int, actor: Actor, now: datetime) -> Tournament:
    """End the game now: the open turn is not played (its orders stay on record)."""
    tournament = tournament_lock(tournament_id)
    refuse_unless_in_play(tournament)
    open_turn = campaign_open_turn(tournament.campaign)
    if open_turn is not None:
        Turn.objects.filter(pk=open_turn.pk).update(status=Turn.Status.UNDONE)
    # What game_reopen needs to take back a mistaken end: the unplayed turn and its clock.
    remaining = clock_left(tournament, now) or 0.0
    ended_phase = tournament.phase
    phase_enter(tournament, Phase.FINISHED, now, None)
    log_write(
        tournament,
        actor=actor,
        action="game_ended",
        now=now,
        turn=open_turn.number if open_turn else None,
        unplayed_turn=open_turn.pk if open_turn and ended_phase == Phase.RUNNING else None,
        remaining=round(remaining),
    )

    battles_stop(tournament=tournament, actor=actor, now=now)  # R8
    announce(tournament, "phase", phase=tournament.phase)
    return tournament


# A reopened turn waits, paused, with the time it had when the game was ended, and at
# least this much: a game ended at 0:00 could not be played out otherwise.
REOPEN_LEAST_SECONDS = 120


@unit_of_work()
def game_reopen(*, tournament_id: int, actor: Actor, now: datetime, reason: str) -> Tournament:
    """Take back a mistaken "End the game" (issue 30): the turn it left unplayed opens again
    with its orders, the clock waits paused for Resume with the time that turn had left,
    and the tables the end stopped go on as they were. Logged with the judge's reason.

    Only a game ended with "End the game" while a turn was open: one that ended after its
    last turn (or its end time) has nothing to reopen.
    """
    tournament = tournament_lock(tournament_id)
    if tournament.phase != Phase.FINISHED:
        raise refusal(_("the game has not ended: there is nothing to reopen"), "phase")
    if not reason.strip():
        raise refusal(_("reason: say why the game is reopened; it goes in the log"))
    ended = (
        LogEntry.objects.filter(tournament=tournament, action="game_ended")
        .order_by("-at", "-pk")
        .first()
    )
    unplayed = ended.data.get("unplayed_turn") if ended is not None else None
    turn = (
        Turn.objects.filter(
            pk=unplayed, campaign=tournament.campaign, status=Turn.Status.UNDONE
        ).first()
        if isinstance(unplayed, int)
        else None
    )
    if ended is None or turn is None:
        raise refusal(
            _(
                'only a game ended with "End the game" while a turn was open can be '
                "reopened; this one ended after its last turn"
            ),
            "phase",
        )
    left = ended.data.get("remaining")
    seconds = max(REOPEN_LEAST_SECONDS, round(left) if isinstance(left, int | float) else 0)
    seconds = min(seconds, max(tournament.turn_seconds, REOPEN_LEAST_SECONDS))
    Turn.objects.filter(pk=turn.pk).update(status=Turn.Status.OPEN, deadline=None)
    tournament.phase = Phase.RUNNING
    tournament.deadline = None
    tournament.paused_remaining = float(seconds)
    tournament.save(update_fields=["phase", "deadline", "paused_remaining"])
    battles_resume(tournament=tournament, stopped_at=ended.at, actor=actor, now=now)
    log_write(
        tournament,
        actor=actor,
        action="game_reopened",
        now=now,
        turn=turn.number,
        reason=reason.strip(),
        seconds=seconds,
    )
    announce(tournament, "phase", phase=tournament.phase)
    return tournament
