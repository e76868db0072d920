"""The players' pages: a General's orders page and the Daimyo's / Karo's clan page.

Thin views: they identify the player from the session (``/join/<token>`` signed the device
in), check he plays in this tournament, and render the page with the static map drawing.
Everything that changes (armies, control, orders, the clock) arrives in the browser from
``GET /api/tournaments/{id}/state``, the same selector that decides what each role may see
(R1.1), through ``static/js/live.js``; so nothing a player may not see is ever in a page.

Before the turns, both pages say what happens now and next (R3), worded here for the
player's role; ``static/js/players.js`` shows the words of the phase the state is in.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.http.refusals import problem_page
from referees.kernel.access import (
    player_declares_for,
    player_from_session,
    tournament_get,
    tournament_players,
)
from referees.kernel.core import TournamentError
from referees.kernel.deadlines import tournament_clock
from referees.kernel.visibility import Viewer, clan_roles
from referees.models import Instruction, JudgeCall, Player, Tournament
from referees.reading.messages import visible_instructions
from sl5r.api_errors import error_status
from sl5r.rules.roles import Role, Visibility, role_visibility
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, map_drawing


def not_joined(request: HttpRequest) -> HttpResponse:
    return problem_page(
        request,
        403,
        _("You have not joined"),
        _(
            "Open your join link (scan the QR code on your card). If you already did, "
            "the link has been revoked or replaced: ask a judge."
        ),
    )


def player_page_url(player: Player) -> str:
    """Where a joined player's page is: a General's orders page, or his clan's page."""
    name = "referees:general" if player.role == Player.Role.GENERAL else "referees:clan"
    return reverse(name, args=[player.tournament_id])


def joined_player(
    request: HttpRequest, tournament_id: int
) -> tuple[Player, Tournament] | HttpResponse:
    """The player this device joined as and his tournament, or the page to answer instead."""
    player = player_from_session(request.session)
    if player is None:
        return not_joined(request)
    if player.tournament_id != tournament_id:
        return problem_page(
            request,
            403,
            _("Not your tournament"),
            _("This device joined another tournament. Open your own page, or your join link."),
        )
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return problem_page(request, error_status(error), _("No such tournament"), error.message)
    return player, tournament


def _page_context(player: Player, tournament: Tournament) -> dict[str, Any]:
    roles = clan_roles(tournament)
    clan_has = roles.get(player.clan, [])
    sight = role_visibility(Role(player.role), clan_has)
    style = CLAN_STYLES.get(player.clan)
    return {
        "player": player,
        "tournament": tournament,
        "clan_name": clan_name(player.clan),
        "clan_colour": style.colour if style else "",
        "role_label": str(Player.Role(player.role).label),
        "army_code": player.army.code if player.army else "",
        "drawing": map_drawing(tournament.campaign.map_data),
        "has_daimyo": Role.DAIMYO in clan_has,
        "has_karo": Role.KARO in clan_has,
        "sight": sight,
        "is_scorpion": player.clan == "scorpion",
        "is_unicorn": player.clan == "unicorn",
        "clan_abilities": tournament.campaign.clan_abilities,
        "excluded_clans": list(tournament.campaign.excluded_clans),
        # R1.1: the written instructions he may read (none for a Karo); the script keeps
        # the list current from the state.
        "instructions": _instructions(player, tournament),
        "max_instruction": Instruction.MAX_TEXT,
        "call_reasons": JudgeCall.Reason.choices,
        "declares": player_declares_for(player, tournament, player.clan),
        **_start_context(player, tournament, sight),
    }


def _start_context(player: Player, tournament: Tournament, sight: Visibility) -> dict[str, Any]:
    """The start panel's texts, and those of the phase now as the page opens (the script
    takes over with the live state)."""
    texts = start_texts(player, tournament, sight)
    left = tournament_clock(tournament, timezone.now())["remaining"]
    hours, rest = divmod(math.ceil(left or 0), 3600)
    minutes, seconds = divmod(rest, 60)
    # As players.js formatClock shows it.
    clock = f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"
    if left is None:
        clock = "--:--"
    return {
        "start_texts": texts,
        "start_now": texts.get(f"now-{tournament.phase}", ""),
        "start_next": texts.get(f"next-{tournament.phase}", "").replace("{time}", clock),
    }


def clan_daimyo(tournament: Tournament, clan: str) -> Player | None:
    return (
        Player.objects.filter(tournament=tournament, clan=clan, role=Player.Role.DAIMYO)
        .order_by("id")
        .first()
    )


def duration_text(seconds: int) -> str:
    """A phase's length in words: whole minutes where it is, else seconds."""
    if seconds and seconds % 60 == 0:
        minutes = seconds // 60
        return ngettext("%(count)s minute", "%(count)s minutes", minutes) % {"count": minutes}
    return ngettext("%(count)s second", "%(count)s seconds", seconds) % {"count": seconds}


