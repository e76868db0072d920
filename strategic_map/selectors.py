"""Reads of the strategic map for pages and the API.

The stored map JSON was validated on import (``services.map_import``); these readers still
tolerate missing optional fields so a page never fails on a drawing hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from sl5r.rules.mapgraph import GameMap, map_from_dict
from sl5r.rules.roles import general_visible_provinces
from sl5r.rules.turn import Army as RulesArmy
from sl5r.rules.turn import Order as RulesOrder
from sl5r.rules.turn import Settings, TurnState
from strategic_map.board import ArmyLike, Board
from strategic_map.clans import clan_name
from strategic_map.models import Army, Campaign, Map, Order, Turn


@dataclass(frozen=True)
class MapSummary:
    slug: str
    name: str
    province_count: int
    border_count: int


@dataclass(frozen=True)
class ProvinceRow:
    id: str
    name: str
    home_clan: str | None
    home_clan_name: str
    castle: str | None
    """The castle's name, ``""`` for an unnamed castle, ``None`` for no castle."""
    impassable: bool


@dataclass(frozen=True)
class BorderRow:
    a: ProvinceRow
    b: ProvinceRow


@dataclass(frozen=True)
class MapDetail:
    slug: str
    name: str
    provinces: list[ProvinceRow]
    borders: list[BorderRow]


def _items(data: object, key: str) -> Sequence[object]:
    value = data.get(key) if isinstance(data, Mapping) else None
    return value if isinstance(value, list) else []


def _province_row(raw: object) -> ProvinceRow:
    fields: Mapping[str, object] = raw if isinstance(raw, Mapping) else {}
    province_id = str(fields.get("id", ""))
    home_clan = fields.get("home_clan")
    home_clan = home_clan if isinstance(home_clan, str) and home_clan else None
    castle = fields.get("castle")
    if isinstance(castle, str):
        castle_name: str | None = castle
    elif castle is True:
        castle_name = ""
    else:
        castle_name = None
    name = fields.get("name")
    return ProvinceRow(
        id=province_id,
        name=name if isinstance(name, str) and name else province_id,
        home_clan=home_clan,
        home_clan_name=clan_name(home_clan) if home_clan else "",
        castle=castle_name,
        impassable=fields.get("impassable") is True,
    )


def map_list() -> list[MapSummary]:
    """Every loaded map with its province and border counts, ordered by name."""
    return [
        MapSummary(
            slug=map_obj.slug,
            name=map_obj.name,
            province_count=len(_items(map_obj.data, "provinces")),
            border_count=len(_items(map_obj.data, "borders")),
        )
        for map_obj in Map.objects.order_by("name", "slug")
    ]


def map_detail(*, slug: str) -> MapDetail | None:
    """The map ``slug`` as rows for a page; ``None`` when there is no such map."""
    map_obj = Map.objects.filter(slug=slug).first()
    if map_obj is None:
        return None
    provinces = [_province_row(raw) for raw in _items(map_obj.data, "provinces")]
    by_id = {province.id: province for province in provinces}
    borders: list[BorderRow] = []
    for raw in _items(map_obj.data, "borders"):
        if not (isinstance(raw, list) and len(raw) == 2):
            continue
        a, b = (by_id.get(str(end)) or _province_row({"id": str(end)}) for end in raw)
        borders.append(BorderRow(a=a, b=b))
    # Clan by clan, unaligned provinces last.
    provinces.sort(key=lambda row: (row.home_clan is None, row.home_clan_name, row.name))
    return MapDetail(slug=map_obj.slug, name=map_obj.name, provinces=provinces, borders=borders)


# --- Campaigns: the engine's view of the stored board -------------------------------------

_MAP_CACHE: dict[tuple[int, int], GameMap] = {}


def campaign_game_map(campaign: Campaign) -> GameMap:
    """The campaign's map as the engine's graph; built once per process, it never changes."""
    key = (campaign.pk, campaign.map_id)
    game_map = _MAP_CACHE.get(key)
    if game_map is None:
        game_map = map_from_dict(campaign.map_data)
        _MAP_CACHE[key] = game_map
    return game_map


def campaign_settings(campaign: Campaign) -> Settings:
    return Settings(
        clan_abilities=campaign.clan_abilities,
        excluded_clans=frozenset(campaign.excluded_clans),
    )


@dataclass(frozen=True, slots=True)
class ArmyIdentity:
    code: str
    clan: str


def board_armies(campaign: Campaign, armies: Sequence[ArmyLike]) -> list[RulesArmy]:
    """The engine's armies: those on the board (deployed, or destroyed and waiting)."""
    return Board.of(campaign).rules_armies(armies)


def campaign_turn_state(
    campaign: Campaign, *, turn: int, armies: Sequence[ArmyLike] | None = None
) -> TurnState:
    """The board at this moment as the engine's input for turn ``turn``."""
    if armies is None:
        # Codes and clans only: this runs for every order given, and building 48 model
        # instances cost more than the query.
        armies = [
            ArmyIdentity(code=code, clan=clan)
            for code, clan in Army.objects.filter(campaign=campaign)
            .order_by("id")
            .values_list("code", "clan")
        ]
    board = Board.of(campaign)
    return TurnState(
        game_map=campaign_game_map(campaign),
        turn=turn,
        armies=tuple(board.rules_armies(armies)),
        control=board.control(),
        settings=campaign_settings(campaign),
    )


def order_to_rules(order: Order, code: str) -> RulesOrder:
    return RulesOrder(
        army=code,
        move=tuple(order.path) if order.kind == Order.Kind.MOVE else (),
        reform=order.reform if order.kind == Order.Kind.REFORM else None,
        claim=order.claim,
        on_swap="stay" if order.on_swap == Order.OnSwap.STAY else "advance",
    )


def turn_current_orders(turn: Turn) -> dict[int, Order]:
    """The order that counts for each army this turn (the latest; withdrawals removed)."""
    latest: dict[int, Order] = {}
    for order in Order.objects.filter(turn=turn).order_by("id"):
        latest[order.army_id] = order
    return {aid: o for aid, o in latest.items() if o.kind != Order.Kind.WITHDRAW}


def campaign_open_turn(campaign: Campaign) -> Turn | None:
    return Turn.objects.filter(campaign=campaign, status=Turn.Status.OPEN).order_by("-id").first()


def turn_state_as_seen_by(state: TurnState, code: str) -> TurnState:
    """The board as a General who may not see the map knows it (R1.1): his army alone, and
    every province he cannot see held by his own clan.

    So checking his order, or offering him the castles to reform in, can refuse or leave
    out only what he may know: never where other armies are, or which of his clan's
    castles the enemy has taken (a reform, R9). The turn applies every rule at the
    deadline, and he reads why afterwards.
    """
    own = next(a for a in state.armies if a.id == code)
    seen = general_visible_provinces(state.game_map, own.province)
    control = {p: c if p in seen else own.clan for p, c in state.control.items()}
    return replace(state, armies=[own], control=control)
