"""The campaign told on the big screen, and the same story as one self-contained file
(issue 32): thin page views over ``referees.reading.story.campaign_story``.

- ``campaign_replay`` (``…/screen/replay``): the map with the moves as arrows and control
  changing colour, a panel with each turn's orders, draws (commitment, revealed seed),
  meetings and battles with their results, the points chart growing turn by turn, then the
  final standings. ``static/js/replay.js`` steps through it: → / PageDown / Space and
  ← / PageUp (a clicker sends PageDown and PageUp), P or K to pause and play, a speed for
  unattended play, and the same as buttons for a phone.
- ``campaign_report`` (``…/report.html``): one HTML file to download, with inline CSS and
  an inline SVG map per turn drawn on the server (``referees.pages.report_svg``; no script
  at all): the standings, each turn's map and orders, every battle and its result, every
  draw with its proof and the command that verifies it, each turn's case file inside it.
  Nothing in it asks for anything over the network, so it opens offline, prints, and a
  community site can publish it as it is.

R1.1: judges any time; everyone else once the game has finished (``story_allowed``).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from typing import Any

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.http.refusals import problem_page
from referees.kernel.access import tournament_get, user_judges
from referees.kernel.core import TournamentError
from referees.kernel.visibility import Viewer
from referees.models import Tournament
from referees.pages.common import COMMON_STRINGS
from referees.pages.report_svg import report_map, score_chart
from referees.reading.story import campaign_story, report_file_name, story_allowed
from referees.texts.words import state_turn_words
from strategic_map.drawing import map_drawing

# What replay.js writes, translated here; the chart and the map say what they say on the
# big screen.
REPLAY_STRINGS: dict[str, Promise] = {
    "play": gettext_lazy("Play"),
    "pause": gettext_lazy("Pause"),
    "playing": gettext_lazy("Playing"),
    "paused": COMMON_STRINGS["paused"],
    "step_of": gettext_lazy("Step %(step)s of %(total)s"),
    "start": COMMON_STRINGS["start"],
    "turn": COMMON_STRINGS["turn"],
    "scores_by_turn": COMMON_STRINGS["scores_by_turn"],
    "chart_description": COMMON_STRINGS["chart_description"],
    "battle": COMMON_STRINGS["map_battle"],
    "meeting": COMMON_STRINGS["map_meeting"],
}

# The speeds of unattended play, seconds per step; the first is the default.
SPEEDS = (6, 3, 10)


def _viewer(request: HttpRequest, tournament: Tournament) -> Viewer:
    if user_judges(request.user, tournament):
        return Viewer.judge(label=f"judge {request.user.get_username()}")
    return Viewer.public()


def _story_or_refusal(
    request: HttpRequest, tournament_id: int, *, cases: bool = False
) -> tuple[Tournament | None, dict[str, Any] | None, HttpResponse | None]:
    """The tournament and its story for this request, or the answer to send instead.

    No such tournament: 404. Before the end (R1.1) a visitor is sent to sign in (a judge
    may), anyone signed in who does not judge it gets 403 saying when it opens.
    """
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return None, None, problem_page(request, 404, _("Not found"), error.message)
    viewer = _viewer(request, tournament)
    if not story_allowed(tournament=tournament, viewer=viewer):
        if not request.user.is_authenticated:
            return None, None, redirect_to_login(request.get_full_path())
        return (
            None,
            None,
            problem_page(
                request,
                403,
                _("Judges only"),
                _(
                    "The campaign is told once the game is over: until then only a judge of "
                    "this tournament may see it (R1.1)."
                ),
            ),
        )
    story = campaign_story(tournament=tournament, viewer=viewer, cases=cases)
    return tournament, story, None


def _steps(story: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The replay's steps: the start, each turn's orders then what came of them, the end."""
    steps: list[dict[str, Any]] = [{"kind": "start", "turn": 0, "data": None}]
    for turn in story["turns"]:
        steps.append({"kind": "orders", "turn": turn["turn"], "data": turn})
        steps.append({"kind": "result", "turn": turn["turn"], "data": turn})
    steps.append({"kind": "final", "turn": story["tournament"]["turns_played"], "data": None})
    for index, step in enumerate(steps):
        step["index"] = index
    return steps


