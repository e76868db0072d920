"""The campaign report's pictures, drawn on the server as plain SVG (the report has no
script): each turn's map as ``static/js/map.js`` would draw it, and the points after each
turn as ``static/js/screen.js`` draws its chart.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.template.loader import render_to_string
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, MapDrawing

# --- The map of a turn -------------------------------------------------------------------------


def _num(value: float) -> str:
    text = f"{value:.1f}"
    return text[:-2] if text.endswith(".0") else text


def _polygon(count: int, radius: float, rotation: float) -> str:
    points = []
    for k in range(count):
        a = rotation + 2 * math.pi * k / count
        points.append(f"{radius * math.cos(a):.2f} {radius * math.sin(a):.2f}")
    return "M" + "L".join(points) + "Z"


def _star(points: int, outer: float, inner: float) -> str:
    corners = []
    for k in range(points * 2):
        r = inner if k % 2 else outer
        a = -math.pi / 2 + math.pi * k / points
        corners.append(f"{r * math.cos(a):.2f} {r * math.sin(a):.2f}")
    return "M" + "L".join(corners) + "Z"


def shape_path(shape: str, r: float) -> str:
    """An army marker's outline around (0, 0): the shapes of ``static/js/map.js``."""
    if shape == "square":
        return f"M{-0.85 * r:.2f} {-0.85 * r:.2f}H{0.85 * r:.2f}V{0.85 * r:.2f}H{-0.85 * r:.2f}Z"
    if shape == "diamond":
        return _polygon(4, 1.1 * r, -math.pi / 2)
    if shape == "triangle":
        return _polygon(3, 1.15 * r, -math.pi / 2)
    if shape == "triangle-down":
        return _polygon(3, 1.15 * r, math.pi / 2)
    if shape == "star":
        return _star(5, 1.2 * r, 0.55 * r)
    if shape == "hexagon":
        return _polygon(6, r, 0)
    if shape == "pentagon":
        return _polygon(5, 1.05 * r, -math.pi / 2)
    return f"M{-r:.2f} 0A{r:.2f} {r:.2f} 0 1 0 {r:.2f} 0A{r:.2f} {r:.2f} 0 1 0 {-r:.2f} 0Z"


def _trim(start: tuple[float, float], end: tuple[float, float], by: float) -> tuple[float, float]:
    dx, dy = end[0] - start[0], end[1] - start[1]
    length = math.hypot(dx, dy) or 1.0
    t = min(by / length, 0.45)
    return (start[0] + dx * t, start[1] + dy * t)


def _arrows(
    drawing: MapDrawing, mid: str, orders: Iterable[Mapping[str, Any]], r: float
) -> list[str]:
    parts = []
    for order in orders:
        clan = str(order.get("clan") or "")
        colour = CLAN_STYLES[clan].colour if clan in CLAN_STYLES else "#444"
        army = escape(str(order.get("army", "")))
        if order.get("kind") == "move" and order.get("from") and order.get("path"):
            shapes = [drawing.province(p) for p in [order["from"], *order["path"]]]
            points = [s.army_at for s in shapes if s is not None]
            if len(points) < 2:
                continue
            # Each arrow a little to its own left: a swap's two arrows stay apart (R5.2).
            (x1, y1), (x2, y2) = points[0], points[1]
            length = math.hypot(x2 - x1, y2 - y1) or 1.0
            shift = 0.45 * r
            points = [
                (x + shift * (y2 - y1) / length, y - shift * (x2 - x1) / length) for x, y in points
            ]
            points[0] = _trim(points[0], points[1], 1.3 * r)
            points[-1] = _trim(points[-1], points[-2], 1.3 * r)
            d = "M" + "L".join(f"{_num(x)} {_num(y)}" for x, y in points)
            parts.append(f'<path class="order-casing" d="{d}"/>')
            # A move that did not get there (lost the swap, stopped halfway): dashed.
            missed = " is-blocked" if order.get("outcome") in ("blocked", "stopped") else ""
            parts.append(
                f'<path class="order-arrow{missed}" d="{d}" stroke="{colour}" '
                f'marker-end="url(#{mid}-arrow)" data-army="{army}"/>'
            )
        elif order.get("kind") == "reform" and order.get("reform"):
            shape = drawing.province(str(order["reform"]))
            if shape is None:
                continue
            x, y = shape.army_at
            parts.append(
                f'<circle class="order-reform" cx="{_num(x)}" cy="{_num(y)}" '
                f'r="{_num(1.7 * r)}" stroke="{colour}" data-army="{army}"/>'
            )
    return parts


