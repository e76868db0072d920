"""The history of played turns, one at a time: each turn's orders and outcomes, its draws,
its battles and the map after it.

The page draws what ``turn_history`` lets its viewer see: judges always, anyone else only
where the public may see the armies (R1.1). Times are shown in the tournament's time zone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from battles.selectors import battles_of_turn
from referees.http.refusals import problem_page
from referees.kernel.access import tournament_get, user_judges
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer
from referees.models import Tournament
from referees.pages.common import CLAN_COLOURS, COMMON_STRINGS, province_rows, tournament_drawing
from referees.reading.history import resolved_turn_numbers, turn_history
from referees.reading.state import tournament_state
from referees.texts.log import log_context, log_who
from referees.texts.log_battles import battle_casualties_text, battle_outcome_text
from referees.texts.log_turns import rejection_text
from referees.texts.log_words import LogContext
from referees.texts.words import DRAW_METHODS, ON_SWAP, OUTCOMES
from strategic_map.clans import clan_name


@never_cache
@require_safe
def history(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Every played turn, one at a time: its orders and outcomes, its draws, the map after it.

    Judges always; anyone else only where the public may see the armies (no clan has a
    Daimyo, R1.1).
    """
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return problem_page(request, 404, _("Not found"), error.message)
    if user_judges(request.user, tournament):
        viewer = Viewer.judge(label=f"judge {request.user.get_username()}")
    else:
        viewer = Viewer.public()
    with timezone.override(tournament.time_zone):
        now = timezone.now()
        state = tournament_state(tournament=tournament, viewer=viewer, now=now)
        if not state["viewer"]["sees_all_armies"]:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            return problem_page(
                request,
                403,
                _("Judges only"),
                _(
                    "A clan of this tournament has a Daimyo, so the armies are not public: "
                    "only a judge may see the played turns."
                ),
            )
        numbers = resolved_turn_numbers(tournament=tournament)
        number = _turn_asked(request, numbers)
        turn = (
            turn_history(tournament=tournament, number=number, viewer=viewer)
            if number is not None
            else None
        )
        names = {p["id"]: p["name"] for p in province_rows(tournament.campaign.map_data)}
        if turn is not None:
            turn["resolved_at_time"] = (
                datetime.fromisoformat(turn["resolved_at"]) if turn["resolved_at"] else None
            )
            _label_turn(turn, names)
            turn["battles"] = _history_battles(tournament, number or 0, viewer, names)
        position = numbers.index(number) if number in numbers else -1
        config = {
            "tournamentId": tournament.pk,
            "clanColours": CLAN_COLOURS,
            "strings": {
                "battle": str(COMMON_STRINGS["map_battle"]),
                "meeting": str(COMMON_STRINGS["map_meeting"]),
            },
            # What the map overlay draws: the board after the turn, with its orders.
            "state": _history_overlay(turn) if turn is not None else None,
        }
        return render(
            request,
            "referees/history.html",
            {
                "tournament": tournament,
                "numbers": numbers,
                "number": number,
                "turn": turn,
                "previous": numbers[position - 1] if position > 0 else None,
                "next": numbers[position + 1] if 0 <= position < len(numbers) - 1 else None,
                "drawing": tournament_drawing(tournament) if turn is not None else None,
                "config": config,
                "is_judge": viewer.kind == "judge",
            },
        )


def _turn_asked(request: HttpRequest, numbers: list[int]) -> int | None:
    """The turn in ``?turn=``, or the last one played."""
    asked = request.GET.get("turn", "")
    if asked.isdigit() and int(asked) in numbers:
        return int(asked)
    return numbers[-1] if numbers else None


def _order_text(order: dict[str, Any], names: dict[str, str]) -> str:
    if order["kind"] == "move":
        text = _("move to %(path)s") % {"path": " → ".join(names.get(p, p) for p in order["path"])}
    elif order["kind"] == "reform":
        text = _("reform in %(province)s") % {
            "province": names.get(order["reform"], order["reform"])
        }
    else:
        text = _("hold")
    notes = []
    if order.get("claim") is False:
        notes.append(_("does not claim"))
    if order.get("on_swap") == "stay" and order["kind"] == "move":
        notes.append(_("on a swap: stay"))
    if order.get("late"):
        notes.append(_("late"))
    return f"{text} ({', '.join(notes)})" if notes else text


