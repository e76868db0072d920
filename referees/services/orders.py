"""Orders (R4): a General's, a judge's paper order, and a swap choice."""

from __future__ import annotations

import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db import transaction
from django.utils.translation import gettext as _

from referees.kernel.core import (
    Actor,
    RulesRejection,
    TournamentError,
    announce,
    log_line,
    record_changed,
    refusal,
    tournament_lock,
    tournament_lock_light,
    unit_of_work,
    unit_writes_pipelined,
)
from referees.kernel.prepared_sql import row_insert, rows_insert
from referees.kernel.tokens import PlayerClaim
from referees.models import LogEntry, Player, Tournament
from referees.services.order_frame import Frame, Seat, order_frame
from referees.texts.words import order_refusal_text
from sl5r.rules.roles import (
    Role,
    role_visibility,
)
from strategic_map.models import Army, Order, Turn
from strategic_map.selectors import campaign_open_turn, turn_current_orders
from strategic_map.services import (
    OrderRefused,
    order_checked,
)

Phase = Tournament.Phase
# Django's ``Choices.values`` builds its list anew on every read: once here, not per order.
_KINDS = frozenset(Order.Kind.values)
_ON_SWAP = frozenset(Order.OnSwap.values)


# --- Orders (R4) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderInput:
    kind: str
    path: tuple[str, ...] = ()
    reform: str = ""
    claim: bool = True
    on_swap: str = Order.OnSwap.ADVANCE
    turn: int | None = None  # the turn the General saw; a resolved one makes the order late


def _order_prepared(
    tournament: Tournament,
    frame: Frame,
    army: Army,
    order: OrderInput,
    actor: Actor,
    now: datetime,
    *,
    deadline_applies: bool,
    others_hidden: bool,
    latest: Order | None,
) -> tuple[Order, bool]:
    """The order to store, checked (R4) but not saved, and whether it repeats ``latest``,
    the army's latest order (then it is ``latest`` itself, and nothing is to be stored)."""
    turn = frame.turn
    if order.turn is not None and turn is not None and order.turn > turn.number:
        raise refusal(
            _("turn %(turn)s is not open yet (the open turn is %(open)s): the order was not stored")
            % {"turn": order.turn, "open": turn.number},
            "not_open",
        )
    order_refuse_if_late(
        tournament=tournament,
        turn=turn,
        seen_turn=order.turn,
        now=now,
        deadline_applies=deadline_applies,
    )
    if tournament.phase != Phase.RUNNING or turn is None:
        raise refusal(_("orders are given while the turns run"), "not_running")
    if order.kind not in _KINDS:
        raise refusal(_('kind: unknown order kind "%(kind)s"') % {"kind": order.kind})
    if order.on_swap not in _ON_SWAP:
        raise refusal(_('on_swap: "stay" or "advance"'))
    if latest is not None and _order_repeats(latest, order, actor):
        # The same request again (a retry after a lost answer, a double tap): the order is
        # stored already, and storing, logging and announcing it again would change nothing.
        return latest, True
    try:
        prepared = order_checked(
            turn=turn,
            army=army,
            kind=order.kind,
            path=order.path,
            reform=order.reform,
            claim=order.claim,
            on_swap=order.on_swap,
            author=actor.label,
            by_judge=actor.judge,
            now=now,
            others_hidden=others_hidden,
            state=frame.state,
        )
    except OrderRefused as refused:
        raise RulesRejection(
            order_refusal_text(refused.code, refused.message), code=refused.code
        ) from refused
    return prepared, False


def _order_log_line(tournament: Tournament, stored: Order, actor: Actor) -> LogEntry:
    return log_line(
        tournament,
        actor=actor,
        action="order_withdrawn" if stored.kind == Order.Kind.WITHDRAW else "order_given",
        now=stored.created_at,
        turn=stored.turn.number,
        army=stored.army.code,
        kind=stored.kind,
        path=list(stored.path),
        reform=stored.reform,
        claim=stored.claim,
        on_swap=stored.on_swap,
    )


def _order_refused_line(
    tournament: Tournament,
    frame: Frame,
    seat: Seat,
    order: OrderInput,
    now: datetime,
    refused: TournamentError,
) -> LogEntry:
    """The log's record of an order that was not stored (late, invalid, not a General's):
    who sent it, when it arrived, what it said and why it was refused (issue 30), so that a
    judge can rule on "I pressed Send in time". It is stored with the batch's orders."""
    army = seat.army.code if seat.army is not None else None
    return log_line(
        tournament,
        actor=Actor.of_seat(role=seat.role, name=seat.name, clan=seat.clan),
        action="order_refused",
        now=now,
        turn=frame.turn.number if frame.turn is not None else None,
        army=army,
        kind=order.kind,
        path=list(order.path),
        reform=order.reform,
        claim=order.claim,
        seen_turn=order.turn,
        code=refused.code,
        refusal=refused.message,
    )