def _markers(drawing: MapDrawing, armies: Iterable[Mapping[str, Any]], r: float) -> list[str]:
    by_province: dict[str, dict[str, list[str]]] = {}
    for army in armies:
        if army.get("province"):
            clans = by_province.setdefault(str(army["province"]), {})
            clans.setdefault(str(army.get("clan") or ""), []).append(str(army["id"]))
    parts = []
    for province, clans in by_province.items():
        shape = drawing.province(province)
        if shape is None:
            continue
        entries = sorted(clans.items())
        gap = 2.4 * r
        for k, (clan, codes) in enumerate(entries):
            x = shape.army_at[0] + (k - (len(entries) - 1) / 2) * gap
            y = shape.army_at[1]
            style = CLAN_STYLES.get(clan)
            colour = style.colour if style else "#444"
            marker = style.shape if style else "circle"
            name = clan_name(clan)
            title = escape(f"{name}: {', '.join(codes)}")
            badge = ""
            if len(codes) > 1:
                badge = (
                    f'<g class="army-badge" transform="translate({_num(0.95 * r)} '
                    f'{_num(-0.95 * r)})"><circle r="{_num(0.62 * r)}"/>'
                    f'<text font-size="{_num(0.85 * r)}">{len(codes)}</text></g>'
                )
            parts.append(
                f'<g class="army-marker" transform="translate({_num(x)} {_num(y)})" '
                f'data-clan="{escape(clan)}" data-province="{escape(province)}" '
                f'data-armies="{escape(" ".join(codes))}"><title>{title}</title>'
                f'<path class="army-shape" d="{shape_path(marker, r)}" fill="{colour}"/>'
                f"{badge}</g>"
            )
    return parts


def _events(
    drawing: MapDrawing,
    mid: str,
    armies: Iterable[Mapping[str, Any]],
    meetings: Iterable[Mapping[str, Any]],
) -> list[str]:
    battles = {str(a["province"]) for a in armies if a.get("in_battle") and a.get("province")}
    met = [str(m["province"]) for m in meetings if str(m["province"]) not in battles]
    parts = []
    for province, kind in [
        *((p, "battle") for p in sorted(battles)),
        *((p, "meeting") for p in met),
    ]:
        shape = drawing.province(province)
        if shape is None:
            continue
        size = shape.label_size * 1.6
        x = shape.label[0] + shape.label_size * 2.0 - size / 2
        y = shape.label[1] - shape.label_size * 1.45 - size / 2
        title = (
            _("A battle is being fought here.")
            if kind == "battle"
            else _("Armies of several clans met here.")
        )
        parts.append(
            f'<use href="#{mid}-swords" class="event-{kind}" x="{_num(x)}" y="{_num(y)}" '
            f'width="{_num(size)}" height="{_num(size)}" data-province="{escape(province)}">'
            f"<title>{escape(title)}</title></use>"
        )
    return parts


def _filled(svg: str, empty: str, parts: Sequence[str]) -> str:
    """The include's empty overlay group ``empty`` with ``parts`` in it."""
    if empty not in svg:  # the include changed: the report still draws the bare map
        return svg
    return svg.replace(empty, empty[: -len("</g>")] + "".join(parts) + "</g>", 1)