def _rejection_text(reason: str | None) -> str | None:
    """A rejected order's reason (``"<code>: <text>"``) in the active language."""
    return rejection_text(reason) if reason else reason


def _seat_text(seat: dict[str, Any], context: LogContext) -> str:
    if not seat["reinforcement"]:
        return context.army(seat["code"])
    return _("%(army)s (reinforcement from turn %(turn)s)") % {
        "army": context.army(seat["code"]),
        "turn": seat["joined_turn"],
    }


def _history_battles(
    tournament: Tournament, number: int, viewer: Viewer, names: dict[str, str]
) -> list[dict[str, Any]]:
    """The tables turn ``number`` opened or decided (R7, R8), in words for the history."""
    context = log_context(tournament)
    rows = battles_of_turn(tournament=tournament, number=number, viewer=viewer)
    for row in rows:
        row["province_name"] = names.get(row["province"], row["province"])
        row["armies_text"] = ", ".join(_seat_text(a, context) for a in row["armies"])
        row["result_text"] = battle_outcome_text(row["outcome"], context) if row["outcome"] else ""
        row["casualties_text"] = (
            battle_casualties_text(row["casualties"], context) if row["outcome"] else ""
        )
    return rows


def _label_turn(turn: dict[str, Any], names: dict[str, str]) -> None:
    """Names for people on the rows of a played turn (clans, orders, outcomes, draws)."""
    for order in turn["orders"]:
        order["clan_name"] = clan_name(order["clan"]) if order.get("clan") else ""
        outcome = order.get("outcome")
        order["outcome_label"] = str(OUTCOMES.get(outcome, outcome or ""))
        order["reason"] = _rejection_text(order.get("reason"))
        order["text"] = _order_text(order, names)
        order["from_name"] = names.get(order["from"], order["from"] or "")
        order["province_name"] = names.get(order["province"], order["province"] or "")
        order["given_at_time"] = (
            datetime.fromisoformat(order["given_at"]) if order.get("given_at") else None
        )
        # "Ivan (General, Crab)" or "judge Anna", in the page's language, as the log says it.
        order["given_by_words"] = log_who(order["given_by"]) if order.get("given_by") else ""
    for draw in turn["draws"]:
        draw["method_label"] = str(DRAW_METHODS.get(draw.get("method", ""), draw.get("method")))
        on_swap = draw.get("on_swap") or ""
        draw["on_swap_label"] = str(ON_SWAP[on_swap]) if on_swap in ON_SWAP else on_swap
        draw["names"] = [names.get(p, p) for p in draw.get("provinces", [])]
        draw["moving_from_name"] = names.get(draw.get("moving_from"), draw.get("moving_from"))
    for meeting in [*turn["meetings"], *turn["reinforcements"]]:
        meeting["province_name"] = names.get(meeting["province"], meeting["province"])
    for change in turn["control_changes"]:
        change["province_name"] = names.get(change["province"], change["province"])
        change["before_name"] = clan_name(change["before"]) if change["before"] else ""
        change["after_name"] = clan_name(change["after"]) if change["after"] else ""
    if turn.get("scores"):
        turn["score_rows"] = sorted(
            ({"clan": c, "name": clan_name(c), "total": t} for c, t in turn["scores"].items()),
            key=lambda row: (-row["total"], row["name"]),
        )


def _history_overlay(turn: dict[str, Any]) -> dict[str, Any]:
    """A played turn in the shape of a state, for the map overlay (``renderOverlay``)."""
    return {
        "viewer": {"kind": "public", "sees_all_armies": turn["sees_all_armies"]},
        "visible_provinces": None,
        "armies": turn["armies"],
        "control": turn["control"],
        "orders": [
            {
                "army": o["army"],
                "clan": o["clan"],
                "kind": o["kind"],
                "path": o["path"],
                "reform": o["reform"],
                "from": o["from"],
                "outcome": o["outcome"],
            }
            for o in turn["orders"]
            if o["outcome"] != "rejected"
        ],
        "meetings": turn["meetings"],
    }
