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

The package, by concern (imports go one way, down this list; this module assembles them):
``styles`` (the clans' colours and patterns), ``geometry`` (hull, coast, clipping, Voronoi
cells), ``layout`` (reading the map JSON, placing the sites), ``svg`` (the drawing's shapes
and their SVG path strings).
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Mapping
from typing import Any

from .geometry import (
    Point,
    centroid,
    clamp,
    coast_outline,
    inner_distance,
    point_in_polygon,
    polygon_area,
    voronoi,
)
from .layout import (
    DEFAULT_HEIGHT,
    DEFAULT_WIDTH,
    LABEL_WIDTH,
    SEA,
    finite,
    fit,
    place,
    read_borders,
    read_provinces,
    separate,
)
from .styles import CLAN_STYLES, clan_label
from .svg import (
    Link,
    MapDrawing,
    ProvinceShape,
    SharedEdge,
    polygon_path,
    ridge_path,
    round_point,
    segment_path,
)

__all__ = [
    "CLAN_STYLES",
    "LABEL_WIDTH",
    "MapDrawing",
    "map_drawing",
    "point_in_polygon",
    "polygon_area",
]

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


def _draw(map_data: Mapping[str, Any]) -> MapDrawing:
    width = finite(map_data.get("width"))
    height = finite(map_data.get("height"))
    width = width if width and width > 0 else DEFAULT_WIDTH
    height = height if height and height > 0 else DEFAULT_HEIGHT
    name = map_data.get("name")
    provinces = read_provinces(map_data)
    ids = [p.id for p in provinces]
    borders = read_borders(map_data, set(ids))
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
    sites = place(provinces, neighbours, width, height)
    sites = fit(sites, width, height, inset=min(margin, 0.08 * min(width, height)) + sea)
    sites = separate(sites, width, height)
    room = min(min(x, y, width - x, height - y) for x, y in sites) - sea
    margin = max(min(margin, room), 0.025 * min(width, height))

    coast = coast_outline(sites, width, height, margin=margin)
    cells = voronoi(sites, coast)

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
        c = centroid(verts) if len(verts) >= 3 else sites[i]
        centroids.append(c)
        rooms.append(inner_distance(c, verts))
    median_room = sorted(rooms)[len(rooms) // 2]
    label_size = round(clamp(median_room * 0.3, 6.0, 16.0), 1)
    marker_size = round(label_size * 0.8, 1)

    index = {pid: i for i, pid in enumerate(ids)}
    border_pairs = {(min(index[a], index[b]), max(index[a], index[b])) for a, b in borders}

    shapes = []
    for i, prov in enumerate(provinces):
        verts, _labels = cells[i]
        cx, cy = centroids[i]
        size = clamp(rooms[i] * 0.42, min(5.0, label_size), label_size)
        # A name near the edge of the canvas is set smaller rather than cut off.
        room_x = 2 * min(cx, width - cx) - 4
        size = round(max(min(size, room_x / (LABEL_WIDTH * max(1, len(prov.name)))), 4.0), 1)
        castle_at = (cx, cy - size * 1.45) if prov.castle is not None else None
        shapes.append(
            ProvinceShape(
                id=prov.id,
                name=prov.name,
                home_clan=prov.home_clan,
                home_clan_label=clan_label(prov.home_clan),
                castle=prov.castle,
                impassable=prov.impassable,
                neighbours=tuple(neighbours[prov.id]),
                site=round_point(sites[i]),
                polygon=tuple(round_point(v) for v in verts),
                path=polygon_path(verts),
                label=round_point((cx, cy)),
                label_size=size,
                castle_at=round_point(castle_at) if castle_at else None,
                army_at=round_point((cx, cy + size * 1.85)),
            )
        )

    edges = []
    for (i, j), (p, q) in sorted(shared.items()):
        border = (i, j) in border_pairs
        path = segment_path(p, q) if border else ridge_path(p, q, label_size)
        edges.append(
            SharedEdge(
                a=ids[i],
                b=ids[j],
                start=round_point(p),
                end=round_point(q),
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
        links.append(Link(a=ids[i], b=ids[j], path=segment_path(centroids[i], centroids[j])))

    return MapDrawing(
        width=width,
        height=height,
        name=name if isinstance(name, str) else "",
        coast=polygon_path(coast),
        provinces=tuple(shapes),
        edges=tuple(edges),
        links=tuple(links),
        label_size=label_size,
        marker_size=marker_size,
        laid_out=laid_out,
    )