def _orders_announce(tournament: Tournament, frame: Frame, stored: list[Order]) -> None:
    """Count the stored orders as the unit's change, and keep the frame's latest orders
    exact once it commits."""
    before = tournament.campaign.version
    last = stored[-1].army
    # Whose views the orders change (referees.live.hubs: judges, these Generals, their Daimyo).
    armies = sorted({o.army.code for o in stored})
    clans = sorted({o.army.clan for o in stored})
    announce(tournament, "order", army=last.code, clan=last.clan, armies=armies, clans=clans)
    after = tournament.campaign.version
    transaction.on_commit(lambda: frame.orders_committed(stored, before=before, after=after))


def _order_for(
    tournament: Tournament,
    army: Army,
    order: OrderInput,
    actor: Actor,
    now: datetime,
    *,
    deadline_applies: bool,
    others_hidden: bool = False,
    frame: Frame | None = None,
) -> Order:
    frame = frame if frame is not None else order_frame(tournament)
    prepared, repeat = _order_prepared(
        tournament,
        frame,
        army,
        order,
        actor,
        now,
        deadline_applies=deadline_applies,
        others_hidden=others_hidden,
        latest=frame.latest_order(army_id=army.pk, version=tournament.campaign.version),
    )
    if repeat:
        return prepared
    # Everything is read and checked: the three writes wait for no answer (R4's order
    # is stored, or nothing is, as the unit commits).
    unit_writes_pipelined()
    row_insert(prepared)
    row_insert(_order_log_line(tournament, prepared, actor))
    _orders_announce(tournament, frame, [prepared])
    if actor.judge:
        record_changed.send(sender=Tournament, reason="paper_order")
    return prepared


def order_give(*, player: Player, order: OrderInput, now: datetime) -> Order:
    """A General gives (or changes, or withdraws) his army's order before the deadline (R4).

    A refused order is logged (``order_refused``) once the refusal has rolled back."""
    try:
        return _order_give(player=player, order=order, now=now)
    except TournamentError as refused:
        _order_refused_log(player=player, order=order, now=now, refused=refused)
        raise


@unit_of_work()
def _order_give(*, player: Player, order: OrderInput, now: datetime) -> Order:
    tournament = tournament_lock_light(player.tournament_id)
    frame = order_frame(tournament)
    seat = frame.seats.get(player.pk)
    if seat is None:
        raise refusal(_("there is no such player in this tournament"), "not_found")
    army, actor, others_hidden = _general_of(frame, seat)
    return _order_for(
        tournament,
        army,
        order,
        actor,
        now,
        deadline_applies=True,
        others_hidden=others_hidden,
        frame=frame,
    )


@unit_of_work()
def _order_refused_log(
    *, player: Player, order: OrderInput, now: datetime, refused: TournamentError
) -> None:
    try:
        tournament = tournament_lock_light(player.tournament_id)
    except TournamentError:
        return  # no such tournament: nothing to log it in
    frame = order_frame(tournament)
    seat = frame.seats.get(player.pk)
    if seat is not None:
        row_insert(_order_refused_line(tournament, frame, seat, order, now, refused))


def _general_of(frame: Frame, seat: Seat) -> tuple[Army, Actor, bool]:
    """The General's army, him as the log names him, and whether the map is hidden from
    him (R1.1: his clan's roles decide)."""
    if seat.role != Player.Role.GENERAL or seat.army is None:
        raise refusal(_("only a General gives orders"), "forbidden")
    sees_all = role_visibility(Role.GENERAL, list(frame.roles.get(seat.clan, ()))).sees_all_armies
    actor = Actor.of_seat(role=seat.role, name=seat.name, clan=seat.clan)
    return seat.army, actor, not sees_all


@dataclass
class ClaimedOrder:
    """An order a request brings for the player its join link or session names (``claim``);
    ``now`` is when the request arrived (R4). ``answer`` is filled in by ``orders_give``."""

    tournament_id: int
    claim: PlayerClaim
    order: OrderInput
    now: datetime
    answer: Order | TournamentError | None = None
    failure: Exception | None = None  # the batch failed: nothing of it was stored


