"""Reads of the strategic map for pages and the API.

The stored map JSON was validated on import (``services.map_import``); these readers still
tolerate missing optional fields so a page never fails on a drawing hint.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from strategic_map.clans import clan_name
from strategic_map.models import Map


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
