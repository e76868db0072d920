"""The page where a clan declares its starting positions (R3.1-R3.2).

For the joined player who declares for his clan: its Daimyo, or any of its Generals where it
has none (``referees.kernel.access.player_declares_for``, as the API decides). The page shows the
clan's home provinces on the map, castles first, and a home province to choose for each army;
``static/js/positions.js`` sends the choice to ``PUT /api/tournaments/{id}/positions/{clan}``,
whose service checks R3.2 and refuses with the reason. Anyone else of the tournament gets a
403 page naming who declares for his clan.
"""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.kernel.access import player_declares_for, tournament_players
from referees.models import Player, Tournament
from referees.pages.players import clan_daimyo, joined_player, player_page_url
from strategic_map.board import Board
from strategic_map.clans import clan_name
from strategic_map.drawing import CLAN_STYLES, map_drawing
from strategic_map.selectors import campaign_game_map

# Phases in which the service takes a declaration (start_positions_declare).
OPEN_PHASES = frozenset({Tournament.Phase.PLANNING, Tournament.Phase.DEPLOYMENT})


def clan_homes(tournament: Tournament, clan: str) -> list[dict[str, str]]:
    """The clan's passable home provinces, castle provinces first (R3.2), in map order."""
    campaign = tournament.campaign
    game_map = campaign_game_map(campaign)
    blocked = game_map.blocked_provinces(campaign.excluded_clans)
    homes = [p for p in game_map.home_provinces.get(clan, ()) if p not in blocked]
    homes.sort(key=lambda pid: pid not in game_map.castles)
    return [
        {
            "id": pid,
            "name": game_map.provinces[pid].name,
            "castle": game_map.provinces[pid].castle or "",
        }
        for pid in homes
    ]


def clan_armies(tournament: Tournament, clan: str) -> list[dict[str, str]]:
    """Each army of the clan with its General and where it starts now (``""``: nowhere yet)."""
    board = Board.of(tournament.campaign)
    rows = [
        {
            "code": p.army.code,
            "general": p.name,
            "province": board.province_of(p.army.code) or "",
        }
        for p in tournament_players(tournament=tournament)
        if p.clan == clan and p.army is not None
    ]
    return sorted(rows, key=lambda row: _army_order(row["code"]))


def _army_order(code: str) -> tuple[str, int, str]:
    # crab-2 before crab-10.
    prefix, _sep, number = code.rpartition("-")
    return (prefix, int(number), "") if number.isdigit() else (code, 0, code)


def _refused(request: HttpRequest, player: Player, tournament: Tournament) -> HttpResponse:
    daimyo = clan_daimyo(tournament, player.clan)
    values = {"clan": clan_name(player.clan), "daimyo": daimyo.name if daimyo else ""}
    if daimyo is not None:
        message = (
            _(
                "%(daimyo)s, the Daimyo of the %(clan)s, declares where the clan's armies "
                "start (R3.1). Tell him where you would like your army to start."
            )
            % values
        )
    else:
        message = (
            _("The Generals of the %(clan)s declare where the clan's armies start (R3.1).") % values
        )
    context = {
        "refused": True,
        "player": player,
        "tournament": tournament,
        "clan_name": values["clan"],
        "message": message,
        "back_url": player_page_url(player),
    }
    return render(request, "referees/positions.html", context, status=403)


@never_cache
@require_safe
def positions_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """R3.1-R3.2: the declaring player places his clan's armies on its home provinces."""
    found = joined_player(request, tournament_id)
    if isinstance(found, HttpResponse):
        return found
    player, tournament = found
    if not player_declares_for(player, tournament, player.clan):
        return _refused(request, player, tournament)
    homes = clan_homes(tournament, player.clan)
    armies = clan_armies(tournament, player.clan)
    style = CLAN_STYLES.get(player.clan)
    context = {
        "player": player,
        "tournament": tournament,
        "clan_name": clan_name(player.clan),
        "clan_colour": style.colour if style else "",
        "role_label": str(Player.Role(player.role).label),
        "drawing": map_drawing(tournament.campaign.map_data),
        "excluded_clans": list(tournament.campaign.excluded_clans),
        "homes": homes,
        "armies": armies,
        "open": tournament.phase in OPEN_PHASES,
        "declared": bool(armies) and all(row["province"] for row in armies),
        "back_url": player_page_url(player),
        "positions_data": {
            "tournament": tournament.pk,
            "clan": player.clan,
            "homes": homes,
            "armies": armies,
        },
    }
    return render(request, "referees/positions.html", context)
