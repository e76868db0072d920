"""What the judge console, the big screen and the history page share: the clans' colours
and marker shapes, the map's provinces and drawing, and the words their scripts write.

Strings the scripts show are handed to them from here as a JSON catalog, so they are
translated on the server like the templates.
"""

from __future__ import annotations

from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy

from referees.models import Tournament
from referees.services import tournament_clans
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, MapDrawing, map_drawing

# The clans' colours and marker shapes on the map, the charts and the swatches.
CLAN_COLOURS: dict[str, str] = {clan: style.colour for clan, style in CLAN_STYLES.items()}
CLAN_SHAPES: dict[str, str] = {clan: style.shape for clan, style in CLAN_STYLES.items()}

# What the scripts write, translated here (gettext_lazy: resolved per request).
COMMON_STRINGS: dict[str, Promise] = {
    "turn": gettext_lazy("Turn"),
    "turn_of": gettext_lazy("Turn %(turn)s of %(total)s"),
    "turn_n": gettext_lazy("Turn %(turn)s"),
    "ended_after_of": gettext_lazy("Ended after turn %(turn)s of %(total)s"),
    "ended_after": gettext_lazy("Ended after turn %(turn)s"),
    "paused": gettext_lazy("Paused"),
    "no_clock": gettext_lazy("No clock is running"),
    "live_connected": gettext_lazy("Live"),
    "live_connecting": gettext_lazy("Connecting…"),
    # Shown whenever the page cannot be sure that it is current (see static/js/live.js).
    "live_offline": gettext_lazy("Offline — this console may be out of date"),
    "turn_over": gettext_lazy("Turn over — waiting for the result"),
    "no_announcements": gettext_lazy("No announcements yet."),
    "points": gettext_lazy("points"),
    "start": gettext_lazy("Start"),
    "scores_by_turn": gettext_lazy("Points after each turn"),
    "chart_description": gettext_lazy(
        "Line chart: each clan's points after every turn; each clan has its own colour, "
        "line pattern and marker."
    ),
    "nobody": gettext_lazy("nobody"),
    "destroyed": gettext_lazy("destroyed"),
    "in_battle": gettext_lazy("in battle"),
    "map_battle": gettext_lazy("A battle is being fought here."),
    "map_meeting": gettext_lazy("Armies of several clans met here last turn."),
}


def script_texts(strings: dict[str, Promise]) -> dict[str, str]:
    """A catalog of the scripts' strings, translated into the request's language."""
    return {key: str(value) for key, value in strings.items()}


def clan_rows(tournament: Tournament) -> list[dict[str, str]]:
    """The tournament's clans with their names, colours and marker shapes."""
    return [
        {
            "id": clan,
            "name": clan_name(clan),
            "colour": CLAN_COLOURS.get(clan, "#555"),
            "shape": CLAN_SHAPES.get(clan, "circle"),
        }
        for clan in tournament_clans(tournament)
    ]


def province_rows(map_data: dict[str, Any]) -> list[dict[str, Any]]:
    """The map's provinces by name: what a select offers and a row is labelled with."""
    rows = []
    for raw in map_data.get("provinces", []):
        castle = raw.get("castle")
        rows.append(
            {
                "id": raw["id"],
                "name": raw.get("name") or raw["id"],
                "home_clan": raw.get("home_clan"),
                "castle": bool(castle),
                "impassable": bool(raw.get("impassable")),
            }
        )
    return sorted(rows, key=lambda p: str(p["name"]))


def tournament_drawing(tournament: Tournament) -> MapDrawing:
    """The tournament's map as the pages draw it."""
    return map_drawing(tournament.campaign.map_data)


def choice_labels(choices: Any) -> dict[str, str]:
    """A model's choices as value → label, in the request's language."""
    return {str(value): str(label) for value, label in choices}
