"""Where things go: reading the map JSON and placing every province's site on the canvas.

Provinces without coordinates are placed first: next to their placed neighbours, or, when
the map has no coordinates at all, on a staggered grid in breadth-first order of the borders,
so neighbours mostly end up side by side. The sites are then fitted into the canvas and kept
apart.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .geometry import Point, clamp

DEFAULT_WIDTH = 1000.0
DEFAULT_HEIGHT = 800.0
LABEL_WIDTH = 0.6  # a label's average character width, in font sizes (bold sans-serif)
SEA = 0.015  # the sea left between the coast and the frame, in parts of the canvas's side


@dataclass
class Province:
    id: str
    name: str
    home_clan: str | None
    castle: str | None
    impassable: bool
    x: float | None
    y: float | None


def finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def read_provinces(map_data: Mapping[str, Any]) -> list[Province]:
    raw_list = map_data.get("provinces")
    provinces: list[Province] = []
    seen: set[str] = set()
    for raw in raw_list if isinstance(raw_list, list) else []:
        if not isinstance(raw, Mapping):
            continue
        pid = raw.get("id")
        if not isinstance(pid, str) or not pid or pid in seen:
            continue
        seen.add(pid)
        name = raw.get("name")
        name = name if isinstance(name, str) and name else pid
        home = raw.get("home_clan")
        castle_raw = raw.get("castle")
        if castle_raw is True:
            castle: str | None = name
        elif isinstance(castle_raw, str) and castle_raw.strip():
            castle = castle_raw
        else:
            castle = None
        provinces.append(
            Province(
                id=pid,
                name=name,
                home_clan=home if isinstance(home, str) and home else None,
                castle=castle,
                impassable=raw.get("impassable") is True,
                x=finite(raw.get("x")),
                y=finite(raw.get("y")),
            )
        )
    return provinces


def read_borders(map_data: Mapping[str, Any], ids: set[str]) -> list[tuple[str, str]]:
    raw_list = map_data.get("borders")
    borders: list[tuple[str, str]] = []
    seen: set[frozenset[str]] = set()
    for raw in raw_list if isinstance(raw_list, list) else []:
        if not isinstance(raw, (list, tuple)) or len(raw) != 2:
            continue
        a, b = (str(end) for end in raw)
        pair = frozenset((a, b))
        if a == b or a not in ids or b not in ids or pair in seen:
            continue
        seen.add(pair)
        borders.append((a, b))
    return borders


def place(
    provinces: Sequence[Province],
    neighbours: Mapping[str, Sequence[str]],
    width: float,
    height: float,
) -> list[Point]:
    """Every province's site: its own coordinates, or made up deterministically."""
    known: dict[str, Point] = {
        p.id: (p.x, p.y) for p in provinces if p.x is not None and p.y is not None
    }
    if not known:
        return _grid_layout(provinces, neighbours, width, height)
    spacing = math.sqrt(width * height / len(provinces))
    placed = dict(known)
    missing = [p.id for p in provinces if p.id not in placed]
    # Next to the placed neighbours, spreading outwards one ring at a time.
    while missing:
        progress = []
        for k, pid in enumerate(missing):
            around = [placed[q] for q in neighbours[pid] if q in placed]
            if not around:
                continue
            angle = 2.399963 * (k + 1)  # the golden angle: no two land on one spot
            mx = sum(x for x, _y in around) / len(around)
            my = sum(y for _x, y in around) / len(around)
            progress.append(
                (pid, (mx + 0.4 * spacing * math.cos(angle), my + 0.4 * spacing * math.sin(angle)))
            )
        if not progress:
            break
        placed.update(progress)
        done = {pid for pid, _ in progress}
        missing = [pid for pid in missing if pid not in done]
    # Provinces with no way to a placed one: a row along the bottom of the canvas.
    for k, pid in enumerate(missing):
        placed[pid] = ((k + 0.5) * width / len(missing), height * 0.97)
    return [placed[p.id] for p in provinces]


def _bfs_order(provinces: Sequence[Province], neighbours: Mapping[str, Sequence[str]]) -> list[int]:
    index = {p.id: i for i, p in enumerate(provinces)}
    seen: set[int] = set()
    order: list[int] = []
    for start in range(len(provinces)):
        if start in seen:
            continue
        seen.add(start)
        queue = deque([start])
        while queue:
            i = queue.popleft()
            order.append(i)
            for q in neighbours[provinces[i].id]:
                j = index[q]
                if j not in seen:
                    seen.add(j)
                    queue.append(j)
    return order


def _grid_layout(
    provinces: Sequence[Province],
    neighbours: Mapping[str, Sequence[str]],
    width: float,
    height: float,
) -> list[Point]:
    """A staggered grid, filled row by row in a serpentine, in breadth-first order."""
    n = len(provinces)
    cols = max(1, math.ceil(math.sqrt(n * width / height)))
    rows = math.ceil(n / cols)
    cw, ch = width / (cols + 0.5), height / rows
    sites: list[Point] = [(0.0, 0.0)] * n
    for slot, i in enumerate(_bfs_order(provinces, neighbours)):
        row, col = divmod(slot, cols)
        if row % 2:
            col = cols - 1 - col
        shift = 0.5 if row % 2 else 0.0
        sites[i] = ((col + 0.5 + shift) * cw, (row + 0.5) * ch)
    return sites


def fit(sites: list[Point], width: float, height: float, *, inset: float) -> list[Point]:
    """Scale the sites into the canvas less ``inset`` (keeping their proportions) if any
    lies outside it."""
    inset = min(inset, 0.45 * min(width, height))
    xs = [x for x, _y in sites]
    ys = [y for _x, y in sites]
    inside_x = min(xs) >= inset and max(xs) <= width - inset
    if inside_x and min(ys) >= inset and max(ys) <= height - inset:
        return sites
    span_x = max(xs) - min(xs)
    span_y = max(ys) - min(ys)
    room_x, room_y = width - 2 * inset, height - 2 * inset
    scale = min(room_x / span_x if span_x else math.inf, room_y / span_y if span_y else math.inf)
    if not math.isfinite(scale):
        scale = 1.0
    off_x = inset + (room_x - span_x * scale) / 2
    off_y = inset + (room_y - span_y * scale) / 2
    return [((x - min(xs)) * scale + off_x, (y - min(ys)) * scale + off_y) for x, y in sites]


def separate(sites: list[Point], width: float, height: float) -> list[Point]:
    """Move a site that (nearly) coincides with an earlier one a little aside."""
    close = 1e-3 * min(width, height)
    step = 0.01 * min(width, height)
    inset = 0.03 * min(width, height)
    cell = max(close, 1e-9)
    taken: dict[tuple[int, int], list[Point]] = {}

    def clash(p: Point) -> bool:
        gx, gy = int(p[0] // cell), int(p[1] // cell)
        return any(
            math.dist(p, q) < close
            for dx in (-1, 0, 1)
            for dy in (-1, 0, 1)
            for q in taken.get((gx + dx, gy + dy), ())
        )

    out: list[Point] = []
    for x, y in sites:
        p = (x, y)
        k = 0
        while clash(p):
            k += 1
            angle = 2.399963 * k
            radius = step * math.sqrt(k)
            p = (
                clamp(x + radius * math.cos(angle), inset, width - inset),
                clamp(y + radius * math.sin(angle), inset, height - inset),
            )
        taken.setdefault((int(p[0] // cell), int(p[1] // cell)), []).append(p)
        out.append(p)
    return out