def start_texts(player: Player, tournament: Tournament, sight: Visibility) -> dict[str, str]:
    """What happens now and next before the turns (R3), for ``player``'s role: the page
    shows the texts of the state's phase, ``{time}`` filled with its countdown.

    Keys are ``now-<phase>`` and ``next-<phase>``, the positions link's texts (``declare``,
    ``declared-<phase>``) for the player who declares for his clan, and the clan's status
    (``clan-declared``, ``clan-undeclared``) for the others.
    """
    clan = clan_name(player.clan)
    declares = player_declares_for(player, tournament, player.clan)
    daimyo = clan_daimyo(tournament, player.clan)
    values = {
        "clan": clan,
        "daimyo": daimyo.name if daimyo is not None else "",
        "planning": duration_text(tournament.planning_seconds),
        "negotiation": duration_text(tournament.negotiation_seconds),
    }
    if declares and daimyo is None:
        who = _(
            "Your clan has no Daimyo: its Generals declare for the %(clan)s, you or another, "
            "and the last declaration counts."
        )
    elif declares:
        who = _("You declare the starting positions for the %(clan)s.")
    else:
        who = _("%(daimyo)s, your Daimyo, declares the starting positions for the %(clan)s.")
    if sight.negotiates:
        talks = _("Alliances are made now: talk with the other clans.")
    elif player.role == Player.Role.KARO:
        talks = _(
            "Alliances are made now. %(daimyo)s, your Daimyo, negotiates for the %(clan)s; "
            "as Karo you talk only to your own clan (R1.1)."
        )
    else:
        talks = _(
            "Alliances are made now. %(daimyo)s, your Daimyo, negotiates for the %(clan)s; "
            "a General whose clan has a Daimyo does not negotiate (R1.1)."
        )
    texts = {
        "now-setup": _("The tournament has not started yet."),
        "next-setup": _(
            "When a judge starts it: %(planning)s of clan planning, in which your clan "
            "decides where its armies start, then %(negotiation)s of negotiation, then turn 1."
        ),
        "now-planning": _("Clan planning: your clan decides where its armies start.") + " " + who,
        "next-planning": _(
            "Clan planning ends in {time}. Next: the starting positions are fixed, then "
            "%(negotiation)s of negotiation, then turn 1."
        ),
        "now-deployment": _(
            "Clan planning is over: the clans that have not declared their starting "
            "positions declare them now."
        )
        + " "
        + who,
        "next-deployment": _(
            "Next: %(negotiation)s of negotiation once every clan has declared, then turn 1."
        ),
        "now-negotiation": _("Negotiation.") + " " + talks,
        "next-negotiation": _("Turn 1 starts in {time}."),
    }
    if declares:
        texts["declare"] = _("Declare your starting positions")
        texts["declared-planning"] = _(
            "Starting positions declared ✓ (change until clan planning ends, in {time})"
        )
        texts["declared-deployment"] = _(
            "Starting positions declared ✓ (change until every clan has declared)"
        )
    else:
        texts["clan-declared"] = _("Your clan has declared its starting positions ✓")
        texts["clan-undeclared"] = _("Your clan has not declared its starting positions yet.")
    return {key: text % values if "%(" in text else text for key, text in texts.items()}


def _instructions(player: Player, tournament: Tournament) -> list[dict[str, Any]]:
    rows = visible_instructions(tournament=tournament, viewer=Viewer.of_player(player))
    return [{**row, "at_time": datetime.fromisoformat(row["at"])} for row in rows]


@never_cache
@require_safe
def general_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A General's page (phone first): his army, the clock, his order."""
    found = joined_player(request, tournament_id)
    if isinstance(found, HttpResponse):
        return found
    player, tournament = found
    if player.role != Player.Role.GENERAL:
        return redirect("referees:clan", tournament_id=tournament_id)
    return render(request, "referees/general.html", _page_context(player, tournament))


@never_cache
@require_safe
def clan_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The Daimyo's and the Karo's page: the war map and the clan's Generals."""
    found = joined_player(request, tournament_id)
    if isinstance(found, HttpResponse):
        return found
    player, tournament = found
    if player.role == Player.Role.GENERAL:
        return redirect("referees:general", tournament_id=tournament_id)
    context = _page_context(player, tournament)
    # The clan's own Generals and their armies: a Daimyo and a Karo know their own clan.
    context["generals"] = [
        p
        for p in tournament_players(tournament=tournament)
        if p.clan == player.clan and p.role == Player.Role.GENERAL
    ]
    return render(request, "referees/clan.html", context)
