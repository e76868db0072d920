"""The big screen: the projector's page of the clock, the turn, the announcements, the map
where the public may see the armies, and at the end the standings (R12).

The page draws what ``tournament_state`` lets the public see, and its live parts update
from the same state over ``static/js/live.js``. Times are shown in the tournament's time
zone.
"""

from __future__ import annotations

from datetime import datetime

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.http.refusals import problem_page
from referees.kernel.access import tournament_get
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer
from referees.models import Tournament
from referees.pages.common import (
    CLAN_COLOURS,
    COMMON_STRINGS,
    choice_labels,
    clan_rows,
    script_texts,
    tournament_drawing,
)
from referees.reading.state import tournament_state
from referees.reading.story import standings_of
from referees.texts.words import state_turn_words
from sl5r.public_url import public_url as page_public_url
from sl5r.public_url import qr_svg

SCREEN_STRINGS: dict[str, Promise] = {
    **COMMON_STRINGS,
    "live_offline": gettext_lazy("Offline — this screen may be out of date"),
    "final_standings": gettext_lazy("Final standings"),
    "game_over": gettext_lazy("The game is over"),
}


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
            "clans": clan_rows(tournament),
            "clanColours": CLAN_COLOURS,
            "phases": choice_labels(Tournament.Phase.choices),
            "strings": script_texts(SCREEN_STRINGS),
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
                "drawing": tournament_drawing(tournament) if sees_all else None,
                "sees_all_armies": sees_all,
                # For spectators: this page on their phones, on the venue's address.
                "public_url": public_url,
                "public_qr": qr_svg(public_url),
                "phase_label": Tournament.Phase(tournament.phase).label,
                "standings": standings_of(state["scores"]) if "scores" in state else [],
                "announcements": [
                    {**a, "at": datetime.fromisoformat(a["at"])} for a in state["announcements"]
                ],
            },
        )
