"""The judge console, the big screen and the history of played turns: thin page views.

The pages draw what ``tournament_state`` (and ``turn_history``) let their viewer see, and the
live parts update from the same state over ``static/js/live.js``. Every judge action on the
console is a call to the JSON API (``docs/api.md``); nothing here changes the game.

Strings the scripts show are handed to them from here as a JSON catalog, so they are
translated on the server like the templates. Times are shown in the tournament's time zone.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from battles.selectors import battles_of_turn
from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.access import (
    player_link_row,
    tournament_get,
    tournament_players,
    user_judges,
)
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer
from referees.models import Player, Tournament
from referees.reading.history import resolved_turn_numbers, turn_history
from referees.reading.state import tournament_state
from referees.services import tournament_clans
from referees.texts.log import LOG_KINDS, log_context, log_who
from referees.texts.log_battles import battle_casualties_text, battle_outcome_text
from referees.texts.log_turns import rejection_text
from referees.texts.log_words import LogContext
from referees.texts.words import state_turn_words
from sl5r.public_url import public_url as page_public_url
from sl5r.public_url import qr_svg, site_url_current
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, MapDrawing, map_drawing
from strategic_map.models import Order

# The clans' colours and marker shapes on the map, the charts and the swatches.
CLAN_COLOURS: dict[str, str] = {clan: style.colour for clan, style in CLAN_STYLES.items()}
CLAN_SHAPES: dict[str, str] = {clan: style.shape for clan, style in CLAN_STYLES.items()}

# What the scripts write, translated here (gettext_lazy: resolved per request).
COMMON_STRINGS: dict[str, Promise] = {
    "turn": gettext_lazy("Turn"),
    "turn_of": gettext_lazy("Turn %(turn)s of %(total)s"),
    "turn_n": gettext_lazy("Turn %(turn)s"),
    "ended_after_of": gettext_lazy("Ended after turn %(turn)s of %(total)s"),
    "ended_after": gettext_lazy("Ended after turn %(turn)s"),
    "paused": gettext_lazy("Paused"),
    "no_clock": gettext_lazy("No clock is running"),
    "live_connected": gettext_lazy("Live"),
    "live_connecting": gettext_lazy("Connecting…"),
    # Shown whenever the page cannot be sure that it is current (see static/js/live.js).
    "live_offline": gettext_lazy("Offline — this console may be out of date"),
    "turn_over": gettext_lazy("Turn over — waiting for the result"),
    "no_announcements": gettext_lazy("No announcements yet."),
    "points": gettext_lazy("points"),
    "start": gettext_lazy("Start"),
    "scores_by_turn": gettext_lazy("Points after each turn"),
    "chart_description": gettext_lazy(
        "Line chart: each clan's points after every turn; each clan has its own colour, "
        "line pattern and marker."
    ),
    "nobody": gettext_lazy("nobody"),
    "destroyed": gettext_lazy("destroyed"),
    "in_battle": gettext_lazy("in battle"),
    "map_battle": gettext_lazy("A battle is being fought here."),
    "map_meeting": gettext_lazy("Armies of several clans met here last turn."),
}

JUDGE_STRINGS: dict[str, Promise] = {
    **COMMON_STRINGS,
    "done": gettext_lazy("Done."),
    "working": gettext_lazy("Working…"),
    "flag_ruled": gettext_lazy("Ruled on: clear"),
    "reopen_reason": gettext_lazy(
        "Why reopen the game? The turn it left unplayed opens again, paused, with its "
        "orders; the tables it stopped go on. The reason goes in the log."
    ),
    "destroyed_reform": gettext_lazy("destroyed: may reform from turn %(turn)s"),
    "network_error": gettext_lazy(
        "The server could not be reached. Check the connection and try again."
    ),
    "server_error": gettext_lazy("The server answered with an error (%(status)s)."),
    "confirm_end": gettext_lazy("End the game now? The open turn will not be played."),
    "redraw_reason": gettext_lazy(
        "Why renew this turn's draws? The turn gets a new seed, its new commitment is "
        "shown to everyone and the re-draw is logged."
    ),
    "confirm_resolve": gettext_lazy("Resolve turn %(turn)s now?"),
    "confirm_undo": gettext_lazy("Undo the last resolved turn? The clock will pause."),
    "confirm_revoke": gettext_lazy("Revoke %(name)s's join link? His devices are signed out."),
    "confirm_reissue": gettext_lazy(
        "Give %(name)s a new join link? The old one stops working and his devices are signed out."
    ),
    "reason_required": gettext_lazy("Give a reason."),
    "reissue": gettext_lazy("New link"),
    "edit": gettext_lazy("Edit"),
    "revoke": gettext_lazy("Revoke"),
    "copy": gettext_lazy("Copy"),
    "copied": gettext_lazy("Copied"),
    "link_revoked": gettext_lazy("revoked"),
    "no_players": gettext_lazy("No players are registered yet."),
    "no_army": gettext_lazy("no army"),
    "not_placed": gettext_lazy("not placed"),
    "no_order": gettext_lazy("no order (holds)"),
    "orders_given": gettext_lazy("%(given)s of %(expected)s ordered"),
    "orders_waiting": gettext_lazy("no order yet: %(armies)s"),
    "by_judge": gettext_lazy("entered by a judge"),
    # Who gave an order, in the log's words (referees.texts.log.log_who): judge.js whoText.
    "judge_named": gettext_lazy("judge %(name)s"),
    "player_named": gettext_lazy("%(name)s (%(role)s, %(clan)s)"),
    "deadline_at": gettext_lazy("Deadline: %(time)s"),
    "no_meetings": gettext_lazy("No meetings after the last turn."),
    "no_log": gettext_lazy("Nothing recorded yet."),
    "new_meeting": gettext_lazy("new"),
    "choose": gettext_lazy("— choose —"),
    "choose_army": gettext_lazy("Choose the army first."),
    "destroy": gettext_lazy("Destroyed (off the map)"),
    "positions_saved": gettext_lazy("Starting positions of the %(clan)s declared."),
    "player_registered": gettext_lazy("%(name)s registered."),
    "order_saved": gettext_lazy("Order for %(army)s stored."),
    "posted": gettext_lazy("Announcement posted."),
    "log_more": gettext_lazy("more entries are loading…"),
    "move_to": gettext_lazy("move to %(path)s"),
    "reform_in": gettext_lazy("reform in %(province)s"),
    "hold": gettext_lazy("hold"),
    "no_claim": gettext_lazy("does not claim"),
    "on_swap_stay": gettext_lazy("on a swap: stay"),
    "draw": gettext_lazy("Draw on %(a)s–%(b)s: the side from %(from)s moves (%(method)s)"),
    "armies_there": gettext_lazy("Armies"),
    "province_clicked": gettext_lazy("Province %(province)s chosen."),
}

SCREEN_STRINGS: dict[str, Promise] = {
    **COMMON_STRINGS,
    "live_offline": gettext_lazy("Offline — this screen may be out of date"),
    "final_standings": gettext_lazy("Final standings"),
    "game_over": gettext_lazy("The game is over"),
}

LOG_ACTIONS: dict[str, Promise] = {
    "tournament_created": gettext_lazy("tournament created"),
    "tournament_updated": gettext_lazy("settings changed"),
    "tournament_gong_set": gettext_lazy("big screen's gong switched"),
    "player_registered": gettext_lazy("player registered"),
    "player_renamed": gettext_lazy("player renamed"),
    "player_moved": gettext_lazy("player moved to another clan or role"),
    "player_removed": gettext_lazy("player removed"),
    "player_replaced": gettext_lazy("player replaced"),
    "player_checked_in": gettext_lazy("player checked in"),
    "player_marked_present": gettext_lazy("player marked present"),
    "player_presence_cleared": gettext_lazy("presence mark taken back"),
    "player_stood_in": gettext_lazy("seat given to a stand-in"),
    "lineup_shrunk": gettext_lazy("line-up made smaller (R1 b)"),
    "join_link_reissued": gettext_lazy("join link reissued"),
    "join_link_revoked": gettext_lazy("join link revoked"),
    "judge_added": gettext_lazy("judge added"),
    "judge_invited": gettext_lazy("new judge invited"),
    "judge_link_renewed": gettext_lazy("new sign-in link for a judge"),
    "judge_removed": gettext_lazy("judge removed"),
    "judge_key_created": gettext_lazy("judge API key created"),
    "judge_key_revoked": gettext_lazy("judge API key revoked"),
    "planning_started": gettext_lazy("clan planning started"),
    "deployment_started": gettext_lazy("declaring starting positions"),
    "start_positions": gettext_lazy("starting positions declared"),
    "negotiation_started": gettext_lazy("negotiation started"),
    "turn_opened": gettext_lazy("turn opened"),
    "order_given": gettext_lazy("order given"),
    "order_withdrawn": gettext_lazy("order withdrawn"),
    "clock_paused": gettext_lazy("clock paused"),
    "clock_resumed": gettext_lazy("clock resumed"),
    "clock_extended": gettext_lazy("clock changed"),
    "turn_resolved": gettext_lazy("turn resolved"),
    "turn_undone": gettext_lazy("turn undone"),
    "draw_renewed": gettext_lazy("draws renewed with a new seed"),
    "game_ended": gettext_lazy("game ended"),
    "army_corrected": gettext_lazy("army corrected"),
    "control_corrected": gettext_lazy("control corrected"),
    "announcement": gettext_lazy("announcement"),
    "instruction_sent": gettext_lazy("instruction sent"),
    "call_made": gettext_lazy("judge called"),
    "call_taken": gettext_lazy("call taken"),
    "call_closed": gettext_lazy("call closed"),
    "call_withdrawn": gettext_lazy("call withdrawn"),
}

OUTCOMES: dict[str, Promise] = {
    "moved": gettext_lazy("moved"),
    "held": gettext_lazy("held"),
    "blocked": gettext_lazy("blocked (lost the swap)"),
    "stopped": gettext_lazy("stopped halfway"),
    "reformed": gettext_lazy("reformed"),
    "rejected": gettext_lazy("rejected"),
}

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


def _texts(strings: dict[str, Promise]) -> dict[str, str]:
    return {key: str(value) for key, value in strings.items()}


def _clans(tournament: Tournament) -> list[dict[str, str]]:
    return [
        {
            "id": clan,
            "name": clan_name(clan),
            "colour": CLAN_COLOURS.get(clan, "#555"),
            "shape": CLAN_SHAPES.get(clan, "circle"),
        }
        for clan in tournament_clans(tournament)
    ]


def _provinces(map_data: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for raw in map_data.get("provinces", []):
        castle = raw.get("castle")
        rows.append(
            {
                "id": raw["id"],
                "name": raw.get("name") or raw["id"],
                "home_clan": raw.get("home_clan"),
                "castle": bool(castle),
                "impassable": bool(raw.get("impassable")),
            }
        )
    return sorted(rows, key=lambda p: str(p["name"]))


def _neighbours(map_data: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for border in map_data.get("borders", []):
        if isinstance(border, list) and len(border) == 2:
            a, b = (str(x) for x in border)
            found.setdefault(a, set()).add(b)
            found.setdefault(b, set()).add(a)
    return {p: sorted(n) for p, n in found.items()}


def _drawing(tournament: Tournament) -> MapDrawing:
    return map_drawing(tournament.campaign.map_data)


def _labels(choices: Any) -> dict[str, str]:
    return {str(value): str(label) for value, label in choices}


@never_cache
@require_safe
def judge_console(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges: set-up, the clock, the war map, orders, corrections, announcements, the log."""
    tournament, refusal = judge_or_refusal(
        request,
        tournament_id,
        judges_only=_("Only a judge of this tournament may open its console."),
    )
    if refusal is not None:
        return refusal
    assert tournament is not None
    viewer = Viewer.judge(label=f"judge {request.user.get_username()}")
    with timezone.override(tournament.time_zone):
        state = tournament_state(tournament=tournament, viewer=viewer, now=timezone.now())
        map_data: dict[str, Any] = tournament.campaign.map_data
        config = {
            "tournamentId": tournament.pk,
            "api": f"/api/tournaments/{tournament.pk}",
            "timeZone": tournament.time_zone,
            "language": get_language(),
            "clans": _clans(tournament),
            "clanColours": CLAN_COLOURS,
            "provinces": _provinces(map_data),
            "neighbours": _neighbours(map_data),
            "players": [
                player_link_row(request, p) for p in tournament_players(tournament=tournament)
            ],
            # A player's page is this followed by his id and "/" (roster_pages.player_edit).
            "playerPages": reverse("referees:player_edit", args=[tournament.pk, 0]).removesuffix(
                "0/"
            ),
            "phases": _labels(Tournament.Phase.choices),
            "roles": _labels(Player.Role.choices),
            "orderKinds": _labels(Order.Kind.choices),
            "logActions": _texts(LOG_ACTIONS),
            "drawMethods": _texts(DRAW_METHODS),
            "strings": _texts(JUDGE_STRINGS),
        }
        return render(
            request,
            "referees/judge.html",
            {
                "tournament": tournament,
                "state": state,
                "turn_words": state_turn_words(state["tournament"]),
                "config": config,
                "drawing": _drawing(tournament),
                "clans": config["clans"],
                "roles": Player.Role.choices,
                "log_kinds": [(kind, str(label)) for kind, label in LOG_KINDS.items()],
                "provinces": config["provinces"],
                "phase_label": Tournament.Phase(tournament.phase).label,
                "venue_addresses": _venue_addresses(),
            },
        )