def orders_give(*, requests: Sequence[ClaimedOrder]) -> None:
    """Give several Generals' orders in one transaction: each request's ``answer`` becomes
    its stored order (or the one it repeats), or the refusal of it alone (R4).

    Each is checked as ``order_give`` checks one, in the order given, against the
    tournament's state under its lock, the orders before it in ``requests`` included; a
    join link revoked or replaced a moment ago is refused (code ``bad_token``) as at once
    as by ``player_from_token``. One unit of work: each tournament's version grows once
    for all its orders, one event goes out for them, and nothing is stored unless all of
    it commits. A failure of the database itself is raised (no request is answered then).
    """
    by_tournament: dict[int, list[ClaimedOrder]] = {}
    for request in requests:
        by_tournament.setdefault(request.tournament_id, []).append(request)
    with unit_of_work():
        # Locked in one order of ids, whatever the order of arrival: two processes each
        # storing a batch for the same two tournaments must not each hold the other's lock.
        for tournament_id in sorted(by_tournament):
            _orders_give_in(tournament_id, by_tournament[tournament_id])


def _orders_give_in(tournament_id: int, requests: list[ClaimedOrder]) -> None:
    try:
        tournament = tournament_lock_light(tournament_id)
    except TournamentError as refused:
        for request in requests:
            request.answer = refused
        return
    frame = order_frame(tournament)
    version = tournament.campaign.version
    latest: dict[int, Order | None] = {}
    stored: list[Order] = []
    lines: list[LogEntry] = []
    for request in requests:
        seat = None
        try:
            seat = frame.seats.get(request.claim.player_id)
            if seat is None or not secrets.compare_digest(seat.nonce, request.claim.nonce):
                seat = None  # nobody this tournament knows: nothing to log in his name
                raise refusal(_("this join link is no longer this tournament's"), "bad_token")
            army, actor, others_hidden = _general_of(frame, seat)
            if army.pk not in latest:
                latest[army.pk] = frame.latest_order(army_id=army.pk, version=version)
            prepared, repeat = _order_prepared(
                tournament,
                frame,
                army,
                request.order,
                actor,
                request.now,
                deadline_applies=True,
                others_hidden=others_hidden,
                latest=latest[army.pk],
            )
        except TournamentError as refused:
            request.answer = refused
            if seat is not None:
                lines.append(
                    _order_refused_line(
                        tournament, frame, seat, request.order, request.now, refused
                    )
                )
            continue
        request.answer = prepared
        if not repeat:
            latest[army.pk] = prepared
            stored.append(prepared)
            lines.append(_order_log_line(tournament, prepared, actor))
    if stored:
        unit_writes_pipelined()
        rows_insert(stored)
    if lines:
        rows_insert(lines)
    if stored:
        _orders_announce(tournament, frame, stored)


class _GroupCommit:
    """Orders that arrive while another is being stored wait, and are stored together next.

    SQLite takes one writer at a time, and a PostgreSQL tournament one order at a time
    under its lock, so in a burst the orders queue anyway. The thread whose turn it is
    stores every order waiting at that moment in one transaction (``orders_give``), and
    the others return its answer to their own requests: one lock, one insert of the
    orders, one of their log lines, one version and one commit for the lot, where each
    order paid for its own before. An order alone is stored at once, as before.

    One per tournament (``_group_of``): tournaments share nothing in the rules, so a
    league's hundred tournaments on one deadline must not queue behind one another's
    batches and row locks (issue 33: with one queue per process, 79 % of the busy
    threads' time was spent waiting at it).
    """

    def __init__(self) -> None:
        self.waiting: list[ClaimedOrder] = []
        self.waiting_guard = threading.Lock()
        self.turn = threading.Lock()

    def give(self, request: ClaimedOrder) -> Order:
        with self.waiting_guard:
            self.waiting.append(request)
        with self.turn:
            if request.answer is None:
                with self.waiting_guard:
                    batch, self.waiting = self.waiting, []
                try:
                    orders_give(requests=batch)
                except Exception as failure:
                    # Nothing was stored (the database failed, most likely): every request
                    # of the batch is answered with the failure, as it would have been alone.
                    for other in batch:
                        other.failure = failure
                    raise
        if request.failure is not None:
            raise request.failure
        answer = request.answer
        if isinstance(answer, TournamentError):
            raise answer
        assert answer is not None, "every request of a committed batch is answered"
        return answer


_GROUPS: dict[int, _GroupCommit] = {}
_GROUPS_GUARD = threading.Lock()


