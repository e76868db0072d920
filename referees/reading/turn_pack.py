"""The paper fallback (issue 32): the turn pack a judge prints when the venue's network fails.

``turn_pack`` reads the open turn once and gives what the pack's pages print and the paper
orders' form lays out in the same order:

- a slip for every General (clan order, then army code) with his army, its province and
  every order the deadline would accept, from the engine's ``order_options``. What a
  General may know decides what his slip lists (R1.1): where his clan has a Daimyo, his
  options are worked out on the board as he knows it (``turn_state_as_seen_by``), exactly
  as his own page offers them and as an order he gives himself is checked;
- the judges' board as it stands: the armies, control of every province, the open tables,
  and the orders stored so far.

Judges see everything; the page that prints the slips must print nothing more than each
slip's own data on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from django.utils.translation import gettext as _

from battles.models import OPEN_STATUSES
from battles.selectors import battles_visible
from referees.kernel.core import refusal
from referees.kernel.visibility import Viewer, clan_roles
from referees.models import Player, Tournament
from sl5r.rules.clans import CLANS
from sl5r.rules.roles import Role, role_visibility
from sl5r.rules.turn import Army as RulesArmy
from sl5r.rules.turn import Order as RulesOrder
from sl5r.rules.turn import (
    OrderOptions,
    TurnState,
    order_check,
    order_options,
    reform_first_turn,
)
from strategic_map.models import Army, Order, Turn
from strategic_map.selectors import (
    campaign_open_turn,
    campaign_turn_state,
    turn_current_orders,
    turn_state_as_seen_by,
)

SwapDecider = Literal["general", "daimyo"]


@dataclass(frozen=True)
class SlipChoice:
    """One box to tick on a slip, numbered as the paper orders' form numbers it."""

    number: int
    kind: str  # Order.Kind: hold, move or reform
    path: tuple[str, ...] = ()
    reform: str = ""
    names: tuple[str, ...] = ()  # the provinces' names as the site shows them

    @property
    def value(self) -> str:
        """The form's value: ``hold``, ``move:a``, ``move:a>b``, ``reform:p``."""
        if self.kind == Order.Kind.MOVE:
            return "move:" + ">".join(self.path)
        if self.kind == Order.Kind.REFORM:
            return f"reform:{self.reform}"
        return "hold"

    def rules_order(self, army: str) -> RulesOrder:
        return RulesOrder(army=army, move=self.path, reform=self.reform or None)


@dataclass(frozen=True)
class Slip:
    """One General's order slip: what he may order this turn, as far as he may know (R1.1)."""

    number: int
    player_id: int
    player: str
    clan: str
    army: str
    province: str | None
    province_name: str
    sees_map: bool
    options: OrderOptions
    choices: tuple[SlipChoice, ...]
    # R5.3: who decides the Scorpion's choice on a swap, where it applies.
    swap_decided_by: SwapDecider | None

    @property
    def destroyed(self) -> bool:
        return self.province is None

    @property
    def two_step(self) -> bool:
        return any(len(c.path) == 2 for c in self.choices)


@dataclass(frozen=True)
class BoardArmy:
    code: str
    clan: str
    general: str
    province: str | None
    province_name: str
    in_battle: bool
    reform_from: int | None


@dataclass(frozen=True)
class BoardProvince:
    id: str
    name: str
    home_clan: str | None
    castle: bool
    impassable: bool
    controller: str | None


@dataclass(frozen=True)
class StoredOrder:
    """The order that counts now for an army (judges only)."""

    kind: str
    path: tuple[str, ...]
    reform: str
    claim: bool
    on_swap: str
    by_judge: bool
    author: str
    given_at: datetime


@dataclass(frozen=True)
class TurnPack:
    tournament: Tournament
    turn: int
    deadline: datetime | None
    paused: bool
    paused_remaining: float | None
    commitment: str
    slips: tuple[Slip, ...]
    armies: tuple[BoardArmy, ...]
    provinces: tuple[BoardProvince, ...]
    tables: tuple[dict[str, Any], ...]
    orders: dict[str, StoredOrder]
    # Judges only: the choices of a General's slip that the turn would refuse as the board
    # stands (R1.1: a blind General's slip lists what he may know), by army and value, with
    # the engine's reason code and sentence.
    refused: dict[str, dict[str, tuple[str, str]]]


