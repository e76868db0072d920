"""The tournament log as sentences a person can read out to settle a dispute (R11).

Each entry of ``LogEntry`` keeps its action code and data as they were written (the JSON
export gives them unchanged); this module turns one into a sentence in the reader's
language: who did it (a player's name and army, a judge's name, the clock), what, and how
it ended. One function per action; an action without one gets a plain generic sentence,
never its code or its data.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from referees.models import Player, Tournament
from referees.texts.words import REJECTIONS
from strategic_map.clans import clan_name
from strategic_map.selectors import campaign_game_map

# The kinds of entries the console's filter offers: every action belongs to one.
LOG_KINDS: dict[str, Promise] = {
    "setup": gettext_lazy("Set-up and players"),
    "judges": gettext_lazy("Judges"),
    "turns": gettext_lazy("Turns and the clock"),
    "orders": gettext_lazy("Orders"),
    "corrections": gettext_lazy("Corrections and undo"),
    "battles": gettext_lazy("Battle tables"),
    "messages": gettext_lazy("Announcements, instructions and calls"),
}

_KIND_OF_PREFIX: tuple[tuple[str, str], ...] = (
    ("battle_", "battles"),
    ("judge_", "judges"),
    ("order_", "orders"),
    ("player_", "setup"),
    ("join_link_", "setup"),
    ("tournament_", "setup"),
    ("clock_", "turns"),
    ("game_", "turns"),
    ("turn_undone", "corrections"),
    ("turn_", "turns"),
    ("draw_", "corrections"),
    ("army_corrected", "corrections"),
    ("backup_restored", "corrections"),
    ("control_corrected", "corrections"),
    ("announcement", "messages"),
    ("instruction_", "messages"),
    ("call_", "messages"),
)


def log_kind(action: str) -> str:
    """The filter kind of ``action`` ("setup" … "messages"); the start's steps are "turns"."""
    for prefix, kind in _KIND_OF_PREFIX:
        if action.startswith(prefix):
            return kind
    return "turns" if action.endswith("_started") or action == "start_positions" else "setup"


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


def log_context(tournament: Tournament) -> LogContext:
    game_map = campaign_game_map(tournament.campaign)
    players = list(tournament.players.select_related("army"))
    return LogContext(
        provinces={code: p.name for code, p in game_map.provinces.items()},
        army_players={p.army.code: p.name for p in players if p.army is not None},
        players={p.pk: p.name for p in players},
        time_zone=tournament.time_zone or "UTC",
    )


# --- Who -------------------------------------------------------------------------------------

_PLAYER_LABEL = re.compile(r"^(general|daimyo|karo) (.+) \(([a-z]+)\)$")


def _role(role: Any) -> str:
    try:
        return str(Player.Role(role).label)
    except ValueError:
        return _("player")


def log_actor_player(label: str) -> tuple[str, str] | None:
    """The player's name and clan when a player did it (``kernel.Actor.of_player``)."""
    found = _PLAYER_LABEL.match(label)
    return (found.group(2), found.group(3)) if found else None


def log_who(label: str) -> str:
    """The actor as a reader knows him: "the clock", "judge Anna", "Ivan (General, Crab)"."""
    if label == "clock":
        return _("the clock")
    if label == "the restore":
        return _("the restore from a backup")
    if label.startswith("judge "):
        return _("judge %(name)s") % {"name": label[len("judge ") :]}
    found = _PLAYER_LABEL.match(label)
    if found:
        role, name, clan = found.groups()
        return _("%(name)s (%(role)s, %(clan)s)") % {
            "name": name,
            "role": _role(role),
            "clan": clan_name(clan),
        }
    return label or _("someone")


# --- Small pieces ----------------------------------------------------------------------------


def _mapping(value: Any) -> Mapping[str, Any]:
    """``value`` where the data holds a mapping; empty where an older version wrote none."""
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    """``value`` where the data holds a list; empty where an older version wrote none."""
    return value if isinstance(value, list) else []


