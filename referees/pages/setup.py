"""A new tournament, and its settings until the start: the judges' pages of set-up.

Both pages show one form (``referees.forms.setup``) and the line-up R1 gives for the count
chosen (``lineup_preview``), drawn here and redrawn as the judge types by
``static/js/tournament_form.js`` from ``GET /api/lineup``; without scripts, "Preview
line-up" redraws it here. Creating and changing are ``referees.services``'s
(``tournament_create``, ``tournament_update``); an uploaded map is imported in the same
transaction as the tournament, so that a refused tournament leaves no map behind.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from referees import services
from referees.forms.setup import TournamentForm, form_initial
from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.access import map_get, user_may_create_tournament
from referees.kernel.core import Actor, TournamentError, unit_of_work
from referees.kernel.lineups import lineup_shape_for, role_count_text, roles_text, tournament_lineup
from referees.models import Tournament
from sl5r.api_errors import error_status
from sl5r.rules.clans import CLANS
from sl5r.rules.errors import MapError
from sl5r.rules.roles import MAX_PER_CLAN, Role
from strategic_map.clans import clan_name
from strategic_map.models import Map
from strategic_map.services import map_import

TEMPLATE = "referees/tournament_form.html"
PREVIEW_FIELDS = ("player_count", "shortfall", "three_variant")


# --- The line-up R1 gives (R1) --------------------------------------------------------------


def _full_text(roles: str) -> str:
    return _("A full clan has %(roles)s.") % {"roles": roles}


def _smaller_text(count: int) -> str:
    """Which clans are one member fewer (R1 b), with ``%(roles)s`` left for their roles."""
    return ngettext(
        "%(count)s clan has one member fewer (%(roles)s): by default the last in the clan "
        "order, marked below, but any clan may be the smaller one (R1 b).",
        "%(count)s clans have one member fewer (%(roles)s): by default the last ones in the "
        "clan order, marked below, but any clans may be the smaller ones (R1 b).",
        count,
    ) % {"count": count, "roles": "%(roles)s"}


def _left_out_text(clans: str) -> str:
    return _("Not in the game: %(clans)s (R1 a).") % {"clans": clans}


def _unseatable_text(problem: str) -> str:
    return _("R1 cannot seat this count: %(problem)s") % {"problem": problem}


def lineup_preview(
    *, player_count: int | None, shortfall: str, three_variant: str
) -> dict[str, Any]:
    """R1's line-up for these settings, for the page: each clan's roles and what they mean.

    ``problem`` says why there is none (a count R1 cannot seat, or no count yet).
    """
    if player_count is None:
        return {"rows": [], "notes": [], "problem": _("Give the number of players.")}
    try:
        proposed = tournament_lineup(
            player_count=player_count, shortfall=shortfall, three_variant=three_variant
        )
        shape = lineup_shape_for(
            player_count=player_count, shortfall=shortfall, three_variant=three_variant
        )
    except TournamentError as error:
        return {"rows": [], "notes": [], "problem": _unseatable_text(error.message)}
    rows = []
    for clan in CLANS:
        roles = proposed.clans.get(clan)
        rows.append(
            {
                "clan": clan,
                "name": clan_name(clan),
                "roles": roles_text(list(roles)) if roles else "",
                "smaller": roles is not None and len(roles) < len(shape.full),
                "left_out": roles is None,
            }
        )
    notes = [_full_text(roles_text(list(shape.full)))]
    if shape.smaller_clans:
        notes.append(
            _smaller_text(shape.smaller_clans) % {"roles": roles_text(list(shape.smaller))}
        )
    if proposed.excluded_clans:
        notes.append(
            _left_out_text(", ".join(clan_name(c) for c in CLANS if c in proposed.excluded_clans))
        )
    return {"rows": rows, "notes": notes, "problem": None}


def _preview_values(form: TournamentForm) -> dict[str, Any]:
    """The count and choices the form shows now."""
    values: dict[str, Any] = {name: form[name].value() for name in PREVIEW_FIELDS}
    try:
        values["player_count"] = int(str(values["player_count"]).strip())
    except ValueError:
        values["player_count"] = None
    return values


def _script_config() -> dict[str, Any]:
    """What tournament_form.js needs to draw the line-up as this page does, translated."""
    return {
        "api": "/api/lineup",
        "clans": [{"id": clan, "name": clan_name(clan)} for clan in CLANS],
        # Every "N Generals" R1 can give (a clan has 1 to 6 members), worded here.
        "roleCounts": {
            role.value: {str(n): role_count_text(role, n) for n in range(1, MAX_PER_CLAN + 1)}
            for role in Role
        },
        "fullText": _full_text("%(roles)s"),
        "smallerText": {str(n): _smaller_text(n) for n in range(1, len(CLANS))},
        "leftOutText": _left_out_text("%(clans)s"),
        "unseatableText": _unseatable_text("%(problem)s"),
        "noCount": _("Give the number of players."),
        "smaller": _("one fewer by default (R1 b)"),
        "leftOut": _("not in the game (R1 a)"),
        "failed": _("The line-up could not be read from the server; use Preview line-up."),
    }


# --- The pages ------------------------------------------------------------------------------


def _page(
    request: HttpRequest,
    form: TournamentForm,
    *,
    tournament: Tournament | None = None,
    previewing: bool = False,
    status: int | None = None,
) -> HttpResponse:
    if status is None:
        status = 400 if form.is_bound and form.errors else 200
    return render(
        request,
        TEMPLATE,
        {
            "form": form,
            "tournament": tournament,
            "editing": tournament is not None,
            "map_name": tournament.campaign.map.name if tournament is not None else "",
            "previewing": previewing,
            "lineup": lineup_preview(**_preview_values(form)),
            "config": _script_config(),
            "has_maps": tournament is not None or Map.objects.exists(),
        },
        status=status,
    )


def _preview_form(request: HttpRequest, *, editing: bool) -> TournamentForm:
    """The form as sent, unchecked: a preview shows the line-up, not the form's problems."""
    initial: dict[str, Any] = {name: request.POST[name] for name in request.POST}
    # An unticked box is not sent at all.
    initial["clan_abilities"] = "clan_abilities" in request.POST
    return TournamentForm(initial=initial, editing=editing)