def _choices(options: OrderOptions, name: dict[str, str]) -> tuple[SlipChoice, ...]:
    """The options as boxes in the order the slip prints them: hold, moves, reforms."""
    found: list[SlipChoice] = []
    if options.hold:
        found.append(SlipChoice(number=1, kind=Order.Kind.HOLD))
    for path in options.moves:
        found.append(
            SlipChoice(
                number=len(found) + 1,
                kind=Order.Kind.MOVE,
                path=path,
                names=tuple(name[p] for p in path),
            )
        )
    reforms = sorted(options.reforms, key=lambda p: name[p])
    for province in reforms:
        found.append(
            SlipChoice(
                number=len(found) + 1,
                kind=Order.Kind.REFORM,
                reform=province,
                names=(name[province],),
            )
        )
    return tuple(found)


def _slip_options(state: TurnState, army: RulesArmy, sees_map: bool) -> OrderOptions:
    """R1.1: the options of a General's slip are those of his own page.

    A General whose clan has a Daimyo knows only his army, its province and the provinces
    next to it. His slip is worked out on the board as he knows it, the one an order he
    gives himself is checked on (``turn_state_as_seen_by``): his army alone, every province
    out of his sight held by his clan. So a Unicorn's two-province move through a province
    another army held is listed, as his page offers it (R5.4's "occupied" would tell him
    where that army is), and so is a home castle his clan has lost without his seeing it
    (R9). The deadline refuses such an order with its reason, as it does one sent from his
    phone; the paper orders' form shows the judge the refusal.
    """
    if sees_map:
        return order_options(state, army.id)
    return order_options(turn_state_as_seen_by(state, army.id), army.id)


def _swap_decider(options: OrderOptions, clan_has: list[Role]) -> SwapDecider | None:
    """R5.3: the Daimyo decides where a Scorpion's swap battle is fought, or the General
    where the clan has none."""
    if not options.swap_choice:
        return None
    return "daimyo" if Role.DAIMYO in clan_has else "general"


def _stored(turn: Turn, code_of: dict[int, str]) -> dict[str, StoredOrder]:
    return {
        code_of[aid]: StoredOrder(
            kind=order.kind,
            path=tuple(order.path),
            reform=order.reform,
            claim=order.claim,
            on_swap=order.on_swap,
            by_judge=order.by_judge,
            author=order.author,
            given_at=order.created_at,
        )
        for aid, order in turn_current_orders(turn).items()
        if aid in code_of
    }


_CLAN_RANK = {clan: index for index, clan in enumerate(CLANS)}


def _rank(clan: str | None) -> int:
    """Where a clan comes in the pack: in the order of ``CLANS``, unknown clans last."""
    return _CLAN_RANK.get(clan or "", len(CLANS))


def _open_turn(tournament: Tournament) -> Turn:
    """The turn the pack is made for; refused (``not_running``) when there is none."""
    turn = (
        campaign_open_turn(tournament.campaign)
        if tournament.phase == Tournament.Phase.RUNNING
        else None
    )
    if turn is None:
        raise refusal(
            _("The turn pack is made for the open turn: the turns are not running now."),
            "not_running",
        )
    return turn


def _seated_generals(tournament: Tournament, on_board: dict[str, RulesArmy]) -> list[Player]:
    """The Generals whose army is on the board, in the slips' order: clan, then army code."""
    generals = (
        Player.objects.filter(tournament=tournament, role=Player.Role.GENERAL, army__isnull=False)
        .select_related("army")
        .only("id", "name", "clan", "army__code", "army__clan")
    )
    return sorted(
        (p for p in generals if p.army is not None and p.army.code in on_board),
        key=lambda p: (_rank(p.clan), p.army.code if p.army else ""),
    )


