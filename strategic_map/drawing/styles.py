"""How each clan is drawn: colour, tint, pattern, army marker shape (the one place they are
defined; the SVG include renders them as ``<pattern>`` elements that ``static/js/map.js`` reads)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .geometry import Point


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


def clan_label(clan: str | None) -> str:
    if not clan:
        return ""
    style = CLAN_STYLES.get(clan)
    return style.label if style else clan
