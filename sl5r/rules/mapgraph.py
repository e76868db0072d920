"""The strategic map as a graph: provinces, borders, castles, home clans (R2).

A map is data. ``map_from_dict`` validates a JSON-shaped map and builds an immutable
``GameMap`` with its adjacency precomputed, so that adjudicating a turn never re-reads the
map. The bundled Rokugan map lives beside this module in ``maps/rokugan.json``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Any

from .clans import CLANS, is_clan
from .errors import MapError
from .frozen import quick_init
from .jsonvalue import json_value_problem, json_value_storable, number_storable, text_storable

MAP_KEYS = frozenset({"id", "name", "width", "height", "clans", "provinces", "borders"})
PROVINCE_KEYS = frozenset({"id", "name", "home_clan", "castle", "impassable", "x", "y"})
CLAN_SET = frozenset(CLANS)


@quick_init
@dataclass(frozen=True, slots=True)
class Province:
    id: str
    name: str
    home_clan: str | None
    castle: str | None
    impassable: bool = False
    x: float | None = None
    y: float | None = None

    @property
    def has_castle(self) -> bool:
        return self.castle is not None


@dataclass(frozen=True, slots=True)
class GameMap:
    id: str
    name: str
    provinces: Mapping[str, Province]
    neighbours: Mapping[str, frozenset[str]]
    borders: tuple[tuple[str, str], ...]
    width: float | None = None
    height: float | None = None
    castles: frozenset[str] = field(default=frozenset())
    home_provinces: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def adjacent(self, a: str, b: str) -> bool:
        return b in self.neighbours.get(a, ())

    def starting_castles(self, clan: str) -> int:
        """Castles a clan starts with: its castle home provinces (R2, R7 Small Farms)."""
        return sum(1 for pid in self.home_provinces.get(clan, ()) if pid in self.castles)

    def blocked_provinces(self, excluded_clans: Iterable[str] = ()) -> frozenset[str]:
        """Provinces nothing may enter: impassable terrain and excluded clans' lands (R1, R2)."""
        blocked = {pid for pid, p in self.provinces.items() if p.impassable}
        for clan in excluded_clans:
            blocked.update(self.home_provinces.get(clan, ()))
        return frozenset(blocked)

    def initial_control(self, excluded_clans: Iterable[str] = ()) -> dict[str, str | None]:
        """Who controls what at the start (R3.4): every clan its home provinces."""
        excluded = set(excluded_clans)
        return {
            pid: (p.home_clan if p.home_clan not in excluded else None)
            for pid, p in self.provinces.items()
        }

    def to_dict(self) -> dict[str, Any]:
        provinces: list[dict[str, Any]] = []
        for p in self.provinces.values():
            row: dict[str, Any] = {
                "id": p.id,
                "name": p.name,
                "home_clan": p.home_clan,
                "castle": p.castle,
            }
            if p.impassable:
                row["impassable"] = True
            if p.x is not None:
                row["x"] = p.x
            if p.y is not None:
                row["y"] = p.y
            provinces.append(row)
        data: dict[str, Any] = {"id": self.id, "name": self.name}
        if self.width is not None:
            data["width"] = self.width
        if self.height is not None:
            data["height"] = self.height
        data["clans"] = list(CLANS)
        data["provinces"] = provinces
        data["borders"] = [list(b) for b in self.borders]
        return data


def _number(value: object, place: str) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise MapError(place, f"must be a number, not {json.dumps(value)}")
    return float(value)


