"""The log's sentences of the game's course: the start's steps, orders (R4), the clock, the
turns and their resolution, missed deadlines, undo, restores and the judges' corrections.
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
    TurnSentence,
    clan_word,
    list_of,
    mapping_of,
    minutes_and_seconds,
    order_words,
)
from referees.texts.words import REJECTIONS


def _plain(template: Promise) -> Sentence:
    def sentence(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
        return str(template) % {"who": who}

    return sentence


def _start_positions(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    positions = mapping_of(d.get("positions"))
    return _("%(who)s declared the starting positions of the %(clan)s: %(positions)s.") % {
        "who": who,
        "clan": clan_word(d.get("clan")),
        "positions": ", ".join(
            _("%(army)s in %(province)s") % {"army": ctx.army(a), "province": ctx.province(p)}
            for a, p in sorted(positions.items())
        ),
    }


def _order_given(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s gave %(army)s the order: %(order)s.") % {
        "who": who,
        "army": ctx.army(d.get("army")),
        "order": order_words(d, ctx),
    }


def _order_refused(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    code = str(d.get("code") or "")
    if code == "late":
        reason = _("it arrived after the deadline")
    elif code in REJECTIONS:
        reason = str(REJECTIONS[code])
    else:
        reason = str(d.get("refusal") or code or "…")
    order = _("withdraw the order") if d.get("kind") == "withdraw" else order_words(d, ctx)
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
        "time": minutes_and_seconds(d.get("remaining")),
    }


def _clock_resumed(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    return _("%(who)s resumed the clock with %(time)s left.") % {
        "who": who,
        "time": minutes_and_seconds(d.get("remaining")),
    }


def _clock_extended(who: str, d: Mapping[str, Any], ctx: LogContext) -> str:
    seconds = d.get("seconds")
    template = (
        _("%(who)s took %(time)s off the clock.")
        if isinstance(seconds, int | float) and seconds < 0
        else _("%(who)s gave the clock %(time)s more.")
    )
    return str(template) % {"who": who, "time": minutes_and_seconds(seconds)}


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
        "before": clan_word(d.get("before")),
        "after": clan_word(d.get("after")),
    }


def _turn_opened(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    return _("%(who)s opened turn %(turn)s.") % {"who": who, "turn": turn or "?"}


def _turn_resolved(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    draws = list_of(d.get("draws"))
    meetings = list_of(d.get("meetings"))
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
    for order in list_of(d.get("rejected")):
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
    ) % {"written": ctx.clock_time(d.get("written_at")), "age": minutes_and_seconds(d.get("age"))}
    orders = [o for o in list_of(d.get("orders")) if isinstance(o, Mapping)]
    if turn and orders:
        listed = "; ".join(
            _("%(army)s: %(order)s (%(time)s)")
            % {
                "army": o.get("army", "?"),
                "order": order_words(o, ctx),
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


def _deadline_missed(who: str, d: Mapping[str, Any], ctx: LogContext, turn: Any) -> str:
    text = _(
        "The deadline of turn %(turn)s (%(deadline)s) passed while the server was not "
        "serving: the turn was resolved %(late)s late, and orders sent around the deadline "
        "may have been refused as late through no fault of their senders."
    ) % {
        "turn": turn or "?",
        "deadline": ctx.clock_time(d.get("deadline")),
        "late": minutes_and_seconds(d.get("late_by")),
    }
    orders = [o for o in list_of(d.get("orders")) if isinstance(o, Mapping)]
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
    discarded = list_of(d.get("discarded"))
    text = _("%(who)s undid the resolution of turn %(turn)s; it reopened with %(time)s.") % {
        "who": who,
        "turn": turn or "?",
        "time": minutes_and_seconds(d.get("seconds")),
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
        "time": minutes_and_seconds(d.get("seconds")),
    }


PLAY_SENTENCES: dict[str, Sentence] = {
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
}


# The sentences that say which turn they are about (the others show it in the turn column).
TURN_SENTENCES: dict[str, TurnSentence] = {
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
