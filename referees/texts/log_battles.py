"""The log's sentences of the battle tables (R7, R8, R13, R14): a table opened, votes,
moves and proposals, the result and its casualties (R9), corrections; and the words for a
battle's outcome that the history and the judge's console show too.
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
    mapping_of,
)

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
    after = mapping_of(d.get("after"))
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


BATTLE_SENTENCES: dict[str, Sentence] = {
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
    "battle_resumed": _at_table(
        gettext_lazy("The table in %(province)s goes on: the game was reopened.")
    ),
}
