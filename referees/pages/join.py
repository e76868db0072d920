"""Join links and the judges' printable sheet of them.

``/join/<token>`` is the link a player scans: it logs the device in as that player and
shows who he is. The sheet prints one card per player with the link as a QR code.
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.http.ratelimit import RateLimited, client_ip, rate_check, rate_hit
from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.access import (
    player_from_session,
    player_join_link,
    player_session_login,
    tournament_players,
)
from referees.models import Player
from referees.pages.players import player_page_url
from referees.services import player_from_token
from referees.services.checkin import player_check_in
from sl5r.public_url import qr_svg
from strategic_map.clans import clan_name


def _role_label(player: Player) -> str:
    return str(Player.Role(player.role).label)


@never_cache
@require_safe
def join(request: HttpRequest, token: str) -> HttpResponse:
    """Log this device in as the player the link belongs to, then show who he is."""
    address = f"ip:{client_ip(request)}"
    try:
        rate_check("joins", address)
    except RateLimited as limited:
        response = problem_page(request, 429, _("Too many attempts"), limited.message)
        response["Retry-After"] = str(limited.retry_after)
        return response
    player = player_from_token(token)
    if player is None:
        rate_hit("joins", address)
        return problem_page(
            request,
            403,
            _("This join link does not work"),
            _("The link was revoked, or replaced by a new one. Ask a judge for your current link."),
        )
    player_session_login(request.session, player)
    # Issue 32: the first device to open the link checks the player in (the console shows it).
    player_check_in(player=player, now=timezone.now())
    return redirect("referees:me")


@never_cache
@require_safe
def me(request: HttpRequest) -> HttpResponse:
    """The player this device joined as: on to his page (General: orders; Daimyo, Karo: clan)."""
    player = player_from_session(request.session)
    if player is None:
        return problem_page(
            request,
            403,
            _("You have not joined"),
            _(
                "Open your join link (scan the QR code on your card). If you already did, "
                "the link has been revoked or replaced: ask a judge."
            ),
        )
    return redirect(player_page_url(player))


@never_cache
@require_safe
def join_sheet(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges: every player's card with his join link as a QR code, ready to print."""
    tournament, refusal = judge_or_refusal(
        request,
        tournament_id,
        judges_only=_("Only a judge of this tournament may print its join links."),
    )
    if tournament is None:
        assert refusal is not None
        return refusal
    cards: list[dict[str, Any]] = []
    # Issue 32: reprinted for the latecomers and the stand-ins, only the cards still missing.
    missing_only = request.GET.get("missing") == "1"
    for player in tournament_players(tournament=tournament):
        if missing_only and player.checked_in_at is not None:
            continue
        url = player_join_link(request, player)[1]
        cards.append(
            {
                "player": player,
                "clan_name": clan_name(player.clan),
                "role_label": _role_label(player),
                "url": url,
                "qr": qr_svg(url) if url else "",
            }
        )
    return render(
        request,
        "referees/join_sheet.html",
        {"tournament": tournament, "cards": cards, "missing_only": missing_only},
    )