def report_map(
    drawing: MapDrawing,
    mid: str,
    *,
    title: str,
    board: Mapping[str, Any],
    orders: Iterable[Mapping[str, Any]] = (),
    meetings: Iterable[Mapping[str, Any]] = (),
    changed: Iterable[str] = (),
) -> SafeString:
    """The map include (``strategic_map/map_svg.html``) with a board drawn on it as
    ``map.js`` would draw it: provinces filled by their controller (colour and pattern),
    army markers, the moves as arrows from where each army stood, swords on meetings and
    battles, provinces that changed hands outlined. Plain SVG, no script."""
    svg: str = render_to_string(
        "strategic_map/map_svg.html", {"drawing": drawing, "map_id": mid, "map_title": title}
    )
    r = drawing.marker_size
    fills = "".join(
        f"#{mid}-p-{escape(province)}{{fill:url(#{mid}-clan-{escape(clan)})}}"
        for province, clan in sorted(board["control"].items())
        if clan in CLAN_STYLES
    )
    svg = svg.replace(
        '<g class="map-provinces">', f'<style>{fills}</style><g class="map-provinces">', 1
    )
    highlights = []
    for province in changed:
        shape = drawing.province(province)
        if shape is not None:
            highlights.append(
                f'<path class="highlight" d="{shape.path}" data-province="{escape(province)}"/>'
            )
    svg = _filled(svg, '<g class="map-highlights" aria-hidden="true"></g>', highlights)
    svg = _filled(
        svg, '<g class="map-orders" aria-hidden="true"></g>', _arrows(drawing, mid, orders, r)
    )
    svg = _filled(
        svg, '<g class="map-events"></g>', _events(drawing, mid, board["armies"], meetings)
    )
    svg = _filled(svg, '<g class="map-armies"></g>', _markers(drawing, board["armies"], r))
    return mark_safe(svg)  # the include escapes what it writes; so does every part above


# --- The points after each turn -------------------------------------------------------------------

# Told apart without colour, as on the big screen (static/js/screen.js drawScoreChart).
DASHES = ("", "14 6", "4 5", "16 5 4 5", "2 6", "24 8", "9 4 2 4 2 4", "10 10")


def score_chart(
    history: Sequence[Mapping[str, Any]],
    clans: Sequence[Mapping[str, Any]],
    *,
    width: int = 960,
    height: int = 460,
    font: int = 16,
) -> SafeString:
    """Each clan's points after every turn as an SVG line chart (R12), no script."""
    if not history:
        return mark_safe("")
    shown = [c for c in clans if any(c["id"] in h["scores"] for h in history)]
    chart = _chart_frame(history, shown, width=width, height=height, font=font)
    out = [
        f'<svg class="score-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(_("Points after each turn"))}" xmlns="http://www.w3.org/2000/svg" '
        f'font-size="{font}">',
        f"<title>{escape(_('Points after each turn'))}</title>",
        *_chart_axes(chart),
    ]
    ends: list[dict[str, Any]] = []
    for index, clan in enumerate(shown):
        line, end = _chart_line(chart, history, clan, DASHES[index % len(DASHES)])
        out.append(line)
        ends.append(end)
    out.extend(_chart_end_labels(chart, ends))
    out.append("</svg>")
    return mark_safe("".join(out))  # every text above is escaped


@dataclass(frozen=True, slots=True)
class _ChartFrame:
    """Where a chart's plot stands in its SVG, and how turns and points map onto it."""

    width: int
    height: int
    font: int
    left: float
    top: float
    plot_w: float
    plot_h: float
    low: int
    high: int
    y_max: int

    def x(self, turn: int) -> float:
        return self.left + (turn - self.low) / (self.high - self.low) * self.plot_w

    def y(self, points: float) -> float:
        return self.top + self.plot_h - points / self.y_max * self.plot_h


def _chart_frame(
    history: Sequence[Mapping[str, Any]],
    shown: Sequence[Mapping[str, Any]],
    *,
    width: int,
    height: int,
    font: int,
) -> _ChartFrame:
    """The plot's turns and points, and its margins: the clans' names and last scores at
    the lines' ends on the right."""
    turns = [int(h["turn"]) for h in history]
    low, high = min(turns), max(max(turns), min(turns) + 1)
    top = max([1, *(int(h["scores"].get(c["id"], 0)) for h in history for c in shown)])
    step = 5 if top <= 20 else 10 if top <= 50 else 20
    y_max = max(5, math.ceil(top / step) * step)
    last = history[-1]["scores"]
    label_chars = max([4, *(len(f"{c['name']} {last.get(c['id'], '')}") for c in shown)])
    left, right, top_m, bottom = font * 3, label_chars * font * 0.62 + font * 2.2, font, font * 2.6
    return _ChartFrame(
        width=width,
        height=height,
        font=font,
        left=left,
        top=top_m,
        plot_w=width - left - right,
        plot_h=height - top_m - bottom,
        low=low,
        high=high,
        y_max=y_max,
    )