def _stored_map(form: TournamentForm) -> Map:
    """The map chosen, or the one uploaded, imported now (inside the caller's transaction)."""
    if form.map_data is None:
        return map_get(slug=form.cleaned_data["map"])
    return map_import(slug=form.cleaned_data["map_slug"], data=form.map_data)


@never_cache
@require_http_methods(["GET", "POST"])
def tournament_new_page(request: HttpRequest) -> HttpResponse:
    """Judges: a new tournament with every setting the API has; its creator judges it."""
    user = request.user
    if not user.is_authenticated:
        return redirect_to_login(request.get_full_path())
    if not user_may_create_tournament(user) or not isinstance(user, AbstractBaseUser):
        return problem_page(
            request,
            403,
            _("Judges only"),
            _("Only an active judge account may create a tournament."),
        )
    if request.method != "POST":
        return _page(request, TournamentForm())
    if "preview" in request.POST:
        return _page(request, _preview_form(request, editing=False), previewing=True)
    form = TournamentForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, form)
    try:
        with unit_of_work():
            tournament = services.tournament_create(
                judge=user,
                game_map=_stored_map(form),
                now=timezone.now(),
                **form.settings_values(),
            )
    except TournamentError as error:
        form.add_refusal(error)
        return _page(request, form, status=error_status(error))
    except MapError as error:
        form.add_error("map_file", f"{form.map_source}: {error}")
        return _page(request, form, status=422)
    except ValidationError as error:
        form.add_error("map_slug", error)
        return _page(request, form, status=422)
    return redirect("referees:judge", tournament.pk)


def _started_page(request: HttpRequest, tournament: Tournament) -> HttpResponse:
    return problem_page(
        request,
        409,
        _("The tournament has started"),
        _(
            "The settings of %(name)s can be changed during set-up only, until the tournament "
            "starts. It is now in the phase: %(phase)s."
        )
        % {"name": tournament.name, "phase": Tournament.Phase(tournament.phase).label},
    )


@never_cache
@require_http_methods(["GET", "POST"])
def tournament_settings_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges: the same settings, changeable until the start (the map stays)."""
    tournament, refusal = judge_or_refusal(
        request,
        tournament_id,
        judges_only=_("Only a judge of this tournament may change its settings."),
    )
    if refusal is not None:
        return refusal
    assert tournament is not None
    if tournament.phase != Tournament.Phase.SETUP:
        return _started_page(request, tournament)
    if request.method != "POST":
        initial = form_initial(services.tournament_settings(tournament))
        return _page(request, TournamentForm(initial=initial, editing=True), tournament=tournament)
    if "preview" in request.POST:
        return _page(
            request, _preview_form(request, editing=True), tournament=tournament, previewing=True
        )
    form = TournamentForm(request.POST, editing=True)
    if not form.is_valid():
        return _page(request, form, tournament=tournament)
    user = request.user
    assert isinstance(user, AbstractBaseUser)
    try:
        services.tournament_update(
            tournament_id=tournament.pk,
            actor=Actor.of_user(user),
            now=timezone.now(),
            **form.settings_values(),
        )
    except TournamentError as error:
        if error.code == "phase":
            tournament.refresh_from_db(fields=["phase"])
            return _started_page(request, tournament)
        form.add_refusal(error)
        return _page(request, form, tournament=tournament, status=error_status(error))
    return redirect("referees:judge", tournament.pk)
