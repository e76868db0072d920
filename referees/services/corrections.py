"""Corrections: undoing the last turn (R4) and a judge's edits of the board (R11)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import Q
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from battles.models import TableSnapshot
from battles.services.lifecycle import battles_undo, battles_undo_problem
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
from referees.models import LogEntry, Player, Tournament
from referees.services.clock import refuse_unless_in_play
from sl5r.rules.clans import is_clan
from strategic_map.board import Board
from strategic_map.clans import clan_name
from strategic_map.models import Army, Campaign, Order, Turn
from strategic_map.selectors import campaign_game_map, campaign_open_turn
from strategic_map.services import (
    board_place,
    board_set_control,
    turn_undo,
)

log = logging.getLogger(__name__)

Phase = Tournament.Phase


# --- Undo (R4) -------------------------------------------------------------------------------

UNDO_MIN_SECONDS = 60
UNDO_MAX_SECONDS = 4 * 3600
UNDO_LEAST_DEFAULT = 120  # a turn reopened with seconds left could not be played out
CORRECTION_ACTIONS = ("army_corrected", "control_corrected")
BATTLE_ACTION_WORDS = {
    "battle_opened": gettext_lazy("table opened"),
    "battle_seats_changed": gettext_lazy("seats changed"),
    "battle_dispersed": gettext_lazy("meeting dispersed"),
    "battle_reinforced": gettext_lazy("reinforcement seated"),
    "battle_reinforcement_refused": gettext_lazy("reinforcement refused"),
    "battle_vote": gettext_lazy("vote"),
    "battle_peace": gettext_lazy("peace"),
    "battle_started": gettext_lazy("battle started"),
    "battle_action": gettext_lazy("move played"),
    "battle_decided": gettext_lazy("battle decided"),
    "battle_ended": gettext_lazy("battle ended"),
    "battle_corrected": gettext_lazy("result corrected"),
    "battle_stopped": gettext_lazy("table stopped"),
    "battle_resumed": gettext_lazy("table resumed"),
}


@dataclass(frozen=True)
class UndoItem:
    """One thing an undo throws away, with who did it and when (for the dialog and the log)."""

    kind: str  # "order", "paper_order", "correction", "battle"
    action: str
    who: str
    at: datetime
    text: str
    army: str = ""
    province: str = ""

    def as_data(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "action": self.action,
            "who": self.who,
            "at": self.at.isoformat(),
            "text": self.text,
            "army": self.army,
            "province": self.province,
        }


@dataclass(frozen=True)
class UndoPreview:
    """What undoing the last resolved turn would do: which turn reopens, for how long, and
    what is discarded with it."""

    turn: int
    default_seconds: int
    full_seconds: int
    items: tuple[UndoItem, ...]
    left_seconds: int = 0  # what the turn really had left when it was resolved
    problem: str = ""  # why the undo would be refused now: said before, not after, asking


def _who(label: str) -> str:
    return str(_("the clock")) if label == CLOCK.label else label


def _order_text(order: Order, name: Callable[[str], str]) -> str:
    army = order.army.code
    if order.kind == Order.Kind.MOVE:
        path = " → ".join(name(p) for p in order.path)
        return _("%(army)s: move along %(path)s") % {"army": army, "path": path}
    if order.kind == Order.Kind.REFORM:
        return _("%(army)s: reform in %(province)s") % {
            "army": army,
            "province": name(order.reform),
        }
    if order.kind == Order.Kind.WITHDRAW:
        return _("%(army)s: order withdrawn") % {"army": army}
    return _("%(army)s: hold") % {"army": army}


def _correction_text(entry: LogEntry, name: Callable[[str], str]) -> str:
    data = entry.data
    if entry.action == "army_corrected":
        after = (data.get("after") or {}).get("province")
        if after is None:
            return _("%(army)s destroyed by hand") % {"army": data.get("army", "")}
        return _("%(army)s moved by hand to %(province)s") % {
            "army": data.get("army", ""),
            "province": name(after),
        }
    return _("%(province)s: control set to %(clan)s") % {
        "province": name(data.get("province", "")),
        "clan": clan_name(data["after"]) if data.get("after") else _("nobody"),
    }


def _undo_last(tournament: Tournament) -> Turn:
    if tournament.phase not in (Phase.RUNNING, Phase.FINISHED):
        raise refusal(_("no turn has been resolved"), "phase")
    last = (
        Turn.objects.filter(campaign=tournament.campaign, status=Turn.Status.RESOLVED)
        .order_by("-number")
        .first()
    )
    if last is None:
        raise refusal(_("no turn has been resolved"), "nothing_to_undo")
    return last


def _undo_left_seconds(tournament: Tournament, last: Turn) -> int:
    """The time ``last`` had left when it was resolved (recorded with its resolution)."""
    entry = (
        LogEntry.objects.filter(tournament=tournament, action="turn_resolved", turn=last.number)
        .order_by("-at", "-pk")
        .first()
    )
    left: float = 0.0
    if entry is not None and isinstance(entry.data.get("remaining"), int | float):
        left = float(entry.data["remaining"])
    elif last.deadline is not None and last.resolved_at is not None:
        left = max(0.0, (last.deadline - last.resolved_at).total_seconds())
    return min(UNDO_MAX_SECONDS, round(left))


def _undo_default_seconds(left: int) -> int:
    """The reopened turn gets the time it had left; a turn resolved with less than a minute
    (at its deadline, most often) reopens with UNDO_LEAST_DEFAULT, to be played out."""
    return left if left >= UNDO_MIN_SECONDS else UNDO_LEAST_DEFAULT


def _undo_items(tournament: Tournament, last: Turn) -> list[UndoItem]:
    """Orders of the turn opened after ``last``, and the corrections and battle table
    actions since ``last`` was resolved: an undo puts the board and tables back before them."""
    provinces = campaign_game_map(tournament.campaign).provinces

    def name(province: str) -> str:
        return provinces[province].name if province in provinces else province

    items = _undo_order_items(tournament, last, name)
    if last.resolved_at is not None:
        items.extend(_undo_log_items(tournament, last, last.resolved_at, name))
    items.sort(key=lambda item: item.at)
    return items


def _undo_order_items(
    tournament: Tournament, last: Turn, name: Callable[[str], str]
) -> list[UndoItem]:
    """The orders given in the turn opened after ``last``, oldest first."""
    generals = {
        p.army_id: p for p in Player.objects.filter(tournament=tournament, army__isnull=False)
    }
    items: list[UndoItem] = []
    later_orders = (
        Order.objects.filter(
            turn__campaign=tournament.campaign,
            turn__number__gt=last.number,
            turn__status=Turn.Status.OPEN,
        )
        .select_related("army")
        .order_by("created_at", "pk")
    )
    for order in later_orders:
        who = order.author
        general = generals.get(order.army_id)
        if general is not None and who == Actor.of_player(general).label:
            who = _("%(name)s, General of %(army)s") % {
                "name": general.name,
                "army": order.army.code,
            }
        items.append(
            UndoItem(
                kind="paper_order" if order.by_judge else "order",
                action="order_withdrawn" if order.kind == Order.Kind.WITHDRAW else "order_given",
                who=who,
                at=order.created_at,
                text=_order_text(order, name),
                army=order.army.code,
            )
        )
    return items


def _undo_log_items(
    tournament: Tournament, last: Turn, resolved_at: datetime, name: Callable[[str], str]
) -> list[UndoItem]:
    """The judges' corrections since ``last`` was resolved (at ``resolved_at``), and the
    actions at the tables its resolution opened or changed, in the log's order."""
    # Only the tables this resolution opened or changed go back (battles_undo); play at
    # any other table since stays as it is.
    snapshot = TableSnapshot.objects.filter(tournament=tournament, turn=last.number).first()
    tables = {str(pk) for pk in snapshot.opened} | set(snapshot.tables) if snapshot else set()
    since = LogEntry.objects.filter(tournament=tournament, at__gte=resolved_at).filter(
        Q(action__in=CORRECTION_ACTIONS) | Q(action__startswith="battle_")
    )
    entries = list(since.order_by("at", "pk"))
    # A stop by "End the game" that a reopening took back is no change to discard.
    resumed = {str(e.data.get("battle")) for e in entries if e.action == "battle_resumed"}
    items: list[UndoItem] = []
    for entry in entries:
        if entry.action not in CORRECTION_ACTIONS and str(entry.data.get("battle")) not in tables:
            continue
        if (
            entry.action in ("battle_stopped", "battle_resumed")
            and str(entry.data.get("battle")) in resumed
        ):
            continue
        items.append(_undo_log_item(entry, name))
    return items