def _slips(
    state: TurnState,
    on_board: dict[str, RulesArmy],
    seated: list[Player],
    roles: dict[str, list[Role]],
    name: dict[str, str],
) -> tuple[tuple[Slip, ...], dict[str, dict[str, tuple[str, str]]]]:
    """Every seated General's slip; and, for the judges, the choices of a blind General's
    slip that the turn would refuse as the board stands (R1.1)."""
    slips: list[Slip] = []
    refused: dict[str, dict[str, tuple[str, str]]] = {}
    for player in seated:
        assert player.army is not None
        army = on_board[player.army.code]
        clan_has = roles.get(army.clan, [])
        sees_map = role_visibility(Role.GENERAL, clan_has).sees_all_armies
        options = _slip_options(state, army, sees_map)
        choices = _choices(options, name)
        slips.append(
            Slip(
                number=len(slips) + 1,
                player_id=player.pk,
                player=player.name,
                clan=army.clan,
                army=army.id,
                province=army.province,
                province_name=name.get(army.province, "") if army.province else "",
                sees_map=sees_map,
                options=options,
                choices=choices,
                swap_decided_by=_swap_decider(options, clan_has),
            )
        )
        if not sees_map:
            for choice in choices:
                rejection = order_check(state, choice.rules_order(army.id))
                if rejection is not None:
                    refused.setdefault(army.id, {})[choice.value] = (
                        rejection.code,
                        rejection.text,
                    )
    return tuple(slips), refused


def _board_armies(
    state: TurnState, general_of: dict[str, str], name: dict[str, str]
) -> tuple[BoardArmy, ...]:
    """The judges' board: every army, clan by clan, with its General."""
    armies = sorted(state.armies, key=lambda a: (_rank(a.clan), a.id))
    return tuple(
        BoardArmy(
            code=a.id,
            clan=a.clan,
            general=general_of.get(a.id, ""),
            province=a.province,
            province_name=name.get(a.province, "") if a.province else "",
            in_battle=a.in_battle,
            reform_from=reform_first_turn(a) if a.destroyed else None,
        )
        for a in armies
    )


def _board_provinces(state: TurnState) -> tuple[BoardProvince, ...]:
    """Every province and who holds it: the clans' homes in clan order, then the rest."""
    return tuple(
        sorted(
            (
                BoardProvince(
                    id=p.id,
                    name=p.name,
                    home_clan=p.home_clan,
                    castle=p.has_castle,
                    impassable=p.impassable,
                    controller=state.control.get(p.id),
                )
                for p in state.game_map.provinces.values()
            ),
            key=lambda p: (p.home_clan is None, _rank(p.home_clan), p.name),
        )
    )


def turn_pack(*, tournament: Tournament) -> TurnPack:
    """The open turn's pack: every General's slip, and the judges' board (issue 32).

    Refused (``not_running``) unless the turns are running and one is open.
    """
    campaign = tournament.campaign
    turn = _open_turn(tournament)
    state = campaign_turn_state(campaign, turn=turn.number)
    name = {pid: p.name for pid, p in state.game_map.provinces.items()}
    on_board = {a.id: a for a in state.armies}
    roles = clan_roles(tournament)
    seated = _seated_generals(tournament, on_board)
    general_of = {p.army.code: p.name for p in seated if p.army is not None}
    slips, refused = _slips(state, on_board, seated, roles, name)
    tables = tuple(
        row
        for row in battles_visible(tournament=tournament, viewer=Viewer.judge())
        if row["status"] in OPEN_STATUSES
    )
    code_of = dict(Army.objects.filter(campaign=campaign).values_list("pk", "code"))
    return TurnPack(
        tournament=tournament,
        turn=turn.number,
        deadline=tournament.deadline,
        paused=tournament.paused,
        paused_remaining=tournament.paused_remaining,
        commitment=turn.commitment,
        slips=slips,
        armies=_board_armies(state, general_of, name),
        provinces=_board_provinces(state),
        tables=tables,
        orders=_stored(turn, code_of),
        refused=refused,
    )