def _province(raw: object, place: str) -> Province:
    if not isinstance(raw, Mapping):
        raise MapError(place, "must be an object")
    for key in raw:
        if key not in PROVINCE_KEYS:
            raise MapError(f"{place}.{key}", "unknown field")
    pid = raw.get("id")
    if not isinstance(pid, str) or not pid.strip():
        raise MapError(f"{place}.id", "must be a non-empty string")
    if "|" in pid:
        raise MapError(f"{place}.id", f'"{pid}" may not contain "|"')
    name = raw.get("name", pid)
    if not isinstance(name, str):
        raise MapError(f"{place}.name", "must be a string")
    home = raw.get("home_clan")
    if home is not None and not is_clan(home):
        raise MapError(f"{place}.home_clan", f"unknown clan {json.dumps(home)}")
    castle_raw = raw.get("castle")
    castle: str | None
    if castle_raw is None or castle_raw is False:
        castle = None
    elif castle_raw is True:
        castle = name
    elif isinstance(castle_raw, str) and castle_raw.strip():
        castle = castle_raw
    else:
        raise MapError(f"{place}.castle", "must be true, false, null or the castle's name")
    impassable = raw.get("impassable", False)
    if not isinstance(impassable, bool):
        raise MapError(f"{place}.impassable", "must be true or false")
    return Province(
        id=pid,
        name=name,
        home_clan=home,
        castle=castle,
        impassable=impassable,
        x=_number(raw.get("x"), f"{place}.x"),
        y=_number(raw.get("y"), f"{place}.y"),
    )


def _province_quick(raw: object) -> Province | None:
    """The province of a plainly valid row, without naming places; None: ``_province`` checks.

    Accepts exactly what ``_province`` accepts among plain dicts, strings, bools and numbers
    that could be stored (``json_value_problem``), and leaves everything else (every error
    included) to it.
    """
    if type(raw) is not dict or not raw.keys() <= PROVINCE_KEYS:
        return None
    get = raw.get
    pid = get("id")
    name = get("name", pid)
    home = get("home_clan")
    castle = get("castle")
    impassable = get("impassable", False)
    x = get("x")
    y = get("y")
    if (
        type(pid) is not str
        or not pid.strip()
        or "|" in pid
        or not text_storable(pid)
        or type(name) is not str
        or not text_storable(name)
        or not (home is None or (type(home) is str and home in CLAN_SET))
        or not (impassable is False or impassable is True)
        or not (x is None or number_storable(x))
        or not (y is None or number_storable(y))
    ):
        return None
    if castle is None or castle is False:
        castle = None
    elif castle is True:
        castle = name
    elif type(castle) is not str or not castle.strip() or not text_storable(castle):
        return None
    return Province(
        id=pid,
        name=name,
        home_clan=home,
        castle=castle,
        impassable=impassable,
        x=None if x is None else float(x),
        y=None if y is None else float(y),
    )


class _Unusual(Exception):
    """A map the quick pass of ``map_from_dict`` leaves to the exact checks."""


def map_from_dict(data: Mapping[str, Any], *, place: str = "map") -> GameMap:
    """Validate a JSON-shaped map and build it; ``MapError`` names the first problem."""
    if not isinstance(data, Mapping):
        raise MapError(place, "must be an object")
    # A quick pass first, which checks that every value can be stored as it reads it; any
    # problem or anything unusual, and the exact checks run from the start, in their order.
    try:
        return _map_build(data, place, quick=True)
    except (_Unusual, MapError):
        pass
    # What the database and the pages could not hold (NaN, a lone surrogate ...), anywhere.
    found = json_value_problem(dict(data), place=place)
    if found is not None:
        raise MapError(found.place, found.message)
    return _map_build(data, place, quick=False)


