"""Orders (R4): a General's, a judge's paper order, and a swap choice."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.utils.translation import gettext as _

from referees.backups import backup_on_commit
from referees.kernel import (
    Actor,
    RulesRejection,
    announce,
    log_write,
    refusal,
    tournament_lock,
    unit_of_work,
)
from referees.models import Player, Tournament
from referees.selectors import clan_held_roles
from referees.texts import order_refusal_text
from sl5r.rules.roles import (
    Role,
    role_visibility,
)
from strategic_map.models import Army, Order, Turn
from strategic_map.selectors import campaign_open_turn, turn_current_orders
from strategic_map.services import (
    OrderRefused,
    order_submit,
)

Phase = Tournament.Phase


# --- Orders (R4) ----------------------------------------------------------------------------


@dataclass(frozen=True)
class OrderInput:
    kind: str
    path: tuple[str, ...] = ()
    reform: str = ""
    claim: bool = True
    on_swap: str = Order.OnSwap.ADVANCE
    turn: int | None = None  # the turn the General saw; a resolved one makes the order late


def _order_for(
    tournament: Tournament,
    army: Army,
    order: OrderInput,
    actor: Actor,
    now: datetime,
    *,
    deadline_applies: bool,
    others_hidden: bool = False,
) -> Order:
    turn = campaign_open_turn(tournament.campaign)
    if turn is not None:
        turn.campaign = tournament.campaign  # already read with the locked tournament
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
    if order.kind not in Order.Kind.values:
        raise refusal(_('kind: unknown order kind "%(kind)s"') % {"kind": order.kind})
    if order.on_swap not in Order.OnSwap.values:
        raise refusal(_('on_swap: "stay" or "advance"'))
    latest = Order.objects.filter(turn=turn, army=army).order_by("-id").first()
    if latest is not None and _order_repeats(latest, order, actor):
        # The same request again (a retry after a lost answer, a double tap): the order is
        # stored already, and storing, logging and announcing it again would change nothing.
        return latest
    try:
        stored = order_submit(
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
        )
    except OrderRefused as refused:
        raise RulesRejection(
            order_refusal_text(refused.code, refused.message), code=refused.code
        ) from refused
    log_write(
        tournament,
        actor=actor,
        action="order_withdrawn" if order.kind == Order.Kind.WITHDRAW else "order_given",
        now=now,
        turn=turn.number,
        army=army.code,
        kind=order.kind,
        path=list(order.path),
        reform=order.reform,
        claim=order.claim,
        on_swap=order.on_swap,
    )
    announce(tournament, "order", army=army.code, clan=army.clan)
    if actor.judge:
        backup_on_commit(reason="paper_order")
    return stored


@unit_of_work()
def order_give(*, player: Player, order: OrderInput, now: datetime) -> Order:
    """A General gives (or changes, or withdraws) his army's order before the deadline (R4)."""
    tournament = tournament_lock(player.tournament_id)
    if player.role != Player.Role.GENERAL or player.army is None:
        raise refusal(_("only a General gives orders"), "forbidden")
    sees_all = role_visibility(
        Role.GENERAL, clan_held_roles(tournament, player.clan)
    ).sees_all_armies
    return _order_for(
        tournament,
        player.army,
        order,
        Actor.of_player(player),
        now,
        deadline_applies=True,
        others_hidden=not sees_all,
    )


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
    """Whether ``order`` by ``actor`` is ``stored`` again, as ``order_submit`` would store it."""
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
    tournament = tournament_lock(tournament_id)
    army = Army.objects.filter(campaign=tournament.campaign, code=army_code).first()
    if army is None:
        raise refusal(_('there is no army "%(army)s"') % {"army": army_code}, "not_found")
    return _order_for(tournament, army, order, actor, now, deadline_applies=False)


@unit_of_work()
def order_swap_choice(*, player: Player, army_code: str, on_swap: str, now: datetime) -> Order:
    """R5.3: where a clan has a Daimyo, he decides where a swap battle is fought.

    The army's current move order is given again with the Daimyo's ``on_swap``; where the
    clan has no Daimyo, the General sets it with his own order.
    """
    tournament = tournament_lock(player.tournament_id)
    if player.role != Player.Role.DAIMYO:
        raise refusal(_("the Daimyo decides where a swap battle is fought"), "forbidden")
    if on_swap not in Order.OnSwap.values:
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
