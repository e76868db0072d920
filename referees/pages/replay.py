"""The campaign told on the big screen, and the same story as one self-contained file
(issue 32): thin page views over ``referees.reading.story.campaign_story``.

- ``campaign_replay`` (``…/screen/replay``): the map with the moves as arrows and control
  changing colour, a panel with each turn's orders, draws (commitment, revealed seed),
  meetings and battles with their results, the points chart growing turn by turn, then the
  final standings. ``static/js/replay.js`` steps through it: → / PageDown / Space and
  ← / PageUp (a clicker sends PageDown and PageUp), P or K to pause and play, a speed for
  unattended play, and the same as buttons for a phone.
- ``campaign_report`` (``…/report.html``): one HTML file to download, with inline CSS and
  an inline SVG map per turn drawn here (no script at all): the standings, each turn's map
  and orders, every battle and its result, every draw with its proof and the command that
  verifies it, each turn's case file inside it. Nothing in it asks for anything over the
  network, so it opens offline, prints, and a community site can publish it as it is.

R1.1: judges any time; everyone else once the game has finished (``story_allowed``).
"""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.kernel.access import tournament_get, user_judges
from referees.kernel.core import TournamentError
from referees.models import Tournament
from referees.pages.common import COMMON_STRINGS
from referees.pages.refusals import problem_page
from referees.reading.story import campaign_story, report_file_name, story_allowed
from referees.selectors import Viewer
from referees.texts.words import state_turn_words
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, MapDrawing, map_drawing

# What replay.js writes, translated here; the chart and the map say what they say on the
# big screen.
REPLAY_STRINGS: dict[str, Promise] = {
    "play": gettext_lazy("Play"),
    "pause": gettext_lazy("Pause"),
    "playing": gettext_lazy("Playing"),
    "paused": COMMON_STRINGS["paused"],
    "step_of": gettext_lazy("Step %(step)s of %(total)s"),
    "start": COMMON_STRINGS["start"],
    "turn": COMMON_STRINGS["turn"],
    "scores_by_turn": COMMON_STRINGS["scores_by_turn"],
    "chart_description": COMMON_STRINGS["chart_description"],
    "battle": COMMON_STRINGS["map_battle"],
    "meeting": COMMON_STRINGS["map_meeting"],
}

# The speeds of unattended play, seconds per step; the first is the default.
SPEEDS = (6, 3, 10)


def _viewer(request: HttpRequest, tournament: Tournament) -> Viewer:
    if user_judges(request.user, tournament):
        return Viewer.judge(label=f"judge {request.user.get_username()}")
    return Viewer.public()


def _story_or_refusal(
    request: HttpRequest, tournament_id: int, *, cases: bool = False
) -> tuple[Tournament | None, dict[str, Any] | None, HttpResponse | None]:
    """The tournament and its story for this request, or the answer to send instead.

    No such tournament: 404. Before the end (R1.1) a visitor is sent to sign in (a judge
    may), anyone signed in who does not judge it gets 403 saying when it opens.
    """
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return None, None, problem_page(request, 404, _("Not found"), error.message)
    viewer = _viewer(request, tournament)
    if not story_allowed(tournament=tournament, viewer=viewer):
        if not request.user.is_authenticated:
            return None, None, redirect_to_login(request.get_full_path())
        return (
            None,
            None,
            problem_page(
                request,
                403,
                _("Judges only"),
                _(
                    "The campaign is told once the game is over: until then only a judge of "
                    "this tournament may see it (R1.1)."
                ),
            ),
        )
    story = campaign_story(tournament=tournament, viewer=viewer, cases=cases)
    return tournament, story, None