def _map_build(data: Mapping[str, Any], place: str, *, quick: bool) -> GameMap:
    """The checks and the map after ``json_value_problem``; ``quick``: that has not run, so
    every value read is checked as it is read, and ``_Unusual`` raised for anything odd."""
    if quick:
        rest = {k: v for k, v in data.items() if k != "provinces" and k != "borders"}
        if type(data) is not dict or not json_value_storable(rest):
            raise _Unusual
    for key in data:
        if key not in MAP_KEYS:
            raise MapError(f"{place}.{key}", "unknown field")
    raw_provinces = data.get("provinces")
    if not isinstance(raw_provinces, list) or not raw_provinces:
        raise MapError(f"{place}.provinces", "must be a non-empty list")
    clans = data.get("clans", list(CLANS))
    if not isinstance(clans, list) or any(not is_clan(c) for c in clans):
        raise MapError(f"{place}.clans", f"must list clans among {', '.join(CLANS)}")

    provinces: dict[str, Province] = {}
    for i, raw in enumerate(raw_provinces):
        province = _province_quick(raw)
        if province is None:
            if quick:
                raise _Unusual
            province = _province(raw, f"{place}.provinces[{i}]")
        if province.id in provinces:
            raise MapError(f"{place}.provinces[{i}].id", f'"{province.id}" is given twice')
        provinces[province.id] = province

    raw_borders = data.get("borders", [])
    if not isinstance(raw_borders, list):
        raise MapError(f"{place}.borders", "must be a list of [a, b] pairs")
    neighbours: dict[str, set[str]] = {pid: set() for pid in provinces}
    borders: list[tuple[str, str]] = []
    for i, raw_border in enumerate(raw_borders):
        # The usual border, checked without naming its place; anything else below.
        if type(raw_border) is list and len(raw_border) == 2:
            a, b = raw_border
            if type(a) is str and type(b) is str and a != b:
                near_a = neighbours.get(a)
                near_b = neighbours.get(b)
                if near_a is not None and near_b is not None and b not in near_a:
                    near_a.add(b)
                    near_b.add(a)
                    borders.append((a, b))
                    continue
        if quick:
            raise _Unusual
        bplace = f"{place}.borders[{i}]"
        if (
            not isinstance(raw_border, list)
            or len(raw_border) != 2
            or not all(isinstance(x, str) for x in raw_border)
        ):
            raise MapError(bplace, "must be a pair of province ids")
        a, b = raw_border
        for end in (a, b):
            if end not in provinces:
                raise MapError(bplace, f'unknown province "{end}"')
        if a == b:
            raise MapError(bplace, f'joins "{a}" to itself')
        if b in neighbours[a]:
            raise MapError(bplace, f'the border "{a}"–"{b}" is given twice')
        neighbours[a].add(b)
        neighbours[b].add(a)
        borders.append((a, b))

    _check_connected(provinces, neighbours, place)

    homes: dict[str, list[str]] = {}
    for p in provinces.values():
        if p.home_clan is not None:
            homes.setdefault(p.home_clan, []).append(p.id)
    return GameMap(
        id=str(data.get("id", "")),
        name=str(data.get("name", data.get("id", ""))),
        provinces=provinces,
        neighbours={pid: frozenset(ns) for pid, ns in neighbours.items()},
        borders=tuple(borders),
        width=_number(data.get("width"), f"{place}.width"),
        height=_number(data.get("height"), f"{place}.height"),
        castles=frozenset(pid for pid, p in provinces.items() if p.has_castle),
        home_provinces={clan: tuple(ids) for clan, ids in homes.items()},
    )


def _check_connected(
    provinces: Mapping[str, Province], neighbours: Mapping[str, set[str]], place: str
) -> None:
    start = next(iter(provinces))
    seen = {start}
    stack = [start]
    while stack:
        for n in neighbours[stack.pop()]:
            if n not in seen:
                seen.add(n)
                stack.append(n)
    if len(seen) != len(provinces):
        cut_off = [pid for pid in provinces if pid not in seen]
        shown = ", ".join(f'"{pid}"' for pid in cut_off[:10])
        more = f" and {len(cut_off) - 10} more" if len(cut_off) > 10 else ""
        raise MapError(
            f"{place}.borders",
            f'the map is not connected: {shown}{more} cannot be reached from "{start}"',
        )


@cache
def rokugan_map() -> GameMap:
    """The bundled default map (R2): 39 provinces, 85 borders."""
    text = resources.files(__package__).joinpath("maps/rokugan.json").read_text("utf-8")
    return map_from_dict(json.loads(text), place="rokugan")
