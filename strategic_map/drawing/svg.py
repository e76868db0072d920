"""The drawing as the SVG include renders it: shapes with SVG path strings, and those paths.

``MapDrawing`` is what ``strategic_map/map_svg.html`` and ``map_legend.html`` are given;
coordinates are rounded to one decimal, the precision the paths are written with.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from .geometry import Point
from .styles import CLAN_STYLES, ClanStyle


@dataclass(frozen=True)
class ProvinceShape:
    id: str
    name: str
    home_clan: str | None
    home_clan_label: str
    """The home clan's English name (the msgid of its translation), ``""`` when unaligned."""
    castle: str | None
    impassable: bool
    neighbours: tuple[str, ...]
    site: Point
    polygon: tuple[Point, ...]
    path: str
    label: Point
    label_size: float
    castle_at: Point | None
    army_at: Point

    @property
    def castle_box(self) -> tuple[float, float, float] | None:
        """Where the castle icon goes: its top-left corner and its size."""
        if self.castle_at is None:
            return None
        size = round(self.label_size * 1.3, 1)
        return (
            round(self.castle_at[0] - size / 2, 1),
            round(self.castle_at[1] - size / 2, 1),
            size,
        )

    @property
    def neighbour_ids(self) -> str:
        """The neighbours as one space-separated attribute value."""
        return " ".join(self.neighbours)


@dataclass(frozen=True)
class SharedEdge:
    """Two cells that touch along a segment; ``border`` is whether the map joins them."""

    a: str
    b: str
    start: Point
    end: Point
    border: bool
    path: str
    """A ridge's mountain strokes; for a border, the segment itself."""

    @property
    def length(self) -> float:
        return math.dist(self.start, self.end)


@dataclass(frozen=True)
class Link:
    """A border of the map whose cells do not touch in the drawing (a pass, a ford)."""

    a: str
    b: str
    path: str


@dataclass(frozen=True)
class MapDrawing:
    width: float
    height: float
    name: str
    coast: str
    provinces: tuple[ProvinceShape, ...]
    edges: tuple[SharedEdge, ...]
    links: tuple[Link, ...]
    label_size: float
    marker_size: float
    laid_out: bool
    """True when some coordinates were missing and were made up."""
    clan_styles: tuple[ClanStyle, ...] = field(default=tuple(CLAN_STYLES.values()))

    @property
    def view_box(self) -> str:
        return f"0 0 {_num(self.width)} {_num(self.height)}"

    @property
    def ridges(self) -> tuple[SharedEdge, ...]:
        return tuple(e for e in self.edges if not e.border)

    @property
    def impassable(self) -> tuple[ProvinceShape, ...]:
        return tuple(p for p in self.provinces if p.impassable)

    @property
    def castles(self) -> tuple[ProvinceShape, ...]:
        return tuple(p for p in self.provinces if p.castle_at is not None)

    def province(self, province_id: str) -> ProvinceShape | None:
        return next((p for p in self.provinces if p.id == province_id), None)


def _num(value: float) -> str:
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def _pt(p: Point) -> str:
    return f"{_num(p[0])} {_num(p[1])}"


def round_point(p: Point) -> Point:
    return (round(p[0], 1), round(p[1], 1))


def polygon_path(verts: Sequence[Point]) -> str:
    if not verts:
        return ""
    return "M" + "L".join(_pt(v) for v in verts) + "Z"


def ridge_path(p: Point, q: Point, size: float) -> str:
    """Mountain strokes along a shared edge: a row of small peaks standing on it."""
    length = math.dist(p, q)
    if length < 0.8 * size:
        return f"M{_pt(p)}L{_pt(q)}"  # too short for a peak: the ridge line alone
    ux, uy = (q[0] - p[0]) / length, (q[1] - p[1]) / length
    # Peaks point "up" on the page, whichever way the edge runs.
    nx, ny = -uy, ux
    if ny > 0 or (ny == 0 and nx < 0):
        nx, ny = -nx, -ny
    width = 1.6 * size
    count = max(1, round(length * 0.75 / width))
    height = 0.75 * size
    parts = []
    for k in range(count):
        centre = length * (k + 0.5) / count
        half = min(width, length / count) / 2
        b1 = (p[0] + ux * (centre - half), p[1] + uy * (centre - half))
        b2 = (p[0] + ux * (centre + half), p[1] + uy * (centre + half))
        top = (
            p[0] + ux * centre + nx * height * (1.0 if k % 2 == 0 else 0.75),
            p[1] + uy * centre + ny * height * (1.0 if k % 2 == 0 else 0.75),
        )
        parts.append(f"M{_pt(b1)}L{_pt(top)}L{_pt(b2)}")
    return "".join(parts)


def segment_path(a: Point, b: Point) -> str:
    return f"M{_pt(a)}L{_pt(b)}"