def _undo_log_item(entry: LogEntry, name: Callable[[str], str]) -> UndoItem:
    """One correction or table action, as the undo's list says it."""
    if entry.action in CORRECTION_ACTIONS:
        kind, text = "correction", _correction_text(entry, name)
        if entry.reason:
            text = _("%(change)s (because: %(reason)s)") % {
                "change": text,
                "reason": entry.reason,
            }
    else:
        word = BATTLE_ACTION_WORDS.get(entry.action, entry.action)
        kind = "battle"
        text = _("table in %(province)s: %(what)s") % {
            "province": name(str(entry.data.get("province", ""))),
            "what": word,
        }
    return UndoItem(
        kind=kind,
        action=entry.action,
        who=_who(entry.actor),
        at=entry.at,
        text=text,
        army=str(entry.data.get("army") or ""),
        province=str(entry.data.get("province") or ""),
    )


def _ended_with_a_turn_unplayed(tournament: Tournament, last: Turn) -> bool:
    ended = (
        LogEntry.objects.filter(tournament=tournament, action="game_ended")
        .order_by("-at", "-pk")
        .values_list("turn", flat=True)
        .first()
    )
    return ended is not None and ended > last.number


def _undo_problem(tournament: Tournament, last: Turn) -> str | None:
    """Why ``clock_undo`` would refuse to undo ``last`` now, or None."""
    if tournament.phase == Phase.FINISHED and _ended_with_a_turn_unplayed(tournament, last):
        # "End the game" stopped the tables after this turn: they go on again only when the
        # game is reopened (game_reopen). A game that ended with its last turn undoes as is.
        return _('the game has ended: reopen it first ("Reopen the game"), then undo')
    if last.resolved_at is None:
        return None
    return battles_undo_problem(
        tournament=tournament, turn_number=last.number, resolved_at=last.resolved_at
    )