def _group_of(tournament_id: int) -> _GroupCommit:
    """The tournament's group commit in this process (made on its first order, kept: a few
    hundred bytes per tournament the process has served)."""
    group = _GROUPS.get(tournament_id)
    if group is None:
        with _GROUPS_GUARD:
            group = _GROUPS.setdefault(tournament_id, _GroupCommit())
    return group


def order_give_claimed(
    *, tournament_id: int, claim: PlayerClaim, order: OrderInput, now: datetime
) -> Order:
    """``order_give`` for the player a signed join link or session names (``claim``), stored
    with the orders of the same tournament arriving at the same moment (``orders_give``):
    the API's way."""
    request = ClaimedOrder(tournament_id=tournament_id, claim=claim, order=order, now=now)
    return _group_of(tournament_id).give(request)


def order_refuse_if_late(
    *,
    tournament: Tournament,
    turn: Turn | None,
    seen_turn: int | None,
    now: datetime,
    deadline_applies: bool,
) -> None:
    """R4: the one place that decides whether an order came too late to be stored.

    ``now`` is when the request arrived. An order is late when its turn (``seen_turn``,
    the one the General saw) has been resolved since, when it arrived before the open turn
    began (it belonged to a turn resolved while it waited for a thread), or, where the
    deadline applies (a player's order, not a judge's paper order handed in on time), when
    it arrived at or after the running turn's deadline. A late order is never carried into
    the next turn.
    """
    if (
        deadline_applies
        and tournament.phase == Phase.RUNNING
        and not tournament.paused
        and (tournament.deadline is None or now >= tournament.deadline)
    ):
        raise refusal(_("late: the deadline has passed; the order was not stored"), "late")
    if seen_turn is not None and (turn is None or turn.number != seen_turn):
        raise refusal(
            _("late: turn %(turn)s has been resolved; the order was not stored")
            % {"turn": seen_turn},
            "late",
        )
    if turn is not None and now < turn.opened_at:
        raise refusal(_("late: the deadline has passed; the order was not stored"), "late")


def _order_repeats(stored: Order, order: OrderInput, actor: Actor) -> bool:
    """Whether ``order`` by ``actor`` is ``stored`` again, as ``order_checked`` would make it."""
    return (
        stored.kind == order.kind
        and list(stored.path) == (list(order.path) if order.kind == Order.Kind.MOVE else [])
        and stored.reform == (order.reform if order.kind == Order.Kind.REFORM else "")
        and stored.claim == order.claim
        and stored.on_swap == order.on_swap
        and stored.author == actor.label
        and stored.by_judge == actor.judge
    )


@unit_of_work()
def order_enter(
    *, tournament_id: int, army_code: str, order: OrderInput, actor: Actor, now: datetime
) -> Order:
    """A judge enters a paper order handed in on time, while the turn is still open (R4)."""
    tournament = tournament_lock_light(tournament_id)
    frame = order_frame(tournament)
    army = frame.armies.get(army_code)
    if army is None:
        raise refusal(_('there is no army "%(army)s"') % {"army": army_code}, "not_found")
    return _order_for(tournament, army, order, actor, now, deadline_applies=False, frame=frame)


@unit_of_work()
def order_swap_choice(*, player: Player, army_code: str, on_swap: str, now: datetime) -> Order:
    """R5.3: where a clan has a Daimyo, he decides where a swap battle is fought.

    The army's current move order is given again with the Daimyo's ``on_swap``; where the
    clan has no Daimyo, the General sets it with his own order.
    """
    tournament = tournament_lock(player.tournament_id)
    if player.role != Player.Role.DAIMYO:
        raise refusal(_("the Daimyo decides where a swap battle is fought"), "forbidden")
    if on_swap not in _ON_SWAP:
        raise refusal(_('on_swap: "stay" or "advance"'))
    army = Army.objects.filter(campaign=tournament.campaign, code=army_code).first()
    if army is None or army.clan != player.clan:
        raise refusal(
            _('there is no army "%(army)s" in your clan') % {"army": army_code}, "not_found"
        )
    turn = campaign_open_turn(tournament.campaign)
    current = turn_current_orders(turn).get(army.pk) if turn is not None else None
    if current is None or current.kind != Order.Kind.MOVE:
        raise refusal(_("%(army)s has no move order this turn") % {"army": army_code}, "no_move")
    order = OrderInput(
        kind=current.kind,
        path=tuple(current.path),
        claim=current.claim,
        on_swap=on_swap,
    )
    # Part of the order: it counts only when it arrived before the deadline, as an order.
    return _order_for(tournament, army, order, Actor.of_player(player), now, deadline_applies=True)
