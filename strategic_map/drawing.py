"""The strategic map as a drawing: province shapes, labels, castles, ridges. Pure Python.

No Django here: the geometry is computed from the map JSON alone (the same data as
``GET /api/tournaments/{id}/map``), so any imported map draws, with or without coordinates.

API (for pages, the judge console, the big screen and the history)::

    from strategic_map.drawing import map_drawing

    drawing = map_drawing(campaign.map_data)  # cached by a hash of the map JSON
    # in a template:
    {% include "strategic_map/map_svg.html" with drawing=drawing map_id="war-map" %}

``MapDrawing`` holds, on a ``width`` × ``height`` canvas (the map's own, default 1000×800):

- ``provinces``: one ``ProvinceShape`` per province, in the map's order: its Voronoi cell
  (``polygon``, ``path`` as an SVG path string), ``label`` point (the cell's centroid),
  ``castle_at`` (where the castle icon goes, or None), ``army_at`` (where army markers
  go), ``label_size`` (font size that fits the cell), and the map's facts (name, home clan,
  castle, impassable, neighbours);
- ``edges``: every pair of cells sharing an edge, with ``border`` True where the map has a
  border there; ``ridges`` are those without one (drawn as mountain strokes, ``path``);
- ``links``: borders of the map whose cells do not touch in the drawing (drawn dashed);
- ``coast``: the land's outline (the sites' convex hull grown by a margin, rounded);
- ``clan_styles``: the eight clans' colours, patterns and marker shapes (``CLAN_STYLES``),
  the one place they are defined; the include renders them as SVG ``<pattern>`` elements
  that ``static/js/map.js`` reads.

Cells are the Voronoi cells of the provinces' ``(x, y)`` sites, computed by clipping the
coast polygon with one half-plane per other site (nearest sites first, stopping as soon as
no farther site can cut the cell). Provinces without coordinates are placed first: next to
their placed neighbours, or, when the map has no coordinates at all, on a staggered grid
in breadth-first order of the borders, so neighbours mostly end up side by side.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

Point = tuple[float, float]

DEFAULT_WIDTH = 1000.0
DEFAULT_HEIGHT = 800.0
LABEL_WIDTH = 0.6  # a label's average character width, in font sizes (bold sans-serif)
SEA = 0.015  # the sea left between the coast and the frame, in parts of the canvas's side
COAST = -1  # the label of a cell edge that lies on the coast, not between two cells

# --- Clans: colours, patterns, marker shapes (the one place they are defined) ----------------


@dataclass(frozen=True)
class ClanStyle:
    """How a clan is drawn. Colour alone never tells clans apart: each has a pattern for
    the provinces it controls and a shape for its army markers (colour-blind players).

    ``colour`` has at least 3:1 contrast against the page and against white (markers,
    pattern marks); ``tint`` (the pattern's background) keeps dark label text above 7:1.
    """

    clan: str
    label: str
    """The clan's English name: the msgid its translation is looked up by (clans.py)."""
    colour: str
    tint: str
    pattern: str
    pattern_path: str
    """The marks of one 12×12 pattern tile, an SVG path."""
    pattern_fill: bool
    """True: the marks are filled shapes (dots, rings); False: stroked lines."""
    shape: str
    """Army marker shape, drawn by map.js: square, circle, diamond, triangle…"""


PATTERN_TILE = 12


def _dots(r: float, spots: Sequence[Point]) -> str:
    return " ".join(
        f"M{x - r:g} {y:g}a{r:g} {r:g} 0 1 0 {2 * r:g} 0a{r:g} {r:g} 0 1 0 {-2 * r:g} 0"
        for x, y in spots
    )


CLAN_STYLES: dict[str, ClanStyle] = {
    s.clan: s
    for s in (
        ClanStyle("crab", "Crab", "#4a6278", "#bac3cc", "bars", "M0 3H12M0 9H12", False, "square"),
        ClanStyle(
            "crane",
            "Crane",
            "#2f7db3",
            "#b0cee2",
            "dots",
            _dots(1.8, [(3, 3), (9, 9)]),
            True,
            "circle",
        ),
        ClanStyle(
            "dragon",
            "Dragon",
            "#2e7d32",
            "#b0ceb1",
            "stripes",
            "M-3 3L3 -3M0 12L12 0M9 15L15 9",
            False,
            "diamond",
        ),
        ClanStyle(
            "lion", "Lion", "#8f6a00", "#d4c69e", "columns", "M3 0V12M9 0V12", False, "triangle"
        ),
        ClanStyle(
            "phoenix",
            "Phoenix",
            "#c2410c",
            "#e8b7a3",
            "back-stripes",
            "M-3 9L3 15M0 0L12 12M9 -3L15 3",
            False,
            "triangle-down",
        ),
        ClanStyle(
            "scorpion",
            "Scorpion",
            "#a50e2d",
            "#dda3af",
            "crosshatch",
            "M0 0L12 12M12 0L0 12",
            False,
            "star",
        ),
        ClanStyle(
            "shadowlands",
            "Shadowlands",
            "#4b2a6b",
            "#bbaec7",
            "grid",
            "M0 6H12M6 0V12",
            False,
            "hexagon",
        ),
        ClanStyle(
            "unicorn",
            "Unicorn",
            "#7e4fb8",
            "#cebce4",
            "rings",
            _dots(3.2, [(6, 6)]) + " " + _dots(1.6, [(6, 6)]),
            True,
            "pentagon",
        ),
    )
}

# --- The drawing -------------------------------------------------------------------------------


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


# --- Entry point and cache -----------------------------------------------------------------------

_CACHE: dict[str, MapDrawing] = {}
_CACHE_SIZE = 32
_CACHE_LOCK = threading.Lock()


def map_drawing(map_data: Mapping[str, Any]) -> MapDrawing:
    """The drawing of ``map_data`` (the map JSON), computed once per distinct map."""
    text = json.dumps(map_data, sort_keys=True, separators=(",", ":"), default=str)
    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    with _CACHE_LOCK:
        found = _CACHE.get(key)
    if found is not None:
        return found
    drawing = _draw(map_data)
    with _CACHE_LOCK:
        if len(_CACHE) >= _CACHE_SIZE:
            _CACHE.pop(next(iter(_CACHE)))
        _CACHE[key] = drawing
    return drawing


@dataclass
class _Province:
    id: str
    name: str
    home_clan: str | None
    castle: str | None
    impassable: bool
    x: float | None
    y: float | None


def _finite(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _read_provinces(map_data: Mapping[str, Any]) -> list[_Province]:
    raw_list = map_data.get("provinces")
    provinces: list[_Province] = []
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
            _Province(
                id=pid,
                name=name,
                home_clan=home if isinstance(home, str) and home else None,
                castle=castle,
                impassable=raw.get("impassable") is True,
                x=_finite(raw.get("x")),
                y=_finite(raw.get("y")),
            )
        )
    return provinces


def _read_borders(map_data: Mapping[str, Any], ids: set[str]) -> list[tuple[str, str]]:
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


def _draw(map_data: Mapping[str, Any]) -> MapDrawing:
    width = _finite(map_data.get("width"))
    height = _finite(map_data.get("height"))
    width = width if width and width > 0 else DEFAULT_WIDTH
    height = height if height and height > 0 else DEFAULT_HEIGHT
    name = map_data.get("name")
    provinces = _read_provinces(map_data)
    ids = [p.id for p in provinces]
    borders = _read_borders(map_data, set(ids))
    neighbours: dict[str, list[str]] = {pid: [] for pid in ids}
    for a, b in borders:
        neighbours[a].append(b)
        neighbours[b].append(a)

    n = len(provinces)
    if n == 0:
        return MapDrawing(
            width=width,
            height=height,
            name=name if isinstance(name, str) else "",
            coast="",
            provinces=(),
            edges=(),
            links=(),
            label_size=14.0,
            marker_size=12.0,
            laid_out=False,
        )

    laid_out = any(p.x is None or p.y is None for p in provinces)
    spacing = math.sqrt(width * height / n)
    margin = max(0.45 * spacing, 0.025 * min(width, height))
    # The coast runs ``margin`` outside the outer sites; they sit far enough inside the
    # canvas for the whole coast and a strip of sea to show: the frame never cuts the land
    # (Asako, Asahina, Doji, Shizuka on the bundled map's edges).
    # A map of few provinces has a wide margin: it narrows rather than shrink the map.
    sea = SEA * min(width, height)
    sites = _place(provinces, neighbours, width, height)
    sites = _fit(sites, width, height, inset=min(margin, 0.08 * min(width, height)) + sea)
    sites = _separate(sites, width, height)
    room = min(min(x, y, width - x, height - y) for x, y in sites) - sea
    margin = max(min(margin, room), 0.025 * min(width, height))

    coast = _coast(sites, width, height, margin=margin)
    cells = _voronoi(sites, coast)

    # Shared edges, from either side (the smaller index first).
    shared: dict[tuple[int, int], tuple[Point, Point]] = {}
    tiny = 1e-6 * max(width, height)
    for i, (verts, labels) in enumerate(cells):
        for k, j in enumerate(labels):
            if j < 0:
                continue
            p, q = verts[k], verts[(k + 1) % len(verts)]
            if math.dist(p, q) <= tiny:
                continue
            key = (min(i, j), max(i, j))
            if key not in shared or i == key[0]:
                shared[key] = (p, q)

    rooms = []
    centroids = []
    for i, (verts, _labels) in enumerate(cells):
        c = _centroid(verts) if len(verts) >= 3 else sites[i]
        centroids.append(c)
        rooms.append(_inner_distance(c, verts))
    median_room = sorted(rooms)[len(rooms) // 2]
    label_size = round(_clamp(median_room * 0.3, 6.0, 16.0), 1)
    marker_size = round(label_size * 0.8, 1)

    index = {pid: i for i, pid in enumerate(ids)}
    border_pairs = {(min(index[a], index[b]), max(index[a], index[b])) for a, b in borders}

    shapes = []
    for i, prov in enumerate(provinces):
        verts, _labels = cells[i]
        cx, cy = centroids[i]
        size = _clamp(rooms[i] * 0.42, min(5.0, label_size), label_size)
        # A name near the edge of the canvas is set smaller rather than cut off.
        room_x = 2 * min(cx, width - cx) - 4
        size = round(max(min(size, room_x / (LABEL_WIDTH * max(1, len(prov.name)))), 4.0), 1)
        castle_at = (cx, cy - size * 1.45) if prov.castle is not None else None
        shapes.append(
            ProvinceShape(
                id=prov.id,
                name=prov.name,
                home_clan=prov.home_clan,
                home_clan_label=_clan_label(prov.home_clan),
                castle=prov.castle,
                impassable=prov.impassable,
                neighbours=tuple(neighbours[prov.id]),
                site=_round_point(sites[i]),
                polygon=tuple(_round_point(v) for v in verts),
                path=_polygon_path(verts),
                label=_round_point((cx, cy)),
                label_size=size,
                castle_at=_round_point(castle_at) if castle_at else None,
                army_at=_round_point((cx, cy + size * 1.85)),
            )
        )

    edges = []
    for (i, j), (p, q) in sorted(shared.items()):
        border = (i, j) in border_pairs
        path = f"M{_pt(p)}L{_pt(q)}" if border else _ridge_path(p, q, label_size)
        edges.append(
            SharedEdge(
                a=ids[i],
                b=ids[j],
                start=_round_point(p),
                end=_round_point(q),
                border=border,
                path=path,
            )
        )

    min_touch = 0.6 * label_size
    links = []
    for i, j in sorted(border_pairs):
        edge = shared.get((i, j))
        if edge is not None and math.dist(*edge) >= min_touch:
            continue
        links.append(Link(a=ids[i], b=ids[j], path=_link_path(centroids[i], centroids[j])))

    return MapDrawing(
        width=width,
        height=height,
        name=name if isinstance(name, str) else "",
        coast=_polygon_path(coast),
        provinces=tuple(shapes),
        edges=tuple(edges),
        links=tuple(links),
        label_size=label_size,
        marker_size=marker_size,
        laid_out=laid_out,
    )


def _clan_label(clan: str | None) -> str:
    if not clan:
        return ""
    style = CLAN_STYLES.get(clan)
    return style.label if style else clan


# --- Placing the sites -----------------------------------------------------------------------


def _place(
    provinces: Sequence[_Province],
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


def _bfs_order(
    provinces: Sequence[_Province], neighbours: Mapping[str, Sequence[str]]
) -> list[int]:
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
    provinces: Sequence[_Province],
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


def _fit(sites: list[Point], width: float, height: float, *, inset: float) -> list[Point]:
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


def _separate(sites: list[Point], width: float, height: float) -> list[Point]:
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
                _clamp(x + radius * math.cos(angle), inset, width - inset),
                _clamp(y + radius * math.sin(angle), inset, height - inset),
            )
        taken.setdefault((int(p[0] // cell), int(p[1] // cell)), []).append(p)
        out.append(p)
    return out


# --- Geometry ------------------------------------------------------------------------------------


def _clamp(value: float, low: float, high: float) -> float:
    return max(low, min(high, value))


def _cross(o: Point, a: Point, b: Point) -> float:
    return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])


def _hull(points: Sequence[Point]) -> list[Point]:
    """The convex hull, counter-clockwise (in x-right, y-up terms); 1 or 2 points if flat."""
    pts = sorted(set(points))
    if len(pts) <= 2:
        return pts
    lower: list[Point] = []
    for p in pts:
        while len(lower) >= 2 and _cross(lower[-2], lower[-1], p) <= 0:
            lower.pop()
        lower.append(p)
    upper: list[Point] = []
    for p in reversed(pts):
        while len(upper) >= 2 and _cross(upper[-2], upper[-1], p) <= 0:
            upper.pop()
        upper.append(p)
    return lower[:-1] + upper[:-1]


def _coast(sites: Sequence[Point], width: float, height: float, *, margin: float) -> list[Point]:
    """The land: the sites' hull grown by ``margin`` with round corners, within the canvas."""
    hull = _hull(sites)
    outline: list[Point] = []
    if len(hull) == 1:
        (x, y) = hull[0]
        outline = [
            (x + margin * math.cos(a * math.pi / 16), y + margin * math.sin(a * math.pi / 16))
            for a in range(32)
        ]
    else:
        m = len(hull)
        normals = []
        for k in range(m):
            (x1, y1), (x2, y2) = hull[k], hull[(k + 1) % m]
            length = math.hypot(x2 - x1, y2 - y1)
            normals.append(((y2 - y1) / length, -(x2 - x1) / length))
        for k in range(m):
            v = hull[k]
            n_in, n_out = normals[k - 1], normals[k]
            a1 = math.atan2(n_in[1], n_in[0])
            a2 = math.atan2(n_out[1], n_out[0])
            turn = (a2 - a1) % (2 * math.pi)
            steps = max(1, math.ceil(turn / (math.pi / 10)))
            for s in range(steps + 1):
                a = a1 + turn * s / steps
                outline.append((v[0] + margin * math.cos(a), v[1] + margin * math.sin(a)))
    edge = 1.0
    frame = [
        ((1.0, 0.0), edge),  # x >= edge
        ((-1.0, 0.0), -(width - edge)),  # x <= width - edge
        ((0.0, 1.0), edge),
        ((0.0, -1.0), -(height - edge)),
    ]
    labelled = (outline, [COAST] * len(outline))
    for normal, offset in frame:
        labelled = _clip(labelled, normal, offset, COAST)
    return _dedupe(labelled)[0]


Cell = tuple[list[Point], list[int]]


def _clip(cell: Cell, normal: Point, offset: float, label: int) -> Cell:
    """Keep the part of a convex cell where ``normal · p >= offset``; the cut is ``label``."""
    verts, labels = cell
    out_v: list[Point] = []
    out_l: list[int] = []
    m = len(verts)
    if m == 0:
        return cell
    nx, ny = normal
    values = [nx * x + ny * y - offset for x, y in verts]
    eps = 1e-9 * (abs(offset) + 1.0)
    for k in range(m):
        p, q = verts[k], verts[(k + 1) % m]
        vp, vq = values[k], values[(k + 1) % m]
        p_in, q_in = vp >= -eps, vq >= -eps
        if p_in:
            out_v.append(p)
            out_l.append(labels[k])
            if not q_in:
                t = vp / (vp - vq)
                out_v.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
                out_l.append(label)
        elif q_in:
            t = vp / (vp - vq)
            out_v.append((p[0] + t * (q[0] - p[0]), p[1] + t * (q[1] - p[1])))
            out_l.append(labels[k])
    return out_v, out_l


def _dedupe(cell: Cell) -> Cell:
    """Drop vertices that repeat the next one (the zero-length edge goes with them)."""
    verts, labels = cell
    if len(verts) < 2:
        return cell
    scale = max(max(abs(x), abs(y)) for x, y in verts) + 1.0
    tiny = 1e-9 * scale
    keep_v: list[Point] = []
    keep_l: list[int] = []
    m = len(verts)
    for k in range(m):
        if math.dist(verts[k], verts[(k + 1) % m]) > tiny:
            keep_v.append(verts[k])
            keep_l.append(labels[k])
    return keep_v, keep_l


def _voronoi(sites: Sequence[Point], coast: Sequence[Point]) -> list[Cell]:
    """Each site's Voronoi cell within the (convex) coast; edge labels name the neighbour."""
    cells: list[Cell] = []
    base: Cell = (list(coast), [COAST] * len(coast))
    for i, si in enumerate(sites):
        others = sorted(
            (j for j in range(len(sites)) if j != i), key=lambda j: math.dist(si, sites[j])
        )
        cell = base
        reach = max((math.dist(si, v) for v in cell[0]), default=0.0)
        for j in others:
            sj = sites[j]
            if math.dist(si, sj) / 2 > reach:
                break  # no farther site's bisector can cut the cell
            # Closer to si than to sj: (sj - si) · p <= (|sj|² - |si|²) / 2.
            dx, dy = sj[0] - si[0], sj[1] - si[1]
            offset = ((sj[0] ** 2 + sj[1] ** 2) - (si[0] ** 2 + si[1] ** 2)) / 2
            cell = _dedupe(_clip(cell, (-dx, -dy), -offset, j))
            reach = max((math.dist(si, v) for v in cell[0]), default=0.0)
        cells.append(cell)
    return cells


def _area(verts: Sequence[Point]) -> float:
    m = len(verts)
    return 0.5 * sum(
        verts[k][0] * verts[(k + 1) % m][1] - verts[(k + 1) % m][0] * verts[k][1] for k in range(m)
    )


def _centroid(verts: Sequence[Point]) -> Point:
    area = _area(verts)
    m = len(verts)
    if abs(area) < 1e-12:
        return (sum(x for x, _ in verts) / m, sum(y for _, y in verts) / m)
    cx = cy = 0.0
    for k in range(m):
        (x1, y1), (x2, y2) = verts[k], verts[(k + 1) % m]
        f = x1 * y2 - x2 * y1
        cx += (x1 + x2) * f
        cy += (y1 + y2) * f
    return (cx / (6 * area), cy / (6 * area))


def _segment_distance(p: Point, a: Point, b: Point) -> float:
    dx, dy = b[0] - a[0], b[1] - a[1]
    length2 = dx * dx + dy * dy
    if length2 == 0:
        return math.dist(p, a)
    t = _clamp(((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2, 0.0, 1.0)
    return math.dist(p, (a[0] + t * dx, a[1] + t * dy))


def _inner_distance(p: Point, verts: Sequence[Point]) -> float:
    """How far ``p`` is from the cell's outline (the room around the label)."""
    m = len(verts)
    if m < 3:
        return 0.0
    return min(_segment_distance(p, verts[k], verts[(k + 1) % m]) for k in range(m))


def point_in_polygon(p: Point, verts: Sequence[Point]) -> bool:
    """Whether ``p`` is inside the polygon (even-odd rule; for tests and callers)."""
    x, y = p
    inside = False
    m = len(verts)
    for k in range(m):
        (x1, y1), (x2, y2) = verts[k], verts[(k + 1) % m]
        if (y1 > y) != (y2 > y):
            cross_x = x1 + (y - y1) * (x2 - x1) / (y2 - y1)
            if x < cross_x:
                inside = not inside
    return inside


def polygon_area(verts: Sequence[Point]) -> float:
    """The polygon's area (positive whatever its orientation)."""
    return abs(_area(verts))


# --- SVG path strings ----------------------------------------------------------------------------


def _num(value: float) -> str:
    text = f"{value:.1f}"
    if text.endswith(".0"):
        text = text[:-2]
    return "0" if text == "-0" else text


def _pt(p: Point) -> str:
    return f"{_num(p[0])} {_num(p[1])}"


def _round_point(p: Point) -> Point:
    return (round(p[0], 1), round(p[1], 1))


def _polygon_path(verts: Sequence[Point]) -> str:
    if not verts:
        return ""
    return "M" + "L".join(_pt(v) for v in verts) + "Z"


def _ridge_path(p: Point, q: Point, size: float) -> str:
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


def _link_path(a: Point, b: Point) -> str:
    return f"M{_pt(a)}L{_pt(b)}"