@unit_of_work()
def undo_preview(*, tournament_id: int) -> UndoPreview:
    """What ``clock_undo`` would discard now, and the time the reopened turn gets (R4)."""
    tournament = tournament_lock(tournament_id)
    last = _undo_last(tournament)
    left = _undo_left_seconds(tournament, last)
    problem = _undo_problem(tournament, last) or ""
    return UndoPreview(
        problem=problem,
        turn=last.number,
        default_seconds=_undo_default_seconds(left),
        left_seconds=left,
        full_seconds=tournament.turn_seconds,
        items=tuple(_undo_items(tournament, last)),
    )


@unit_of_work()
def clock_undo(
    *,
    tournament_id: int,
    actor: Actor,
    now: datetime,
    reason: str = "",
    turn: int | None = None,
    seconds: int | None = None,
) -> Tournament:
    """Undo the last resolution: the board goes back, that turn reopens, the clock pauses.

    The reopened turn waits paused for the judge's Resume, with ``seconds`` on its clock or
    by default the time it had left when it was resolved (2 minutes if that was under one).
    What the undo discards (see ``undo_preview``) is written in the log. ``turn`` is the turn
    the judge saw as the last one played: if it is not (the same request came twice),
    nothing is undone.
    """
    if seconds is not None and not UNDO_MIN_SECONDS <= seconds <= UNDO_MAX_SECONDS:
        raise refusal(
            _("seconds: from %(min)s to %(max)s seconds (1 minute to 4 hours)")
            % {"min": UNDO_MIN_SECONDS, "max": UNDO_MAX_SECONDS}
        )
    tournament = tournament_lock(tournament_id)
    campaign = tournament.campaign  # locked with the tournament (see tournament_lock)
    last = _undo_last(tournament)
    if turn is not None and last.number != turn:
        raise refusal(
            _("turn %(turn)s is not the last turn played: it has been undone already")
            % {"turn": turn},
            "stale",
        )
    if tournament.phase == Phase.FINISHED and _ended_with_a_turn_unplayed(tournament, last):
        raise refusal(str(_undo_problem(tournament, last)), "phase")
    remaining = (
        seconds
        if seconds is not None
        else _undo_default_seconds(_undo_left_seconds(tournament, last))
    )
    discarded = _undo_items(tournament, last)

    if last.resolved_at is not None:
        battles_undo(tournament=tournament, turn_number=last.number, resolved_at=last.resolved_at)
    turn_undo(campaign=campaign, turn=last)
    Turn.objects.filter(pk=last.pk).update(deadline=None)
    tournament.phase = Phase.RUNNING
    tournament.deadline = None
    tournament.paused_remaining = float(remaining)
    tournament.save(update_fields=["phase", "deadline", "paused_remaining"])
    log_write(
        tournament,
        actor=actor,
        action="turn_undone",
        now=now,
        turn=last.number,
        reason=reason,
        seconds=remaining,
        discarded=[item.as_data() for item in discarded],
    )
    announce(tournament, "turn_undone", turn=last.number)
    return tournament


