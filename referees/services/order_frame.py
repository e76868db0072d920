"""What an order is checked against, read once per frame instead of once per order (R4).

Between two turns, 48 Generals give and change their orders, and each order needs the same
things: who the players are (their join links, roles and armies: R1, R1.1), the open turn,
the board as the engine sees it. None of it changes with an order; all of it changes with
``Campaign.frame_version``, which grows with every other change (referees/kernel/core.py: an
announced change that is not an order, an instruction or an announcement, and any saved
player, army, turn or campaign row). So a process keeps one ``Frame`` per tournament and
reads it again only when the frame version it reads under the tournament's lock is new.

The latest order of each army (a repeated order is not stored again) does change with
every order: the frame keeps it with the ``Campaign.version`` it is exact for, moves it on
with the orders this process commits, and reads the turn's orders again when the version
says somebody else (another process, a message) wrote since.

Nothing here is trusted across the lock: the frame is looked at only with the tournament
locked, and only when its frame version is the one just read.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from referees.models import Player, Tournament
from sl5r.rules.roles import Role
from sl5r.rules.turn import TurnState
from strategic_map.models import Army, Campaign, Order, Turn
from strategic_map.selectors import campaign_open_turn, campaign_turn_state


@dataclass(frozen=True)
class Seat:
    """A player as the order path needs him."""

    player_id: int
    nonce: str
    name: str
    role: str
    clan: str
    army: Army | None


@dataclass
class Frame:
    tournament_id: int
    frame_version: int
    seats: Mapping[int, Seat]
    roles: Mapping[str, tuple[Role, ...]]  # by clan
    turn: Turn | None  # the open turn
    state: TurnState | None  # the open turn's input, as the engine reads it
    armies: Mapping[str, Army]  # by code
    # The latest order of each army in the open turn, exact at ``latest_version``.
    latest: dict[int, Order] = field(default_factory=dict)
    latest_version: int = -1
    guard: threading.Lock = field(default_factory=threading.Lock)

    def latest_order(self, *, army_id: int, version: int) -> Order | None:
        """The army's latest order this turn; read again when ``version`` (the campaign's,
        read under the lock) is not the one the frame's orders are exact for."""
        with self.guard:
            if self.latest_version == version:
                return self.latest.get(army_id)
            known = dict(self.latest)
        # Orders are only ever added to an open turn (a change that removes any, an undo,
        # starts a new frame): the ones after the newest known are all that can be new.
        newest = max((o.pk for o in known.values()), default=0)
        known.update(_latest_orders(self.turn, after=newest))
        with self.guard:
            self.latest, self.latest_version = known, version
        return known.get(army_id)

    def orders_committed(self, orders: list[Order], *, before: int, after: int) -> None:
        """This process committed ``orders``, moving the campaign from ``before`` to
        ``after``: the frame's orders stay exact if they were exact at ``before``."""
        with self.guard:
            if self.latest_version == before:
                for order in orders:
                    self.latest[order.army_id] = order
                self.latest_version = after
            else:
                self.latest_version = -1


_FRAMES: dict[int, Frame] = {}


def order_frame(tournament: Tournament) -> Frame:
    """The frame of a locked ``tournament`` (``tournament_lock`` or ``tournament_lock_light``):
    the kept one while its frame version holds."""
    campaign = tournament.campaign
    frame = _FRAMES.get(tournament.pk)
    if frame is not None and frame.frame_version == campaign.frame_version:
        return frame
    frame = _frame_read(tournament, Campaign.objects.get(pk=campaign.pk))
    _FRAMES[tournament.pk] = frame
    return frame


def order_frames_forget() -> None:
    """Drop every kept frame (tests that change rows behind the services' back between
    two databases; a process never needs it)."""
    _FRAMES.clear()


def _frame_read(tournament: Tournament, campaign: Campaign) -> Frame:
    # The campaign whole (its board and map), read under the same lock as ``tournament``.
    armies = {a.code: a for a in Army.objects.filter(campaign=campaign).order_by("id")}
    by_id = {a.pk: a for a in armies.values()}
    seats: dict[int, Seat] = {}
    roles: dict[str, list[Role]] = {}
    for pk, nonce, name, role, clan, army_id in Player.objects.filter(
        tournament=tournament
    ).values_list("pk", "token_nonce", "name", "role", "clan", "army_id"):
        seats[pk] = Seat(
            player_id=pk,
            nonce=nonce,
            name=name,
            role=role,
            clan=clan,
            army=by_id.get(army_id) if army_id is not None else None,
        )
        roles.setdefault(clan, []).append(Role(role))
    turn = campaign_open_turn(campaign)
    state = None
    if turn is not None:
        state = campaign_turn_state(campaign, turn=turn.number, armies=list(armies.values()))
    return Frame(
        tournament_id=tournament.pk,
        frame_version=campaign.frame_version,
        seats=MappingProxyType(seats),
        roles=MappingProxyType({clan: tuple(r) for clan, r in roles.items()}),
        turn=turn,
        state=state,
        armies=MappingProxyType(armies),
    )


def _latest_orders(turn: Turn | None, *, after: int) -> dict[int, Order]:
    """The latest order of each army among the turn's orders with an id above ``after``."""
    if turn is None:
        return {}
    latest: dict[int, Order] = {}
    for order in Order.objects.filter(turn=turn, pk__gt=after).order_by("id"):
        order.turn = turn
        latest[order.army_id] = order
    return latest
