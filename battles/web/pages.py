"""The battle-table pages: a table's page (phones, a tablet) and the judges' Small Farm proxies.

Thin views, as the referees' pages are. Who is asking is the session's: a judge signed in, or
the player this device joined as (``/join/<token>``). What he may see of a table is
``battles.selectors.battle_detail``'s decision (R1.1), reused here and not repeated; the page
draws that row, and ``static/js/battle_table.js`` keeps it fresh from
``GET /api/tournaments/{id}/battles/{bid}`` whenever ``static/js/live.js`` hears of a change.
Every vote, action and choice on the page is a call to the JSON API (docs/api.md, "Battles").
"""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from battles.models import Battle
from battles.selectors import battle_detail, battle_get, battles_visible
from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.access import player_from_session, tournament_get, user_judges
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer
from referees.models import JudgeCall, Player, Tournament
from sl5r.rules.clans import CLANS
from strategic_map.clans import clan_name

# The clan-ability notes of a battle's set-up come from the rules engine in English
# (``sl5r.rules.battle``); the page shows them in the reader's language.
SETUP_NOTES: dict[str, Promise] = {
    "Crab: +1 Force in a Crab province": gettext_lazy("Crab: +1 Force in a Crab province"),
    "Lion: +1 Force in an enemy castle": gettext_lazy("Lion: +1 Force in an enemy castle"),
    "Shadowlands: −1 Force in a Shadowlands province": gettext_lazy(
        "Shadowlands: −1 Force in a Shadowlands province"
    ),
    "Crane: +3 family honor in a Crane province": gettext_lazy(
        "Crane: +3 family honor in a Crane province"
    ),
    "Dragon: one Fate card more": gettext_lazy("Dragon: one Fate card more"),
    "Phoenix: two Fate cards fewer in a Phoenix province": gettext_lazy(
        "Phoenix: two Fate cards fewer in a Phoenix province"
    ),
}

# Blank proxies a judge may ask for on top of the tables' own (one A4 sheet holds nine).
MAX_BLANK_FARMS = 90
# Tables whose Small Farms are on the table now: the set-up is computed when a battle starts.
FARM_STATUSES = (Battle.Status.BATTLE, Battle.Status.DECIDED)


def _viewer(request: HttpRequest, tournament: Tournament) -> Viewer | HttpResponse:
    """A judge of the tournament, else the player this device joined as, else a refusal."""
    if user_judges(request.user, tournament):
        return Viewer.judge(label=f"judge {request.user.get_username()}")
    player = player_from_session(request.session)
    if player is not None and player.tournament_id == tournament.pk:
        return Viewer.of_player(player)
    if player is not None:
        return problem_page(
            request,
            403,
            _("Not your tournament"),
            _("This device joined another tournament. Open your own page, or your join link."),
        )
    return problem_page(
        request,
        403,
        _("You have not joined"),
        _(
            "Open your join link (scan the QR code on your card) to see your battle table. "
            "Judges sign in first."
        ),
    )


def _own_page(viewer: Viewer, tournament: Tournament) -> str:
    """Where the viewer comes from: the judge console, a General's page or the clan page."""
    if viewer.kind == "judge":
        return reverse("referees:judge", args=[tournament.pk])
    player = viewer.player
    if player is not None and player.role == Player.Role.GENERAL:
        return reverse("referees:general", args=[tournament.pk])
    return reverse("referees:clan", args=[tournament.pk])


@never_cache
@require_safe
def battle_table(request: HttpRequest, tournament_id: int, battle_id: int) -> HttpResponse:
    """One battle table (phone first): the meeting's vote, the set-up, the game, the end."""
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return problem_page(request, 404, _("No such tournament"), error.message)
    viewer = _viewer(request, tournament)
    if isinstance(viewer, HttpResponse):
        return viewer
    try:
        battle = battle_get(tournament=tournament, battle_id=battle_id)
    except TournamentError as error:
        return problem_page(request, 404, _("No such battle"), error.message)
    battle.tournament = tournament
    row = battle_detail(battle=battle, viewer=viewer)
    if row is None:
        return problem_page(
            request,
            403,
            _("Not your battle"),
            _(
                "You may not watch this battle (R1.1): a General sees his own army's table, "
                "a Daimyo his clan's unless the clan has a Karo, a Karo his clan's."
            ),
        )
    player = viewer.player
    config = {
        "tournamentId": tournament.pk,
        "battleId": battle.pk,
        "viewer": {
            "kind": viewer.kind,
            "role": player.role if player is not None else "judge",
            "army": row["you"]["army"],
        },
        "clans": {clan: clan_name(clan) for clan in CLANS},
        "notes": {english: str(text) for english, text in SETUP_NOTES.items()},
    }
    return render(
        request,
        "battles/table.html",
        {
            "tournament": tournament,
            "battle": row,
            "config": config,
            "is_judge": viewer.kind == "judge",
            "player": player,
            "call_reasons": JudgeCall.Reason.choices,
            "back_url": _own_page(viewer, tournament),
        },
    )


def _farm_cards(tables: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One proxy per Small Farm of every General at a table being fought now (R7)."""
    cards: list[dict[str, Any]] = []
    for table in tables:
        if table["status"] not in FARM_STATUSES or not table["setup"]:
            continue
        generals = {a["code"]: a["general"] for a in table["armies"]}
        for participant in table["setup"]["participants"]:
            for number in range(1, participant["small_farms"] + 1):
                cards.append(
                    {
                        "army": participant["army"],
                        "clan": participant["clan"],
                        "clan_name": clan_name(participant["clan"]),
                        "general": generals.get(participant["army"]) or "",
                        "province": table["province_name"],
                        "number": number,
                        "of": participant["small_farms"],
                    }
                )
    return cards


def _blank_count(request: HttpRequest) -> int:
    asked = request.GET.get("blank", "").strip()
    if not asked.isdigit():
        return 0
    return min(int(asked), MAX_BLANK_FARMS)


@never_cache
@require_safe
def small_farm_sheet(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges: a printable proxy card for every Small Farm at the tables now, and blanks."""
    tournament, refusal = judge_or_refusal(
        request,
        tournament_id,
        judges_only=_("Only a judge of this tournament may print its Small Farm proxies."),
    )
    if tournament is None:
        assert refusal is not None
        return refusal
    viewer = Viewer.judge(label=f"judge {request.user.get_username()}")
    tables = battles_visible(tournament=tournament, viewer=viewer)
    cards = _farm_cards(tables)
    blank = _blank_count(request)
    return render(
        request,
        "battles/small_farms.html",
        {
            "tournament": tournament,
            "cards": cards,
            "blank": blank,
            "blank_cards": range(blank),
            "max_blank": MAX_BLANK_FARMS,
            "tables": [t for t in tables if t["status"] in FARM_STATUSES],
        },
    )