def _steps(story: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The replay's steps: the start, each turn's orders then what came of them, the end."""
    steps: list[dict[str, Any]] = [{"kind": "start", "turn": 0, "data": None}]
    for turn in story["turns"]:
        steps.append({"kind": "orders", "turn": turn["turn"], "data": turn})
        steps.append({"kind": "result", "turn": turn["turn"], "data": turn})
    steps.append({"kind": "final", "turn": story["tournament"]["turns_played"], "data": None})
    for index, step in enumerate(steps):
        step["index"] = index
    return steps


def _turn_words(tournament: Tournament, story: Mapping[str, Any]) -> str:
    return state_turn_words(
        {
            "turn": story["tournament"]["turns_played"],
            "turns_total": tournament.turns_total,
            "ended_after_turn": story["tournament"]["turns_played"]
            if story["tournament"]["finished"]
            else None,
        }
    )


@never_cache
@require_safe
def campaign_replay(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The campaign, turn by turn, for the big screen (public after the end, R1.1)."""
    tournament, story, refusal = _story_or_refusal(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None and story is not None
    steps = _steps(story)
    with timezone.override(tournament.time_zone):
        config = {
            "tournamentId": tournament.pk,
            "clans": story["clans"],
            "clanColours": {c["id"]: c["colour"] for c in story["clans"]},
            "steps": [{"kind": s["kind"], "turn": s["turn"]} for s in steps],
            "speeds": list(SPEEDS),
            "strings": {key: str(value) for key, value in REPLAY_STRINGS.items()},
        }
        return render(
            request,
            "referees/replay.html",
            {
                "tournament": tournament,
                "story": story,
                "steps": steps,
                "speeds": SPEEDS,
                "turn_words": _turn_words(tournament, story),
                "drawing": map_drawing(tournament.campaign.map_data),
                "is_judge": story["viewer"] == "judge",
                "config": config,
            },
        )


# The report is one file that needs nothing else: no script, nothing fetched (the
# middleware keeps a policy a view has set).
REPORT_POLICY = "; ".join(
    (
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)


@never_cache
@require_safe
def campaign_report(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The campaign as one self-contained HTML file, a download (``?print=1``: shown in the
    browser, to print it). Public after the end, judges any time (R1.1)."""
    tournament, story, refusal = _story_or_refusal(request, tournament_id, cases=True)
    if refusal is not None:
        return refusal
    assert tournament is not None and story is not None
    drawing = map_drawing(tournament.campaign.map_data)
    with timezone.override(tournament.time_zone):
        for turn in story["turns"]:
            turn["map"] = report_map(
                drawing,
                f"turn-{turn['turn']}-map",
                title=_("The map after turn %(turn)s") % {"turn": turn["turn"]},
                board=turn["after"],
                orders=[o for o in turn["orders"] if o["outcome"] != "rejected"],
                meetings=turn["meetings"],
                changed=[c["province"] for c in turn["control_changes"]],
            )
            case = turn.pop("case", None)
            turn["case_url"] = _json_data_url(case) if case is not None else ""
        html = render_to_string(
            "referees/report.html",
            {
                "tournament": tournament,
                "story": story,
                "turn_words": _turn_words(tournament, story),
                "generated_at": timezone.localtime(),
                "start_map": report_map(
                    drawing,
                    "start-map",
                    title=_("The armies before turn 1"),
                    board=story["start"],
                ),
                "chart": score_chart(story["score_history"], story["clans"]),
                "drawing": drawing,
            },
            request=request,
        )
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    # Viewed on the site (?print=1) it keeps its promise under its own policy.
    response["Content-Security-Policy"] = REPORT_POLICY
    disposition = "inline" if request.GET.get("print") else "attachment"
    response["Content-Disposition"] = f'{disposition}; filename="{report_file_name(tournament)}"'
    return response


def _json_data_url(value: Any) -> str:
    """``value`` as a JSON file inside a link (``data:``): saved with one click, offline."""
    text = json.dumps(value, ensure_ascii=False, indent=1)
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"data:application/json;base64,{encoded}"


# --- The map of a turn, drawn here (the report has no script) -----------------------------------


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


# --- The points after each turn, drawn here ------------------------------------------------------

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
    turns = [int(h["turn"]) for h in history]
    low, high = min(turns), max(max(turns), min(turns) + 1)
    shown = [c for c in clans if any(c["id"] in h["scores"] for h in history)]
    top = max([1, *(int(h["scores"].get(c["id"], 0)) for h in history for c in shown)])
    step = 5 if top <= 20 else 10 if top <= 50 else 20
    y_max = max(5, math.ceil(top / step) * step)
    last = history[-1]["scores"]
    label_chars = max([4, *(len(f"{c['name']} {last.get(c['id'], '')}") for c in shown)])
    left, right, top_m, bottom = font * 3, label_chars * font * 0.62 + font * 2.2, font, font * 2.6
    plot_w, plot_h = width - left - right, height - top_m - bottom

    def x(turn: int) -> float:
        return left + (turn - low) / (high - low) * plot_w

    def y(points: float) -> float:
        return top_m + plot_h - points / y_max * plot_h

    out = [
        f'<svg class="score-chart" viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{escape(_("Points after each turn"))}" xmlns="http://www.w3.org/2000/svg" '
        f'font-size="{font}">',
        f"<title>{escape(_('Points after each turn'))}</title>",
    ]
    grid_step = 2 if y_max <= 10 else 5 if y_max <= 30 else 10
    for v in range(0, y_max + 1, grid_step):
        out.append(
            f'<line x1="{_num(left)}" x2="{_num(left + plot_w)}" y1="{_num(y(v))}" '
            f'y2="{_num(y(v))}" stroke="#d4cfc4"/>'
            f'<text x="{_num(left - font * 0.4)}" y="{_num(y(v) + font * 0.35)}" '
            f'text-anchor="end" fill="#333">{v}</text>'
        )
    every = 1 if high - low <= 16 else math.ceil((high - low) / 16)
    for turn in range(low, high + 1, every):
        label = escape(_("Start")) if turn == 0 else str(turn)
        out.append(
            f'<text x="{_num(x(turn))}" y="{_num(top_m + plot_h + font * 1.3)}" '
            f'text-anchor="middle" fill="#333">{label}</text>'
        )
    out.append(
        f'<text x="{_num(left + plot_w / 2)}" y="{_num(height - font * 0.3)}" '
        f'text-anchor="middle" fill="#333">{escape(_("Turn"))}</text>'
    )
    ends: list[dict[str, Any]] = []
    for index, clan in enumerate(shown):
        style = CLAN_STYLES.get(str(clan["id"]))
        colour = style.colour if style else str(clan.get("colour") or "#333")
        points = [
            (x(int(h["turn"])), y(int(h["scores"][clan["id"]])), int(h["scores"][clan["id"]]))
            for h in history
            if clan["id"] in h["scores"]
        ]
        line = " ".join(f"{_num(px)},{_num(py)}" for px, py, _v in points)
        values = ", ".join(str(v) for _x, _y, v in points)
        dash = DASHES[index % len(DASHES)]
        out.append(
            f'<g class="chart-clan" data-clan="{escape(clan["id"])}">'
            f"<title>{escape(clan['name'])}: {values}</title>"
            f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="3" '
            f'stroke-linejoin="round" stroke-linecap="round"'
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + "/>"
            + "".join(
                f'<path d="{shape_path(style.shape if style else "circle", font * 0.32)}" '
                f'transform="translate({_num(px)} {_num(py)})" fill="{colour}" stroke="#fff"/>'
                for px, py, _v in points
            )
            + "</g>"
        )
        end_x, end_y, value = points[-1]
        ends.append(
            {"x": end_x, "y": end_y, "label_y": end_y, "name": clan["name"], "colour": colour}
            | {"value": value}
        )
    # Names at the ends of the lines, pushed apart so that equal scores stay readable.
    ends.sort(key=lambda e: float(e["y"]))
    gap = font * 1.15
    for i in range(1, len(ends)):
        ends[i]["label_y"] = max(ends[i]["y"], ends[i - 1]["label_y"] + gap)
    overflow = (ends[-1]["label_y"] - (top_m + plot_h)) if ends else 0
    if overflow > 0:
        for end in ends:
            end["label_y"] -= overflow
    label_x = left + plot_w + font * 0.8
    for end in ends:
        out.append(
            f'<line x1="{_num(end["x"])}" y1="{_num(end["y"])}" x2="{_num(label_x)}" '
            f'y2="{_num(end["label_y"])}" stroke="{end["colour"]}" opacity="0.6"/>'
            f'<text x="{_num(label_x + font * 0.4)}" y="{_num(end["label_y"] + font * 0.35)}" '
            f'fill="{end["colour"]}" font-weight="700">{escape(end["name"])} {end["value"]}</text>'
        )
    out.append("</svg>")
    return mark_safe("".join(out))  # every text above is escaped
