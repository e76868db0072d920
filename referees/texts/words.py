"""Texts for people that more than one layer needs: why the engine rejected an order, why
declared starting positions were refused (R3.2), and the words of a played turn (what came
of an order, how a swap was drawn) that the history page and the campaign story share.

The rules engine speaks English and names a rejection by a stable code
(``sl5r.rules.turn``); here each code has its reason in words the catalog translates. The
services use it to refuse an order in the reader's language, the history to show why an
order was rejected.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.utils.functional import Promise
from django.utils.translation import gettext, gettext_lazy, gettext_noop

from sl5r.rules.mapgraph import GameMap
from sl5r.rules.roles import StartProblem
from strategic_map.clans import clan_name

# The engine's rejection codes (and the two the campaign services add) with their reasons.
REJECTION_REASONS: dict[str, str] = {
    "late": gettext_noop("the deadline has passed"),
    "in_battle": gettext_noop("the army is in a battle"),
    "destroyed": gettext_noop("the army is destroyed: it can only reform"),
    "too_many_steps": gettext_noop("a move goes one or two provinces"),
    "not_unicorn": gettext_noop("only a Unicorn army may move two provinces"),
    "abilities_off": gettext_noop("clan abilities are off: no two-province moves"),
    "unknown_province": gettext_noop("there is no such province"),
    "not_adjacent": gettext_noop("that province is not next to the army"),
    "impassable": gettext_noop("that province is impassable"),
    "returns": gettext_noop("a two-province move may not end where it started"),
    "occupied": gettext_noop(
        "a two-province move needs both provinces empty at the start of the turn"
    ),
    "not_destroyed": gettext_noop("only a destroyed army can reform"),
    "too_early": gettext_noop("the army may not reform yet"),
    "not_castle": gettext_noop("that province has no castle"),
    "not_home": gettext_noop("that province is not a home province of the army's clan"),
    "not_controlled": gettext_noop("the army's clan does not control that province"),
    "unknown_army": gettext_noop("there is no such army"),
    "not_placed": gettext_noop("the army is not on the map yet"),
    "not_open": gettext_noop("the turn is not open for orders"),
}

# The same, translated when read (the history shows them in the reader's language).
REJECTIONS: dict[str, Promise] = {
    code: gettext_lazy(reason) for code, reason in REJECTION_REASONS.items()
}

# What came of an order, in words: the history page and the campaign story say the same.
OUTCOMES: dict[str, Promise] = {
    "moved": gettext_lazy("moved"),
    "held": gettext_lazy("held"),
    "blocked": gettext_lazy("blocked (lost the swap)"),
    "stopped": gettext_lazy("stopped halfway"),
    "reformed": gettext_lazy("reformed"),
    "rejected": gettext_lazy("rejected"),
}

# How a swap's moving side was chosen (R5.2): drawn, given by a judge, or the Scorpion's.
DRAW_METHODS: dict[str, Promise] = {
    "random": gettext_lazy("drawn at random"),
    "given": gettext_lazy("given"),
    "scorpion": gettext_lazy("the Scorpion's choice"),
}

# A Scorpion's choice on a swap, as the history shows it.
ON_SWAP: dict[str, Promise] = {
    "advance": gettext_lazy("advance"),
    "stay": gettext_lazy("stay"),
}


def order_refusal_text(code: str, message: str) -> str:
    """Why an order is refused, for the person who gave it, in the active language.

    ``message`` is the engine's own sentence: it names the province or the turn, but it is
    English. It is kept where the catalog has no other words for the code's reason (in
    English, or for a code this module does not know); otherwise the translated reason is
    given.
    """
    reason = REJECTION_REASONS.get(code)
    if reason is None:
        return message
    translated = gettext(reason)
    return message if translated == reason else translated


def start_problem_text(
    game_map: GameMap, clan: str, problem: StartProblem, armies: Sequence[str] = ()
) -> str:
    """Why declared starting provinces are refused (R3.2), in the active language.

    ``armies`` are the army codes in the order their provinces were checked, so that a
    problem with one province names the army it was declared for.
    """

    def province(pid: str | None) -> str:
        found = game_map.provinces.get(pid or "")
        return found.name if found is not None else str(pid)

    index = problem.index
    army = armies[index] if index is not None and index < len(armies) else f"#{(index or 0) + 1}"
    values = {"army": army, "province": province(problem.province), "clan": clan_name(clan)}
    if problem.code == "unknown_province":
        return gettext('%(army)s: there is no province "%(province)s"') % values
    if problem.code == "not_home":
        return gettext("%(army)s: %(province)s is not a home province of the %(clan)s") % values
    if problem.code == "impassable":
        return gettext("%(army)s: %(province)s is impassable") % values
    if problem.code == "same_province":
        return (
            gettext(
                "%(army)s: %(province)s is declared for another army too: two armies may not "
                "start in the same province"
            )
            % values
        )
    if problem.code == "too_many":
        return gettext("%(have)s armies but only %(allowed)s home provinces") % {
            "have": problem.have,
            "allowed": problem.allowed,
        }
    return gettext(
        "castle provinces first: %(castles)s must be used before a province without a castle"
    ) % {"castles": ", ".join(province(pid) for pid in problem.provinces)}


def turn_words(*, turn: int, turns_total: int | None, ended_after_turn: int | None) -> str:
    """The turn in words, as every page says it (static/js/screen.js ``turnWords`` writes
    the same): "Turn 3 of 8", or once over "Ended after turn 5 of 8", the last turn played
    ("End the game" leaves its open turn unplayed). Empty before the first turn."""
    if ended_after_turn is not None:
        if turns_total:
            return gettext("Ended after turn %(turn)s of %(total)s") % {
                "turn": ended_after_turn,
                "total": turns_total,
            }
        return gettext("Ended after turn %(turn)s") % {"turn": ended_after_turn}
    if not turn:
        return ""
    if turns_total:
        return gettext("Turn %(turn)s of %(total)s") % {"turn": turn, "total": turns_total}
    return gettext("Turn %(turn)s") % {"turn": turn}


def state_turn_words(tournament: dict[str, object]) -> str:
    """``turn_words`` of a state's ``tournament`` part."""
    turn, total, ended = (
        tournament.get("turn"),
        tournament.get("turns_total"),
        tournament.get("ended_after_turn"),
    )
    return turn_words(
        turn=turn if isinstance(turn, int) else 0,
        turns_total=total if isinstance(total, int) else None,
        ended_after_turn=ended if isinstance(ended, int) else None,
    )
