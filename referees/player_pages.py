"""The players' pages: a General's orders page and the Daimyo's / Karo's clan page.

Thin views: they identify the player from the session (``/join/<token>`` signed the device
in), check he plays in this tournament, and render the page with the static map drawing.
Everything that changes (armies, control, orders, the clock) arrives in the browser from
``GET /api/tournaments/{id}/state``, the same selector that decides what each role may see
(R1.1), through ``static/js/live.js``; so nothing a player may not see is ever in a page.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.access import player_from_session, tournament_get, tournament_players
from referees.models import Instruction, Player, Tournament
from referees.selectors import Viewer, clan_roles, visible_instructions
from referees.services import TournamentError
from sl5r.rules.roles import Role, role_visibility
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, map_drawing


def _problem(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    return render(
        request, "referees/problem.html", {"title": title, "message": message}, status=status
    )


def _not_joined(request: HttpRequest) -> HttpResponse:
    return _problem(
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


def _joined_player(
    request: HttpRequest, tournament_id: int
) -> tuple[Player, Tournament] | HttpResponse:
    player = player_from_session(request.session)
    if player is None:
        return _not_joined(request)
    if player.tournament_id != tournament_id:
        return _problem(
            request,
            403,
            _("Not your tournament"),
            _("This device joined another tournament. Open your own page, or your join link."),
        )
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return _problem(request, error.status, _("No such tournament"), error.message)
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
    }


def _instructions(player: Player, tournament: Tournament) -> list[dict[str, Any]]:
    rows = visible_instructions(tournament=tournament, viewer=Viewer.of_player(player))
    return [{**row, "at_time": datetime.fromisoformat(row["at"])} for row in rows]


@never_cache
@require_safe
def general_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A General's page (phone first): his army, the clock, his order."""
    found = _joined_player(request, tournament_id)
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
    found = _joined_player(request, tournament_id)
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