def _chart_axes(chart: _ChartFrame) -> list[str]:
    """The grid with the points on the left, the turns below and the axis's name."""
    font, left, plot_w = chart.font, chart.left, chart.plot_w
    out = []
    grid_step = 2 if chart.y_max <= 10 else 5 if chart.y_max <= 30 else 10
    for v in range(0, chart.y_max + 1, grid_step):
        out.append(
            f'<line x1="{_num(left)}" x2="{_num(left + plot_w)}" y1="{_num(chart.y(v))}" '
            f'y2="{_num(chart.y(v))}" stroke="#d4cfc4"/>'
            f'<text x="{_num(left - font * 0.4)}" y="{_num(chart.y(v) + font * 0.35)}" '
            f'text-anchor="end" fill="#333">{v}</text>'
        )
    low, high = chart.low, chart.high
    every = 1 if high - low <= 16 else math.ceil((high - low) / 16)
    for turn in range(low, high + 1, every):
        label = escape(_("Start")) if turn == 0 else str(turn)
        out.append(
            f'<text x="{_num(chart.x(turn))}" y="{_num(chart.top + chart.plot_h + font * 1.3)}" '
            f'text-anchor="middle" fill="#333">{label}</text>'
        )
    out.append(
        f'<text x="{_num(left + plot_w / 2)}" y="{_num(chart.height - font * 0.3)}" '
        f'text-anchor="middle" fill="#333">{escape(_("Turn"))}</text>'
    )
    return out


def _chart_line(
    chart: _ChartFrame,
    history: Sequence[Mapping[str, Any]],
    clan: Mapping[str, Any],
    dash: str,
) -> tuple[str, dict[str, Any]]:
    """A clan's line with a marker on every turn, and where it ends (for its label)."""
    style = CLAN_STYLES.get(str(clan["id"]))
    colour = style.colour if style else str(clan.get("colour") or "#333")
    points = [
        (
            chart.x(int(h["turn"])),
            chart.y(int(h["scores"][clan["id"]])),
            int(h["scores"][clan["id"]]),
        )
        for h in history
        if clan["id"] in h["scores"]
    ]
    line = " ".join(f"{_num(px)},{_num(py)}" for px, py, _v in points)
    values = ", ".join(str(v) for _x, _y, v in points)
    svg = (
        f'<g class="chart-clan" data-clan="{escape(clan["id"])}">'
        f"<title>{escape(clan['name'])}: {values}</title>"
        f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="3" '
        f'stroke-linejoin="round" stroke-linecap="round"'
        + (f' stroke-dasharray="{dash}"' if dash else "")
        + "/>"
        + "".join(
            f'<path d="{shape_path(style.shape if style else "circle", chart.font * 0.32)}" '
            f'transform="translate({_num(px)} {_num(py)})" fill="{colour}" stroke="#fff"/>'
            for px, py, _v in points
        )
        + "</g>"
    )
    end_x, end_y, value = points[-1]
    end = {"x": end_x, "y": end_y, "label_y": end_y, "name": clan["name"], "colour": colour}
    return svg, end | {"value": value}


def _chart_end_labels(chart: _ChartFrame, ends: list[dict[str, Any]]) -> list[str]:
    """Names at the ends of the lines, pushed apart so that equal scores stay readable."""
    font = chart.font
    ends.sort(key=lambda e: float(e["y"]))
    gap = font * 1.15
    for i in range(1, len(ends)):
        ends[i]["label_y"] = max(ends[i]["y"], ends[i - 1]["label_y"] + gap)
    overflow = (ends[-1]["label_y"] - (chart.top + chart.plot_h)) if ends else 0
    if overflow > 0:
        for end in ends:
            end["label_y"] -= overflow
    label_x = chart.left + chart.plot_w + font * 0.8
    return [
        f'<line x1="{_num(end["x"])}" y1="{_num(end["y"])}" x2="{_num(label_x)}" '
        f'y2="{_num(end["label_y"])}" stroke="{end["colour"]}" opacity="0.6"/>'
        f'<text x="{_num(label_x + font * 0.4)}" y="{_num(end["label_y"] + font * 0.35)}" '
        f'fill="{end["colour"]}" font-weight="700">{escape(end["name"])} {end["value"]}</text>'
        for end in ends
    ]
