"""The pieces every sentence of the tournament log is made of (``referees.texts.log``): the
names a sentence needs (``LogContext``), the words for roles, clans, clock times and orders,
and the shape of a sentence.

The data of an entry is read as it was written, by whichever version of the site wrote it:
where it holds no mapping or no list, the pieces read it as empty.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.utils.translation import gettext as _

from referees.models import Player
from strategic_map.clans import clan_name


@dataclass(frozen=True)
class LogContext:
    """What a sentence needs besides the entry: names of provinces, players and armies."""

    provinces: Mapping[str, str] = field(default_factory=dict)
    army_players: Mapping[str, str] = field(default_factory=dict)
    players: Mapping[int, str] = field(default_factory=dict)
    time_zone: str = "UTC"

    def clock_time(self, value: Any) -> str:
        """An ISO time as the tournament's clocks show it: ``10:54:45``."""
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            return "?"
        try:
            zone = ZoneInfo(self.time_zone)
        except (ZoneInfoNotFoundError, ValueError):
            zone = ZoneInfo("UTC")
        return moment.astimezone(zone).strftime("%H:%M:%S")

    def province(self, code: Any) -> str:
        if not code:
            return _("an unknown province")
        return self.provinces.get(str(code), str(code))

    def army(self, code: Any) -> str:
        if not code:
            return _("an army")
        player = self.army_players.get(str(code))
        if player:
            return _("%(army)s (%(player)s)") % {"army": code, "player": player}
        return str(code)

    def armies(self, codes: Any) -> str:
        if not isinstance(codes, list) or not codes:
            return _("no army")
        return ", ".join(self.army(c) for c in codes)

    def player(self, pk: Any, fallback: Any = "") -> str:
        if isinstance(pk, int) and pk in self.players:
            return self.players[pk]
        return str(fallback or _("a player"))


Entry = Mapping[str, Any]
# One sentence: who did it (already in words), the entry's data, the names.
Sentence = Callable[[str, Mapping[str, Any], LogContext], str]
# A sentence that says which turn it is about: the same, and the entry's turn.
TurnSentence = Callable[[str, Mapping[str, Any], LogContext, Any], str]


def role_word(role: Any) -> str:
    """A role code as the reader says it ("General"); "player" for one unknown."""
    try:
        return str(Player.Role(role).label)
    except ValueError:
        return _("player")


def mapping_of(value: Any) -> Mapping[str, Any]:
    """``value`` where the data holds a mapping; empty where an older version wrote none."""
    return value if isinstance(value, Mapping) else {}


def list_of(value: Any) -> list[Any]:
    """``value`` where the data holds a list; empty where an older version wrote none."""
    return value if isinstance(value, list) else []


def clan_word(code: Any) -> str:
    """A clan code as the reader says it; "no clan" for none."""
    return clan_name(str(code)) if code else _("no clan")


def minutes_and_seconds(seconds: Any) -> str:
    """Seconds as a clock shows them, ``m:ss``; "?" when the data holds no number."""
    if not isinstance(seconds, int | float):
        return "?"
    # Rounded up, as every clock on the pages shows it (static/js/format.js): "paused with
    # 1:00 left" for the 59.4 s the judge saw as 1:00.
    whole = math.ceil(abs(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def order_words(data: Mapping[str, Any], ctx: LogContext) -> str:
    """An order as the log says it ("move to Kaiu Lands", "hold")."""
    kind = data.get("kind")
    if kind == "move":
        text = _("move to %(path)s") % {
            "path": " → ".join(ctx.province(p) for p in data.get("path") or [])
        }
    elif kind == "reform":
        text = _("reform in %(province)s") % {"province": ctx.province(data.get("reform"))}
    else:
        text = _("hold")
    if data.get("claim") is False:
        text = _("%(order)s, without taking control") % {"order": text}
    return text