def _turn_words(tournament: Tournament, story: Mapping[str, Any]) -> str:
    return state_turn_words(
        {
            "turn": story["tournament"]["turns_played"],
            "turns_total": tournament.turns_total,
            "ended_after_turn": story["tournament"]["turns_played"]
            if story["tournament"]["finished"]
            else None,
        }
    )


@never_cache
@require_safe
def campaign_replay(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The campaign, turn by turn, for the big screen (public after the end, R1.1)."""
    tournament, story, refusal = _story_or_refusal(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None and story is not None
    steps = _steps(story)
    with timezone.override(tournament.time_zone):
        config = {
            "tournamentId": tournament.pk,
            "clans": story["clans"],
            "clanColours": {c["id"]: c["colour"] for c in story["clans"]},
            "steps": [{"kind": s["kind"], "turn": s["turn"]} for s in steps],
            "speeds": list(SPEEDS),
            "strings": {key: str(value) for key, value in REPLAY_STRINGS.items()},
        }
        return render(
            request,
            "referees/replay.html",
            {
                "tournament": tournament,
                "story": story,
                "steps": steps,
                "speeds": SPEEDS,
                "turn_words": _turn_words(tournament, story),
                "drawing": map_drawing(tournament.campaign.map_data),
                "is_judge": story["viewer"] == "judge",
                "config": config,
            },
        )


# The report is one file that needs nothing else: no script, nothing fetched (the
# middleware keeps a policy a view has set).
REPORT_POLICY = "; ".join(
    (
        "default-src 'none'",
        "style-src 'unsafe-inline'",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
        "frame-ancestors 'none'",
    )
)


@never_cache
@require_safe
def campaign_report(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The campaign as one self-contained HTML file, a download (``?print=1``: shown in the
    browser, to print it). Public after the end, judges any time (R1.1)."""
    tournament, story, refusal = _story_or_refusal(request, tournament_id, cases=True)
    if refusal is not None:
        return refusal
    assert tournament is not None and story is not None
    drawing = map_drawing(tournament.campaign.map_data)
    with timezone.override(tournament.time_zone):
        for turn in story["turns"]:
            turn["map"] = report_map(
                drawing,
                f"turn-{turn['turn']}-map",
                title=_("The map after turn %(turn)s") % {"turn": turn["turn"]},
                board=turn["after"],
                orders=[o for o in turn["orders"] if o["outcome"] != "rejected"],
                meetings=turn["meetings"],
                changed=[c["province"] for c in turn["control_changes"]],
            )
            case = turn.pop("case", None)
            turn["case_url"] = _json_data_url(case) if case is not None else ""
        html = render_to_string(
            "referees/report.html",
            {
                "tournament": tournament,
                "story": story,
                "turn_words": _turn_words(tournament, story),
                "generated_at": timezone.localtime(),
                "start_map": report_map(
                    drawing,
                    "start-map",
                    title=_("The armies before turn 1"),
                    board=story["start"],
                ),
                "chart": score_chart(story["score_history"], story["clans"]),
                "drawing": drawing,
            },
            request=request,
        )
    response = HttpResponse(html, content_type="text/html; charset=utf-8")
    # Viewed on the site (?print=1) it keeps its promise under its own policy.
    response["Content-Security-Policy"] = REPORT_POLICY
    disposition = "inline" if request.GET.get("print") else "attachment"
    response["Content-Disposition"] = f'{disposition}; filename="{report_file_name(tournament)}"'
    return response


def _json_data_url(value: Any) -> str:
    """``value`` as a JSON file inside a link (``data:``): saved with one click, offline."""
    text = json.dumps(value, ensure_ascii=False, indent=1)
    encoded = base64.b64encode(text.encode("utf-8")).decode("ascii")
    return f"data:application/json;base64,{encoded}"
