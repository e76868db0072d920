"""Reading a tournament: its state, map, log and case files (tag ``reading``)."""

from __future__ import annotations

import json
from typing import Any

from django.http import HttpRequest, HttpResponse
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from ninja import Router

# The function, typed (ninja.Query is the Annotated shortcut, a generic to mypy).
from ninja.params.functions import Query
from ninja.responses import NinjaJSONEncoder

from referees.api.common import ERRORS, judge_of, viewer_of
from referees.api.schemas.reading import CampaignMapOut, CaseFileOut, LogExportOut, LogOut, StateOut
from referees.http.auth import (
    ANYONE_CLAIMED,
    SIGNED_IN,
    Caller,
    caller_of,
    claim_refused,
)
from referees.kernel.access import tournament_get
from referees.kernel.core import TournamentError
from referees.kernel.readers import state_reader
from referees.reading.log import LogFilter, tournament_log, turn_case
from referees.reading.state import tournament_state, tournament_state_kept
from referees.texts.log import LOG_KINDS, log_context, log_kind, log_text
from sl5r.rules.clans import CLANS

router = Router()
# What django-ninja's renderer answers with (``JSONRenderer.media_type`` and its charset).
STATE_CONTENT_TYPE = "application/json; charset=utf-8"

LOG_PAGE = 500
LOG_PAGE_MAX = 1000

# Translated when read (gettext_lazy): in the language of the request that is refused.
ERROR_NO_CASE = gettext_lazy(
    "turn {number} has not been played (or was undone): there is no case file"
)


@router.get(
    "/tournaments/{tournament_id}/state",
    response={200: StateOut, **ERRORS},
    exclude_unset=True,
    auth=ANYONE_CLAIMED,
    tags=["reading"],
    summary="What the caller may see now (judge, player, or anyone)",
)
def state(request: HttpRequest, tournament_id: int) -> dict[str, Any] | HttpResponse:
    """R1.1: the judge sees everything; a player what his role allows; anyone else the
    public display. ``tournament.version`` grows with every change.
    """
    # A General's page reads this after every version it hears of: the tournament and his
    # link's player in one statement built once (issue 42), checked on every read.
    caller = caller_of(request)
    reader = state_reader(tournament_id=tournament_id, claim=caller.claim)
    if caller.claim is not None:
        caller = (
            Caller(via=caller.via, user=caller.user, player=reader.player)
            if reader.claim_stands
            else claim_refused(request, caller)
        )
    viewer = viewer_of(caller, reader.tournament)
    now = timezone.now()
    kept = tournament_state_kept(tournament=reader.tournament, viewer=viewer, now=now)
    if kept is not None:
        # Checked against StateOut when it was built and first answered: written as it is,
        # not checked again on every read (two thirds of a kept read's cost; issue 42,
        # benchmarks/state_read.py). The same JSON as a checked one (tests pin it).
        return HttpResponse(json.dumps(kept, cls=NinjaJSONEncoder), content_type=STATE_CONTENT_TYPE)
    # Built from the whole tournament (its board and map), as before there was a cache.
    tournament = tournament_get(tournament_id=tournament_id)
    return tournament_state(tournament=tournament, viewer=viewer, now=now)


@router.get(
    "/tournaments/{tournament_id}/map",
    response={200: CampaignMapOut, **ERRORS},
    exclude_unset=True,
    tags=["reading"],
    summary="The campaign's map JSON (anyone)",
)
def campaign_map(request: HttpRequest, tournament_id: int) -> dict[str, Any]:
    tournament = tournament_get(tournament_id=tournament_id)
    data: dict[str, Any] = tournament.campaign.map_data
    return data


@router.get(
    "/tournaments/{tournament_id}/log",
    response={200: LogOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["reading"],
    summary="The tournament's log, oldest first, in pages (judge)",
)
def log(
    request: HttpRequest,
    tournament_id: int,
    after: int = Query(0, ge=0),
    limit: int = Query(LOG_PAGE, ge=1, le=LOG_PAGE_MAX),
    turn: int | None = Query(None, ge=0, description="only entries of this turn"),
    army: str = Query("", max_length=64, description="only entries about this army"),
    clan: str = Query("", max_length=16, description="only entries about this clan"),
    kind: str = Query("", max_length=16, description="only entries of this kind"),
) -> dict[str, Any]:
    """R11: entries with an id above ``after``; ``more`` says whether another page follows.

    Each entry has ``text``, the entry as a sentence in the reader's language, and
    ``kind``; ``turn``, ``army``, ``clan`` and ``kind`` filter the entries.
    """
    tournament, _ = judge_of(request, tournament_id)
    if kind and kind not in LOG_KINDS:
        raise TournamentError(
            gettext("kind: one of %(kinds)s") % {"kinds": ", ".join(LOG_KINDS)},
            code="validation",
        )
    if clan and clan not in CLANS:
        raise TournamentError(
            gettext('clan: there is no clan "%(clan)s"') % {"clan": clan},
            code="validation",
        )
    wanted = LogFilter(turn=turn, army=army.strip(), clan=clan, kind=kind)
    entries = tournament_log(tournament=tournament, after=after, limit=limit + 1, wanted=wanted)
    more = len(entries) > limit
    entries = entries[:limit]
    context = log_context(tournament)
    for entry in entries:
        entry["text"] = log_text(entry, context)
        entry["kind"] = log_kind(entry["action"])
    return {"entries": entries, "after": entries[-1]["id"] if entries else after, "more": more}


@router.get(
    "/tournaments/{tournament_id}/log/export",
    response={200: LogExportOut, **ERRORS},
    auth=SIGNED_IN,
    tags=["reading"],
    summary="Download the whole log as a JSON file (judge)",
)
def log_export(request: HttpRequest, tournament_id: int) -> HttpResponse:
    tournament, _ = judge_of(request, tournament_id)
    entries: list[dict[str, Any]] = []
    after = 0
    while True:
        page = tournament_log(tournament=tournament, after=after, limit=LOG_PAGE_MAX)
        entries.extend(page)
        if len(page) < LOG_PAGE_MAX:
            break
        after = page[-1]["id"]
    document = {
        "tournament": {"id": tournament.pk, "name": tournament.name},
        "exported_at": timezone.now().isoformat(),
        "entries": entries,
    }
    response = HttpResponse(
        json.dumps(document, ensure_ascii=False, indent=2), content_type="application/json"
    )
    response["Content-Disposition"] = f'attachment; filename="tournament-{tournament.pk}-log.json"'
    return response


@router.get(
    "/tournaments/{tournament_id}/turns/{number}/case",
    response={200: CaseFileOut, **ERRORS},
    exclude_unset=True,
    auth=SIGNED_IN,
    tags=["reading"],
    summary="A played turn as an adjudication case file (judge)",
)
def case_file(request: HttpRequest, tournament_id: int, number: int) -> dict[str, Any]:
    """The turn as the engine saw it, with its draws and its result as ``expect``:
    ``manage.py adjudicate --check`` on the file replays it and confirms the result.
    """
    tournament, _ = judge_of(request, tournament_id)
    case = turn_case(tournament=tournament, number=number)
    if case is None:
        raise TournamentError(ERROR_NO_CASE.format(number=number), code="not_found")
    return case
