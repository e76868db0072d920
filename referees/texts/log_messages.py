"""The log's sentences of messages: announcements, a Daimyo's written instructions (R1.1) and
calls for a judge.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from referees.texts.log_words import (
    LogContext,
    Sentence,
)


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


MESSAGE_SENTENCES: dict[str, Sentence] = {
    "announcement": _announcement,
    "instruction_sent": _instruction_sent,
    "call_made": _call_made,
    "call_taken": _call_taken,
    "call_closed": _call_closed,
    "call_withdrawn": _call_withdrawn,
}