def _clan(code: Any) -> str:
    return clan_name(str(code)) if code else _("no clan")


def _minutes(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "?"
    # Rounded up, as every clock on the pages shows it (static/js/format.js): "paused with
    # 1:00 left" for the 59.4 s the judge saw as 1:00.
    whole = math.ceil(abs(seconds))
    return f"{whole // 60}:{whole % 60:02d}"


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "?"
    minutes = round(seconds / 60)
    return ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}


def order_words(data: Mapping[str, Any], ctx: LogContext) -> str:
    """An order as the log says it ("move to Kaiu Lands", "hold")."""
    return _order(data, ctx)


def _order(data: Mapping[str, Any], ctx: LogContext) -> str:
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


BATTLE_REASONS: dict[str, Promise] = {
    "last_standing": gettext_lazy("the last clan standing"),
    "enlightenment": gettext_lazy("enlightenment (the five rings)"),
    "honor": gettext_lazy("honor"),
    "judge": gettext_lazy("the judge's ruling"),
    "truce": gettext_lazy("agreed"),
    "tie": gettext_lazy("a tie"),
}


def battle_outcome_text(outcome: Any, ctx: LogContext) -> str:
    """A battle's result (R8) in words: the winner, how, and who lost; or a truce."""
    if not isinstance(outcome, Mapping):
        return _("no result")
    reason = BATTLE_REASONS.get(str(outcome.get("reason") or ""))
    if outcome.get("kind") == "truce":
        text = _("a truce")
    else:
        text = _("%(winner)s won") % {"winner": ctx.army(outcome.get("winner"))}
    if reason is not None:
        text = _("%(result)s (%(reason)s)") % {"result": text, "reason": reason}
    losers = outcome.get("losers") or []
    if losers:
        text = _("%(result)s; %(losers)s lost") % {"result": text, "losers": ctx.armies(losers)}
    return text


def battle_casualties_text(casualties: Any, ctx: LogContext) -> str:
    """The armies a battle destroyed, with the turn each may reform from (R9)."""
    if not isinstance(casualties, list) or not casualties:
        return _("no army destroyed")
    parts = [
        _("%(army)s destroyed, may reform from turn %(turn)s")
        % {"army": ctx.army(c.get("army")), "turn": c.get("reform_from", "?")}
        for c in casualties
        if isinstance(c, Mapping)
    ]
    return "; ".join(parts)


BATTLE_MOVES: dict[str, Promise] = {
    "stronghold": gettext_lazy("entered the stronghold"),
    "seating": gettext_lazy("set the seating"),
    "begin": gettext_lazy("began the game"),
    "phase": gettext_lazy("moved on to the next phase"),
    "end_turn": gettext_lazy("ended the turn"),
    "ring": gettext_lazy("recorded a ring"),
    "declare": gettext_lazy("declared a victory"),
    "truce": gettext_lazy("answered on a truce"),
    "production_done": gettext_lazy("finished production"),
    "judge_result": gettext_lazy("ruled the result"),
    "tactical_test": gettext_lazy("recorded the tactical test"),
    "models": gettext_lazy("recorded models"),
    "victory_points": gettext_lazy("recorded victory points"),
}


def _battle_move(move: Any, ctx: LogContext) -> str:
    if not isinstance(move, Mapping):
        return _("made a move")
    kind = str(move.get("type") or "")
    delta = move.get("delta")
    if kind in ("honor", "province") and isinstance(delta, int):
        counts = (
            ngettext("%(count)d honor", "%(count)d honor", abs(delta))
            if kind == "honor"
            else ngettext("%(count)d province", "%(count)d provinces", abs(delta))
        ) % {"count": abs(delta)}
        template = (
            _("marked %(what)s gained by %(army)s")
            if delta > 0
            else _("marked %(what)s lost by %(army)s")
        )
        return str(template) % {"army": ctx.army(move.get("army")), "what": counts}
    word = BATTLE_MOVES.get(kind)
    return str(word) if word is not None else _("made a move")


