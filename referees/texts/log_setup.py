"""The log's sentences of the set-up (R1): the tournament's settings, the players and their
join links, who came, the venue's address; and of the tournament's judges.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from referees.texts.log_words import (
    LogContext,
    Sentence,
    clan_word,
    list_of,
    role_word,
)


def _duration(seconds: Any) -> str:
    if not isinstance(seconds, int | float):
        return "?"
    minutes = round(seconds / 60)
    return ngettext("%(count)d minute", "%(count)d minutes", minutes) % {"count": minutes}


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
        "role": role_word(d.get("role")),
        "clan": clan_word(d.get("clan")),
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
        "old_role": role_word(d.get("old_role")),
        "old_clan": clan_word(d.get("old_clan")),
        "role": role_word(d.get("role")),
        "clan": clan_word(d.get("clan")),
    }


def _player_removed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s removed %(player)s.") % {"who": who, "player": _player_line(d)}


def _player_replaced(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s replaced %(old)s with %(new)s (%(role)s, %(clan)s).") % {
        "who": who,
        "old": d.get("old_name", "?"),
        "new": d.get("name", "?"),
        "role": role_word(d.get("role")),
        "clan": clan_word(d.get("clan")),
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
        "role": role_word(d.get("role")),
        "clan": clan_word(d.get("clan")),
    }


def _lineup_shrunk(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    leaving = ", ".join(
        str(p.get("name", "?")) for p in list_of(d.get("leaving")) if isinstance(p, Mapping)
    )
    changes = "; ".join(
        _("%(name)s becomes %(role)s")
        % {"name": c.get("name", "?"), "role": role_word(c.get("role"))}
        + (f" ({c['army']})" if c.get("army") else "")
        for c in list_of(d.get("changes"))
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


def _site_changed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _(
        "The venue's address changed from %(before)s to %(after)s: join sheets printed "
        "before carry the old one. Print the join sheet again."
    ) % {"before": d.get("before", "?"), "after": d.get("after", "?")}


SETUP_SENTENCES: dict[str, Sentence] = {
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
    "site_changed": _site_changed,
}
