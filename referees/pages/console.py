"""The judge console: set-up, the clock, the war map, orders, corrections, announcements
and the log, on one page.

The page draws what ``tournament_state`` lets a judge see, and its live parts update from
the same state over ``static/js/live.js``. Every judge action on the console is a call to
the JSON API (``docs/api.md``); nothing here changes the game. Times are shown in the
tournament's time zone.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import get_language, gettext_lazy
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.http.refusals import judge_or_refusal
from referees.kernel.access import (
    player_link_row,
    tournament_players,
)
from referees.kernel.visibility import Viewer
from referees.models import Player, Tournament
from referees.pages.common import (
    CLAN_COLOURS,
    COMMON_STRINGS,
    choice_labels,
    clan_rows,
    province_rows,
    script_texts,
    tournament_drawing,
)
from referees.reading.state import tournament_state
from referees.texts.log import LOG_KINDS
from referees.texts.words import DRAW_METHODS, state_turn_words
from sl5r.public_url import qr_svg, site_url_current
from strategic_map.models import Order

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


def _neighbours(map_data: dict[str, Any]) -> dict[str, list[str]]:
    found: dict[str, set[str]] = {}
    for border in map_data.get("borders", []):
        if isinstance(border, list) and len(border) == 2:
            a, b = (str(x) for x in border)
            found.setdefault(a, set()).add(b)
            found.setdefault(b, set()).add(a)
    return {p: sorted(n) for p, n in found.items()}


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
            "clans": clan_rows(tournament),
            "clanColours": CLAN_COLOURS,
            "provinces": province_rows(map_data),
            "neighbours": _neighbours(map_data),
            "players": [
                player_link_row(request, p) for p in tournament_players(tournament=tournament)
            ],
            # A player's page is this followed by his id and "/" (roster_pages.player_edit).
            "playerPages": reverse("referees:player_edit", args=[tournament.pk, 0]).removesuffix(
                "0/"
            ),
            "phases": choice_labels(Tournament.Phase.choices),
            "roles": choice_labels(Player.Role.choices),
            "orderKinds": choice_labels(Order.Kind.choices),
            "logActions": script_texts(LOG_ACTIONS),
            "drawMethods": script_texts(DRAW_METHODS),
            "strings": script_texts(JUDGE_STRINGS),
        }
        return render(
            request,
            "referees/judge.html",
            {
                "tournament": tournament,
                "state": state,
                "turn_words": state_turn_words(state["tournament"]),
                "config": config,
                "drawing": tournament_drawing(tournament),
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