# --- One sentence per action -----------------------------------------------------------------

Entry = Mapping[str, Any]
Sentence = Callable[[str, Mapping[str, Any], LogContext], str]


def _tournament_created(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _(
        "%(who)s created the tournament for %(count)s players: %(turns)s turns of %(time)s each."
    ) % {
        "who": who,
        "count": d.get("player_count", "?"),
        "turns": d.get("turns_total", "?"),
        "time": _duration(d.get("turn_seconds")),
    }


def _tournament_updated(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    changes = d.get("changes")
    count = len(changes) if isinstance(changes, Mapping | list) else 0
    return ngettext(
        "%(who)s changed %(count)d setting of the tournament.",
        "%(who)s changed %(count)d settings of the tournament.",
        count,
    ) % {"who": who, "count": count}


def _tournament_gong_set(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    # Issue 32: the gong the big screen sounds at each turn's deadline.
    if d.get("on"):
        return _("%(who)s switched the big screen's gong on.") % {"who": who}
    return _("%(who)s switched the big screen's gong off.") % {"who": who}


def _player_line(d: Mapping[str, Any]) -> str:
    return _("%(name)s (%(role)s, %(clan)s)") % {
        "name": d.get("name") or _("a player"),
        "role": _role(d.get("role")),
        "clan": _clan(d.get("clan")),
    }


def _player_registered(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s registered %(player)s.") % {"who": who, "player": _player_line(d)}


def _player_renamed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s renamed %(old)s to %(new)s.") % {
        "who": who,
        "old": d.get("old_name", "?"),
        "new": d.get("name", "?"),
    }


def _player_moved(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s moved %(name)s from %(old_role)s, %(old_clan)s to %(role)s, %(clan)s.") % {
        "who": who,
        "name": d.get("name", "?"),
        "old_role": _role(d.get("old_role")),
        "old_clan": _clan(d.get("old_clan")),
        "role": _role(d.get("role")),
        "clan": _clan(d.get("clan")),
    }


def _player_removed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s removed %(player)s.") % {"who": who, "player": _player_line(d)}


def _player_replaced(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s replaced %(old)s with %(new)s (%(role)s, %(clan)s).") % {
        "who": who,
        "old": d.get("old_name", "?"),
        "new": d.get("name", "?"),
        "role": _role(d.get("role")),
        "clan": _clan(d.get("clan")),
    }


def _player_checked_in(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s opened his join link: checked in.") % {"who": who}


def _player_marked_present(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s marked %(name)s present (he plays on paper).") % {
        "who": who,
        "name": d.get("name") or ctx.player(d.get("player")),
    }


def _player_presence_cleared(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s took back the mark that %(name)s is present.") % {
        "who": who,
        "name": d.get("name") or ctx.player(d.get("player")),
    }


def _player_stood_in(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s gave the seat of %(old)s (%(role)s, %(clan)s) to %(new)s.") % {
        "who": who,
        "old": d.get("old_name", "?"),
        "new": d.get("name", "?"),
        "role": _role(d.get("role")),
        "clan": _clan(d.get("clan")),
    }


def _lineup_shrunk(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    leaving = ", ".join(
        str(p.get("name", "?")) for p in _list(d.get("leaving")) if isinstance(p, Mapping)
    )
    changes = "; ".join(
        _("%(name)s becomes %(role)s") % {"name": c.get("name", "?"), "role": _role(c.get("role"))}
        + (f" ({c['army']})" if c.get("army") else "")
        for c in _list(d.get("changes"))
        if isinstance(c, Mapping)
    )
    sentence = _(
        "%(who)s went on without %(leaving)s: %(before)s players became %(after)s (R1 b)."
    ) % {
        "who": who,
        "leaving": leaving or "?",
        "before": d.get("players_before", "?"),
        "after": d.get("players_after", "?"),
    }
    return f"{sentence} {changes}." if changes else sentence


def _join_link_reissued(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s issued a new join link for %(player)s; the old one stopped working.") % {
        "who": who,
        "player": ctx.player(d.get("player")),
    }


def _join_link_revoked(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s revoked the join link of %(player)s.") % {
        "who": who,
        "player": ctx.player(d.get("player")),
    }


def _judge_sentence(template: Promise) -> Sentence:
    def sentence(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
        return str(template) % {"who": who, "judge": d.get("judge", "?")}

    return sentence


def _judge_key(template: Promise) -> Sentence:
    def sentence(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
        return str(template) % {"who": who, "label": d.get("label") or "?"}

    return sentence


def _plain(template: Promise) -> Sentence:
    def sentence(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
        return str(template) % {"who": who}

    return sentence


def _start_positions(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    positions = _mapping(d.get("positions"))
    return _("%(who)s declared the starting positions of the %(clan)s: %(positions)s.") % {
        "who": who,
        "clan": _clan(d.get("clan")),
        "positions": ", ".join(
            _("%(army)s in %(province)s") % {"army": ctx.army(a), "province": ctx.province(p)}
            for a, p in sorted(positions.items())
        ),
    }


def _turn_opened(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    return _("%(who)s opened turn %(turn)s.") % {"who": who, "turn": turn or "?"}


def _order_given(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s gave %(army)s the order: %(order)s.") % {
        "who": who,
        "army": ctx.army(d.get("army")),
        "order": _order(d, ctx),
    }


def _order_refused(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    code = str(d.get("code") or "")
    if code == "late":
        reason = _("it arrived after the deadline")
    elif code in REJECTIONS:
        reason = str(REJECTIONS[code])
    else:
        reason = str(d.get("refusal") or code or "…")
    order = _("withdraw the order") if d.get("kind") == "withdraw" else _order(d, ctx)
    return _("The order %(who)s sent for %(army)s was refused: %(order)s. Why: %(reason)s.") % {
        "who": who,
        "army": ctx.army(d.get("army")),
        "order": order,
        "reason": reason,
    }


def _order_withdrawn(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s withdrew the order of %(army)s: it holds.") % {
        "who": who,
        "army": ctx.army(d.get("army")),
    }


def _clock_paused(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s paused the clock with %(time)s left.") % {
        "who": who,
        "time": _minutes(d.get("remaining")),
    }


def _clock_resumed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s resumed the clock with %(time)s left.") % {
        "who": who,
        "time": _minutes(d.get("remaining")),
    }


def _clock_extended(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    seconds = d.get("seconds")
    template = (
        _("%(who)s took %(time)s off the clock.")
        if isinstance(seconds, int | float) and seconds < 0
        else _("%(who)s gave the clock %(time)s more.")
    )
    return str(template) % {"who": who, "time": _minutes(seconds)}


def _turn_resolved(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    draws = _list(d.get("draws"))
    meetings = _list(d.get("meetings"))
    text = _("%(who)s resolved turn %(turn)s.") % {"who": who, "turn": turn or "?"}
    parts = [
        ngettext("%(count)d draw", "%(count)d draws", len(draws)) % {"count": len(draws)},
        ngettext("%(count)d meeting", "%(count)d meetings", len(meetings))
        % {"count": len(meetings)},
    ]
    for meeting in meetings:
        if isinstance(meeting, Mapping):
            parts.append(
                _("meeting in %(province)s: %(armies)s")
                % {
                    "province": ctx.province(meeting.get("province")),
                    "armies": ctx.armies(meeting.get("armies")),
                }
            )
    for order in _list(d.get("rejected")):
        if isinstance(order, Mapping):
            parts.append(
                _("the order of %(army)s was rejected: %(reason)s")
                % {
                    "army": ctx.army(order.get("army")),
                    "reason": rejection_text(order.get("reason")),
                }
            )
    return f"{text} {'; '.join(parts)}."


def rejection_text(reason: Any) -> str:
    """A rejected order's reason (``"<code>: <English text>"``) in the reader's language (an
    unknown code as it came)."""
    if not isinstance(reason, str) or not reason:
        return "…"
    text = REJECTIONS.get(reason.partition(":")[0].strip())
    return str(text) if text is not None else reason


def _backup_restored(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    text = _(
        "Restored from a backup written at %(written)s, %(age)s before the restore: what "
        "happened after it is not here."
    ) % {"written": ctx.clock_time(d.get("written_at")), "age": _minutes(d.get("age"))}
    orders = [o for o in _list(d.get("orders")) if isinstance(o, Mapping)]
    if turn and orders:
        listed = "; ".join(
            _("%(army)s: %(order)s (%(time)s)")
            % {
                "army": o.get("army", "?"),
                "order": _order(o, ctx),
                "time": ctx.clock_time(o.get("given_at")),
            }
            for o in orders
        )
        text += " " + _(
            "Turn %(turn)s's orders as restored: %(orders)s. A General whose order is not "
            "listed, or not as he gave it, gives it again."
        ) % {"turn": turn, "orders": listed}
    elif turn:
        text += " " + _(
            "No order of turn %(turn)s is in it: every General gives his order again."
        ) % {"turn": turn}
    return str(text)


def _site_changed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _(
        "The venue's address changed from %(before)s to %(after)s: join sheets printed "
        "before carry the old one. Print the join sheet again."
    ) % {"before": d.get("before", "?"), "after": d.get("after", "?")}


def _deadline_missed(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    text = _(
        "The deadline of turn %(turn)s (%(deadline)s) passed while the server was not "
        "serving: the turn was resolved %(late)s late, and orders sent around the deadline "
        "may have been refused as late through no fault of their senders."
    ) % {
        "turn": turn or "?",
        "deadline": ctx.clock_time(d.get("deadline")),
        "late": _minutes(d.get("late_by")),
    }
    orders = [o for o in _list(d.get("orders")) if isinstance(o, Mapping)]
    if not orders:
        none = _("No order arrived around it.")
        return f"{text} {none}"
    lines = []
    for order in orders:
        action, code = order.get("action"), order.get("code")
        if action == "order_given":
            what = _("order given")
        elif action == "order_withdrawn":
            what = _("order withdrawn")
        elif code == "late":
            what = _("order refused as late")
        else:
            what = _("order refused")
        lines.append(
            _("%(time)s %(army)s: %(what)s")
            % {
                "time": ctx.clock_time(order.get("at")),
                "army": ctx.army(order.get("army")),
                "what": what,
            }
        )
    return _("%(text)s Orders around it: %(orders)s.") % {"text": text, "orders": "; ".join(lines)}


def _deadline_ruled(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    return _("%(who)s ruled on the missed deadline of turn %(turn)s.") % {
        "who": who,
        "turn": turn or "?",
    }


def _turn_undone(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    discarded = _list(d.get("discarded"))
    text = _("%(who)s undid the resolution of turn %(turn)s; it reopened with %(time)s.") % {
        "who": who,
        "turn": turn or "?",
        "time": _minutes(d.get("seconds")),
    }
    if discarded:
        lines = [
            str(item.get("text") or "")
            for item in discarded
            if isinstance(item, Mapping) and item.get("text")
        ]
        text += " " + (
            ngettext(
                "%(count)d thing was discarded: %(items)s.",
                "%(count)d things were discarded: %(items)s.",
                len(discarded),
            )
            % {"count": len(discarded), "items": "; ".join(lines) or "…"}
        )
    return text


def _draw_renewed(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    return _("%(who)s renewed the draws of turn %(turn)s.") % {"who": who, "turn": turn or "?"}


def _game_ended(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    if turn:
        return _("%(who)s ended the game in turn %(turn)s.") % {"who": who, "turn": turn}
    return _("%(who)s ended the game.") % {"who": who}


def _game_reopened(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    return _("%(who)s reopened the game: turn %(turn)s is open again, paused with %(time)s.") % {
        "who": who,
        "turn": turn or "?",
        "time": _minutes(d.get("seconds")),
    }


def _place(spot: Any, ctx: LogContext) -> str:
    if not isinstance(spot, Mapping):
        return _("not on the map")
    if spot.get("province") is None:
        return _("destroyed")
    return ctx.province(spot.get("province"))


def _army_corrected(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    after = d.get("after")
    if isinstance(after, Mapping) and after.get("province") is None:
        return _("%(who)s destroyed %(army)s by a correction (it stood in %(before)s).") % {
            "who": who,
            "army": ctx.army(d.get("army")),
            "before": _place(d.get("before"), ctx),
        }
    return _("%(who)s corrected %(army)s: from %(before)s to %(after)s.") % {
        "who": who,
        "army": ctx.army(d.get("army")),
        "before": _place(d.get("before"), ctx),
        "after": _place(d.get("after"), ctx),
    }


def _control_corrected(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s corrected who controls %(province)s: from %(before)s to %(after)s.") % {
        "who": who,
        "province": ctx.province(d.get("province")),
        "before": _clan(d.get("before")),
        "after": _clan(d.get("after")),
    }


def _announcement(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s announced: “%(text)s”") % {"who": who, "text": d.get("text", "")}


def _instruction_sent(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    to = d.get("to")
    return _("%(who)s wrote to %(to)s: “%(text)s”") % {
        "who": who,
        "to": ctx.player(to) if to else _("all the Generals of the clan"),
        "text": d.get("text", ""),
    }


CALL_REASONS: dict[str, Promise] = {
    "rules": gettext_lazy("a rules question"),
    "dispute": gettext_lazy("a dispute"),
    "late": gettext_lazy("a late arrival"),
    "device": gettext_lazy("a problem with the phone or the site"),
    "other": gettext_lazy("something else"),
}


def call_reason_text(code: Any) -> str:
    return str(CALL_REASONS.get(str(code), code or ""))


def _call_made(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    values = {"who": who, "reason": call_reason_text(d.get("call_reason"))}
    where = d.get("province")
    if where:
        sentence = _("%(who)s called a judge to %(province)s: %(reason)s.") % {
            **values,
            "province": ctx.province(where),
        }
    else:
        sentence = _("%(who)s called a judge: %(reason)s.") % values
    text = d.get("text")
    return f"{sentence} “{text}”" if text else sentence


def _call_taken(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s took the call of %(player)s.") % {
        "who": who,
        "player": ctx.player(d.get("player")),
    }


def _call_closed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    sentence = _("%(who)s closed the call of %(player)s.") % {
        "who": who,
        "player": ctx.player(d.get("player")),
    }
    note = d.get("note")
    return f"{sentence} “{note}”" if note else sentence


def _call_withdrawn(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s withdrew the call for a judge.") % {"who": who}


def _at_table(template: Promise) -> Sentence:
    def sentence(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
        return str(template) % {
            "who": who,
            "province": ctx.province(d.get("province")),
            "armies": ctx.armies(d.get("armies")),
        }

    return sentence


def _battle_seats_changed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("The table in %(province)s changed: %(joined)s joined, %(left)s left.") % {
        "province": ctx.province(d.get("province")),
        "joined": ctx.armies(d.get("joined")),
        "left": ctx.armies(d.get("left")),
    }


def _battle_reinforced(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    template = (
        _("%(armies)s joined the battle in %(province)s as reinforcements.")
        if d.get("seated")
        else _("%(armies)s arrived at the battle in %(province)s and wait for its result.")
    )
    return str(template) % {
        "province": ctx.province(d.get("province")),
        "armies": ctx.armies(d.get("armies")),
    }


def _battle_vote(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    template = (
        _("%(who)s voted for battle in %(province)s.")
        if d.get("vote") == "battle"
        else _("%(who)s voted for peace in %(province)s.")
    )
    return str(template) % {"who": who, "province": ctx.province(d.get("province"))}


def _battle_started(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("The battle in %(province)s began (called by %(army)s): %(armies)s.") % {
        "province": ctx.province(d.get("province")),
        "army": ctx.army(d.get("called_by")),
        "armies": ctx.armies(d.get("armies")),
    }


def _battle_action(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("At the table in %(province)s, %(who)s %(move)s.") % {
        "who": who,
        "province": ctx.province(d.get("province")),
        "move": _battle_move(d.get("move"), ctx),
    }


def _battle_proposal(template: Promise) -> Sentence:
    def sentence(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
        return str(template) % {
            "who": who,
            "province": ctx.province(d.get("province")),
            "to": ctx.army(d.get("to_army")),
            "by": ctx.army(d.get("by_army")),
            "move": _battle_move(d.get("move"), ctx),
        }

    return sentence


def _battle_decided(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("The battle in %(province)s is decided: %(outcome)s.") % {
        "province": ctx.province(d.get("province")),
        "outcome": battle_outcome_text(d.get("outcome"), ctx),
    }


def _battle_ended(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("The battle in %(province)s ended: %(outcome)s; %(casualties)s.") % {
        "province": ctx.province(d.get("province")),
        "outcome": battle_outcome_text(d.get("outcome"), ctx),
        "casualties": battle_casualties_text(d.get("casualties"), ctx),
    }


def _battle_corrected(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    after = _mapping(d.get("after"))
    return _("%(who)s corrected the result of the battle in %(province)s: %(outcome)s; %(c)s.") % {
        "who": who,
        "province": ctx.province(d.get("province")),
        "outcome": battle_outcome_text(after.get("outcome"), ctx),
        "c": battle_casualties_text(after.get("casualties"), ctx),
    }


def _battle_stopped(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s stopped the table in %(province)s.") % {
        "who": who,
        "province": ctx.province(d.get("province")),
    }


SENTENCES: dict[str, Sentence] = {
    "tournament_created": _tournament_created,
    "tournament_updated": _tournament_updated,
    "tournament_gong_set": _tournament_gong_set,
    "player_registered": _player_registered,
    "player_renamed": _player_renamed,
    "player_moved": _player_moved,
    "player_removed": _player_removed,
    "player_replaced": _player_replaced,
    "player_checked_in": _player_checked_in,
    "player_marked_present": _player_marked_present,
    "player_presence_cleared": _player_presence_cleared,
    "player_stood_in": _player_stood_in,
    "lineup_shrunk": _lineup_shrunk,
    "join_link_reissued": _join_link_reissued,
    "join_link_revoked": _join_link_revoked,
    "judge_added": _judge_sentence(gettext_lazy("%(who)s added judge %(judge)s.")),
    "judge_invited": _judge_sentence(gettext_lazy("%(who)s invited a new judge, %(judge)s.")),
    "judge_link_renewed": _judge_sentence(
        gettext_lazy("%(who)s made a new sign-in link for judge %(judge)s.")
    ),
    "judge_removed": _judge_sentence(gettext_lazy("%(who)s removed judge %(judge)s.")),
    "judge_key_created": _judge_key(gettext_lazy("%(who)s created the API key “%(label)s”.")),
    "judge_key_revoked": _judge_key(gettext_lazy("%(who)s revoked the API key “%(label)s”.")),
    "planning_started": _plain(gettext_lazy("%(who)s started the clans' planning.")),
    "deployment_started": _plain(
        gettext_lazy("%(who)s asked the clans to declare their starting positions.")
    ),
    "start_positions": _start_positions,
    "negotiation_started": _plain(gettext_lazy("%(who)s started the negotiation.")),
    "order_given": _order_given,
    "order_withdrawn": _order_withdrawn,
    "order_refused": _order_refused,
    "clock_paused": _clock_paused,
    "clock_resumed": _clock_resumed,
    "clock_extended": _clock_extended,
    "army_corrected": _army_corrected,
    "control_corrected": _control_corrected,
    "announcement": _announcement,
    "instruction_sent": _instruction_sent,
    "call_made": _call_made,
    "call_taken": _call_taken,
    "call_closed": _call_closed,
    "call_withdrawn": _call_withdrawn,
    "battle_opened": _at_table(gettext_lazy("A table opened in %(province)s for %(armies)s.")),
    "battle_seats_changed": _battle_seats_changed,
    "battle_dispersed": _at_table(
        gettext_lazy("The meeting in %(province)s dispersed: the armies left.")
    ),
    "battle_reinforced": _battle_reinforced,
    "battle_reinforcement_refused": _at_table(
        gettext_lazy("%(armies)s could not join the battle in %(province)s.")
    ),
    "battle_vote": _battle_vote,
    "battle_peace": _at_table(gettext_lazy("Peace was made in %(province)s.")),
    "battle_started": _battle_started,
    "battle_action": _battle_action,
    "battle_proposal_made": _battle_proposal(
        gettext_lazy("At the table in %(province)s, %(who)s proposed to %(to)s: %(move)s.")
    ),
    "battle_proposal_confirmed": _battle_proposal(
        gettext_lazy(
            "At the table in %(province)s, %(by)s %(move)s, as proposed; %(who)s confirmed it."
        )
    ),
    "battle_proposal_declined": _battle_proposal(
        gettext_lazy("At the table in %(province)s, %(who)s declined the proposal: %(move)s.")
    ),
    "battle_proposal_withdrawn": _battle_proposal(
        gettext_lazy("At the table in %(province)s, %(who)s withdrew the proposal: %(move)s.")
    ),
    "battle_decided": _battle_decided,
    "battle_ended": _battle_ended,
    "battle_corrected": _battle_corrected,
    "battle_stopped": _battle_stopped,
    "site_changed": _site_changed,
    "battle_resumed": _at_table(
        gettext_lazy("The table in %(province)s goes on: the game was reopened.")
    ),
}

# The sentences that say which turn they are about (the others show it in the turn column).
TURN_SENTENCES: dict[str, Callable[[str, Mapping[str, Any], LogContext, Any], str]] = {
    "turn_opened": _turn_opened,
    "turn_resolved": _turn_resolved,
    "turn_undone": _turn_undone,
    "turn_deadline_missed": _deadline_missed,
    "turn_deadline_ruled": _deadline_ruled,
    "backup_restored": _backup_restored,
    "draw_renewed": _draw_renewed,
    "game_ended": _game_ended,
    "game_reopened": _game_reopened,
}


def log_text(entry: Entry, ctx: LogContext) -> str:
    """``entry`` (a row of ``selectors.tournament_log``) as one sentence, with its reason."""
    action = str(entry.get("action") or "")
    data = _mapping(entry.get("data"))
    who = log_who(str(entry.get("by") or ""))
    try:
        if action in TURN_SENTENCES:
            text = TURN_SENTENCES[action](who, data, ctx, entry.get("turn"))
        elif action in SENTENCES:
            text = SENTENCES[action](who, data, ctx)
        else:
            text = _("%(who)s made a change that this page cannot describe.") % {"who": who}
    except (TypeError, ValueError, KeyError, AttributeError):
        # Data written by an older version of the site: still a sentence, not an error page.
        text = _("%(who)s made a change that this page cannot describe.") % {"who": who}
    text = text[:1].upper() + text[1:]
    reason = str(entry.get("reason") or "").strip()
    if reason and action not in ("announcement", "instruction_sent"):
        text = _("%(text)s Reason given: “%(reason)s”.") % {"text": text, "reason": reason}
    return text


__all__ = [
    "BATTLE_MOVES",
    "LOG_KINDS",
    "LogContext",
    "battle_casualties_text",
    "battle_outcome_text",
    "log_actor_player",
    "log_context",
    "log_kind",
    "log_text",
    "log_who",
]
