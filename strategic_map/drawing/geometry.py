"""Pure plane geometry for the map drawing: hulls, the coast, clipping, Voronoi cells.

Points are ``(x, y)`` on the canvas (y down, as in SVG). A cell is a convex polygon whose
edges carry a label: the index of the site on the other side, or ``COAST``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

Point = tuple[float, float]
Cell = tuple[list[Point], list[int]]

COAST = -1  # the label of a cell edge that lies on the coast, not between two cells


def clamp(value: float, low: float, high: float) -> float:
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


def coast_outline(
    sites: Sequence[Point], width: float, height: float, *, margin: float
) -> list[Point]:
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


def voronoi(sites: Sequence[Point], coast: Sequence[Point]) -> list[Cell]:
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


def centroid(verts: Sequence[Point]) -> Point:
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
    t = clamp(((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / length2, 0.0, 1.0)
    return math.dist(p, (a[0] + t * dx, a[1] + t * dy))


def inner_distance(p: Point, verts: Sequence[Point]) -> float:
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