# --- Corrections ---------------------------------------------------------------------------


def _board_correct(
    *,
    tournament_id: int,
    action: str,
    reason: str,
    actor: Actor,
    now: datetime,
    change: Callable[[Campaign, Turn | None], dict[str, Any]],
) -> None:
    """A judge's change of the board, with a reason: locked, saved, logged, announced.

    ``change`` edits the campaign's board and returns what the log records of it; a
    ``ValueError`` from it (a province that does not exist, is impassable …) is refused.
    """
    tournament = tournament_lock(tournament_id)
    refuse_unless_in_play(tournament)
    campaign = tournament.campaign  # locked with the tournament (see tournament_lock)
    turn = campaign_open_turn(campaign)
    try:
        details = change(campaign, turn)
    except TournamentError:
        raise
    except ValueError as error:
        raise refusal(_("province: %(problem)s") % {"problem": error}) from error
    Board.of(campaign).save()
    log_write(
        tournament,
        actor=actor,
        action=action,
        now=now,
        turn=turn.number if turn else None,
        reason=reason,
        **details,
    )
    announce(tournament, "correction")


@unit_of_work()
def army_correct(
    *,
    tournament_id: int,
    army_code: str,
    province: str | None,
    destroyed_by: str = "loss",
    reason: str,
    actor: Actor,
    now: datetime,
) -> None:
    """A judge moves an army by hand, or destroys it (``province`` None), with a reason."""
    if not reason.strip():
        raise refusal(_("reason: say why the army is moved"))
    if destroyed_by not in ("loss", "winner"):
        raise refusal(_('destroyed_by: "loss" or "winner"'))

    def move(campaign: Campaign, turn: Turn | None) -> dict[str, Any]:
        army = Army.objects.filter(campaign=campaign, code=army_code).first()
        if army is None:
            raise refusal(_('there is no army "%(army)s"') % {"army": army_code}, "not_found")
        spot = Board.of(campaign).spot(army_code)
        if spot is not None and spot.in_battle:
            # Its table would go on playing with an army the board no longer has there,
            # and the table's result would then undo the correction (R8).
            raise refusal(
                _(
                    "%(army)s is fighting at the battle table in %(province)s: record or "
                    "correct that battle's result first (R8)"
                )
                % {"army": army_code, "province": spot.province},
                "in_battle",
            )
        board_place(
            campaign=campaign,
            army=army,
            province=province,
            destroyed_in_turn=turn.number if turn else None,
            destroyed_by=destroyed_by,
        )
        after = Board.of(campaign).spot(army_code)
        return {
            "army": army_code,
            "before": spot.to_json() if spot is not None else None,
            "after": after.to_json() if after is not None else None,
        }

    _board_correct(
        tournament_id=tournament_id,
        action="army_corrected",
        reason=reason,
        actor=actor,
        now=now,
        change=move,
    )


@unit_of_work()
def control_correct(
    *,
    tournament_id: int,
    province: str,
    clan: str | None,
    reason: str,
    actor: Actor,
    now: datetime,
) -> None:
    """A judge sets who controls a province, with a reason."""
    if not reason.strip():
        raise refusal(_("reason: say why control changes"))
    if clan is not None and not is_clan(clan):
        raise refusal(_('clan: unknown clan "%(clan)s"') % {"clan": clan})

    def set_control(campaign: Campaign, turn: Turn | None) -> dict[str, Any]:
        before = Board.of(campaign).control_of(province)
        board_set_control(campaign=campaign, province=province, clan=clan)
        return {"province": province, "before": before, "after": clan}

    _board_correct(
        tournament_id=tournament_id,
        action="control_corrected",
        reason=reason,
        actor=actor,
        now=now,
        change=set_control,
    )