def _venue_addresses() -> list[dict[str, Any]]:
    """Under ``make venue``, each of the laptop's addresses the links could carry, with its
    QR code and whether it is the one they carry now."""
    current = site_url_current()
    return [
        {"url": url, "qr": qr_svg(f"{url}/"), "current": url == current}
        for url in settings.SL5R_SITE_CANDIDATES
    ]


@never_cache
@require_safe
def big_screen(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The projector: clock, turn, announcements, the map where the public may see armies,
    and at the end the standings (R12) with the history of scores."""
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return problem_page(request, 404, _("Not found"), error.message)
    with timezone.override(tournament.time_zone):
        state = tournament_state(tournament=tournament, viewer=Viewer.public(), now=timezone.now())
        config = {
            "tournamentId": tournament.pk,
            "timeZone": tournament.time_zone,
            "clans": _clans(tournament),
            "clanColours": CLAN_COLOURS,
            "phases": _labels(Tournament.Phase.choices),
            "strings": _texts(SCREEN_STRINGS),
        }
        sees_all = bool(state["viewer"]["sees_all_armies"])
        public_url = page_public_url(request, reverse("referees:screen", args=[tournament.pk]))
        return render(
            request,
            "referees/screen.html",
            {
                "tournament": tournament,
                "state": state,
                "turn_words": state_turn_words(state["tournament"]),
                "config": config,
                # Only where the public may see the armies is the map drawn at all.
                "drawing": _drawing(tournament) if sees_all else None,
                "sees_all_armies": sees_all,
                # For spectators: this page on their phones, on the venue's address.
                "public_url": public_url,
                "public_qr": qr_svg(public_url),
                "phase_label": Tournament.Phase(tournament.phase).label,
                "standings": _standings(state) if "scores" in state else [],
                "announcements": [
                    {**a, "at": datetime.fromisoformat(a["at"])} for a in state["announcements"]
                ],
            },
        )


def _standings(state: dict[str, Any]) -> list[dict[str, Any]]:
    """R12: clans by points, equal scores sharing the place."""
    rows = sorted(
        (
            {"clan": clan, "name": clan_name(clan), **score}
            for clan, score in state["scores"].items()
        ),
        key=lambda row: (-row["total"], str(row["name"])),
    )
    place = 0
    previous: int | None = None
    for index, row in enumerate(rows, start=1):
        if row["total"] != previous:
            place, previous = index, row["total"]
        row["place"] = place
        row["home_points"] = 2 * row["home_provinces"]
        row["provinces"] = row["home_provinces"] + row["other_provinces"]
    return rows


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
        names = {p["id"]: p["name"] for p in _provinces(tournament.campaign.map_data)}
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
                "drawing": _drawing(tournament) if turn is not None else None,
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
