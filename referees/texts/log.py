"""The tournament log as sentences a person can read out to settle a dispute (R11).

Each entry of ``LogEntry`` keeps its action code and data as they were written (the JSON
export gives them unchanged); this module turns one into a sentence in the reader's
language: who did it (a player's name and army, a judge's name, the clock), what, and how
it ended. One function per action, in a table per domain (``log_setup``, ``log_turns``,
``log_messages``, ``log_battles``) that ``SENTENCES`` gathers; an action without one gets a
plain generic sentence, never its code or its data.
"""

from __future__ import annotations

import re

from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from referees.models import Tournament
from referees.texts.log_battles import BATTLE_SENTENCES
from referees.texts.log_messages import MESSAGE_SENTENCES
from referees.texts.log_setup import SETUP_SENTENCES
from referees.texts.log_turns import PLAY_SENTENCES, TURN_SENTENCES
from referees.texts.log_words import Entry, LogContext, Sentence, mapping_of, role_word
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


def log_context(tournament: Tournament) -> LogContext:
    game_map = campaign_game_map(tournament.campaign)
    players = list(tournament.players.select_related("army"))
    return LogContext(
        provinces={code: p.name for code, p in game_map.provinces.items()},
        army_players={p.army.code: p.name for p in players if p.army is not None},
        players={p.pk: p.name for p in players},
        time_zone=tournament.time_zone or "UTC",
    )


_PLAYER_LABEL = re.compile(r"^(general|daimyo|karo) (.+) \(([a-z]+)\)$")


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
            "role": role_word(role),
            "clan": clan_name(clan),
        }
    return label or _("someone")


# Every action's sentence but those that say their turn (``TURN_SENTENCES``), by domain.
SENTENCES: dict[str, Sentence] = {
    **SETUP_SENTENCES,
    **PLAY_SENTENCES,
    **MESSAGE_SENTENCES,
    **BATTLE_SENTENCES,
}


def log_text(entry: Entry, ctx: LogContext) -> str:
    """``entry`` (a row of ``selectors.tournament_log``) as one sentence, with its reason."""
    action = str(entry.get("action") or "")
    data = mapping_of(entry.get("data"))
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
    "LOG_KINDS",
    "SENTENCES",
    "log_actor_player",
    "log_context",
    "log_kind",
    "log_text",
    "log_who",
]
