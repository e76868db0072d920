"""The judges' pages for players: many registered at once, and one player's page.

``/referees/tournaments/<id>/players/add`` takes a pasted list or a CSV file and shows the
preview (``referees.services.roster.roster_preview``: R1's clan and role where a line leaves them
out, every problem per line) beside the line-up R1 still leaves; only a list without
problems offers the button that registers it, all at once. ``.../players/<pid>/`` renames a
player, moves him or removes him before the start, replaces him once the game runs, and
shows his join link with its QR code. Plain forms: nothing here needs a script. The
services decide; these views read the forms and show what the services answer.
"""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods

from referees.forms.roster import roster_csv_decode, roster_lines
from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.access import player_get, player_join_link
from referees.kernel.core import Actor, TournamentError
from referees.kernel.lineups import roles_text, tournament_shape
from referees.models import Player, Tournament
from referees.services import tournament_clans
from referees.services.players import player_move, player_remove, player_rename, player_replace
from referees.services.roster import (
    RosterPreview,
    RosterRefused,
    lineup_places,
    roster_preview,
    roster_register,
)
from sl5r.api_errors import error_status
from sl5r.public_url import qr_svg
from strategic_map.clans import clan_name

PLAYERS_ONLY_JUDGES = gettext_lazy("Only a judge of this tournament may manage its players.")
Phase = Tournament.Phase


def _actor(request: HttpRequest) -> Actor:
    user = request.user
    assert isinstance(user, AbstractBaseUser)  # judge_or_refusal let only a judge through
    return Actor.of_user(user)


def _role_label(role: str) -> str:
    return str(Player.Role(role).label)


def _lineup_context(tournament: Tournament) -> dict[str, Any]:
    """R1's line-up for the count, and each clan's registered and still open roles."""
    shape = tournament_shape(tournament)
    places = lineup_places(tournament=tournament)
    registered = sum(len(place.registered) for place in places)
    return {
        "shape_full": roles_text(shape.full),
        "shape_smaller": roles_text(shape.smaller) or _("nobody"),
        "smaller_clans": shape.smaller_clans,
        "full_clans": shape.full_clans,
        "excluded": [clan_name(c) for c in tournament.campaign.excluded_clans],
        "registered": registered,
        "places_left": tournament.player_count - registered,
        "clan_places": [
            {
                "clan": place.clan,
                "name": clan_name(place.clan),
                "registered": roles_text(place.registered) or "—",
                "open": roles_text(place.open) or "—",
                "is_full": not place.open,
            }
            for place in places
        ],
    }


def _preview_rows(preview: RosterPreview) -> list[dict[str, Any]]:
    return [
        {
            "number": row.number,
            "name": row.name,
            "clan": row.clan,
            "clan_name": clan_name(row.clan) if row.clan else row.line.clan,
            "role_label": _role_label(row.role.value) if row.role else row.line.role,
            "proposed_clan": row.proposed_clan,
            "proposed_role": row.proposed_role,
            "army": row.army,
            "problems": row.problems,
        }
        for row in preview.rows
    ]


def _submitted(request: HttpRequest) -> tuple[str, bool, str]:
    """The list posted: its text, whether it is a CSV file's, and the file's name.

    A file chosen wins; the register button posts back what was previewed (``text`` and
    ``format``); otherwise the pasted ``lines``.
    """
    upload = request.FILES.get("file")
    pasted = request.POST.get("lines", "")
    if upload is not None and upload.size:
        if pasted.strip():
            raise TournamentError(
                _("Paste a list or choose a CSV file, not both: clear one of them.")
            )
        return roster_csv_decode(upload.read()), True, upload.name or ""
    if "text" in request.POST:
        return request.POST["text"], request.POST.get("format") == "csv", ""
    return pasted, False, ""


# The list being previewed, kept in the judge's session between the POST and the page.
PREVIEWED = "roster_previewed"


def _show_preview(
    context: dict[str, Any],
    preview: RosterPreview | None,
    text: str,
    csv_format: bool,
    file_name: str,
) -> None:
    if preview is None:
        return
    context.update(
        preview=preview,
        rows=_preview_rows(preview),
        text=text,
        format="csv" if csv_format else "lines",
        file_name=file_name,
        bad_lines=sum(1 for row in preview.rows if row.problems),
    )
    if not csv_format:
        context["pasted"] = text


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def players_add(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """Judges, during set-up: paste or upload a list, preview it, register it all at once."""
    tournament, refused = judge_or_refusal(
        request, tournament_id, judges_only=str(PLAYERS_ONLY_JUDGES)
    )
    if refused is not None:
        return refused
    assert tournament is not None
    context: dict[str, Any] = {
        "tournament": tournament,
        "setup": tournament.phase == Phase.SETUP,
        "phase_label": Phase(tournament.phase).label,
        "pasted": "",
        "problem": "",
    }
    status = 200
    previewed = request.session.get(PREVIEWED)
    if request.method == "POST":
        context["pasted"] = request.POST.get("lines", "")
        try:
            text, csv_format, file_name = _submitted(request)
            lines = roster_lines(text, csv_format=csv_format)
            if request.POST.get("action") == "register":
                players = roster_register(
                    tournament_id=tournament.pk,
                    lines=lines,
                    actor=_actor(request),
                    now=timezone.now(),
                )
                request.session.pop(PREVIEWED, None)
                messages.success(
                    request,
                    ngettext(
                        "%(count)s player registered.",
                        "%(count)s players registered.",
                        len(players),
                    )
                    % {"count": len(players)},
                )
                return redirect("referees:judge", tournament.pk)
            # The preview is shown on a page of its own (GET), so that the back button
            # from the console after "Register" never asks to post the form again.
            request.session[PREVIEWED] = {
                "tournament": tournament.pk,
                "text": text,
                "csv": csv_format,
                "file_name": file_name,
            }
            return redirect(f"{request.path}?preview=1")
        except RosterRefused as refusal:
            # The list changed under us, or was posted by hand: show what is wrong now.
            status = error_status(refusal)
            context["problem"] = refusal.message
            _show_preview(context, refusal.preview, text, csv_format, file_name)
        except TournamentError as error:
            context["problem"], status = error.message, error_status(error)
    elif (
        request.GET.get("preview")
        and isinstance(previewed, dict)
        and previewed.get("tournament") == tournament.pk
    ):
        text, csv_format = str(previewed["text"]), bool(previewed["csv"])
        try:
            lines = roster_lines(text, csv_format=csv_format)
            preview = roster_preview(tournament=tournament, lines=lines)
        except TournamentError as error:
            context["problem"], status = error.message, error_status(error)
        else:
            _show_preview(context, preview, text, csv_format, str(previewed["file_name"]))
    tournament.refresh_from_db()
    context.update(_lineup_context(tournament))
    return render(request, "referees/players_add.html", context, status=status)


def _player_context(request: HttpRequest, tournament: Tournament, player: Player) -> dict[str, Any]:
    url = player_join_link(request, player)[1]
    return {
        "tournament": tournament,
        "player": player,
        "clan_name": clan_name(player.clan),
        "role_label": _role_label(player.role),
        "setup": tournament.phase == Phase.SETUP,
        "replaceable": tournament.phase not in (Phase.SETUP, Phase.FINISHED),
        "phase_label": Phase(tournament.phase).label,
        "join_url": url,
        "join_qr": qr_svg(url) if url else "",
        "clans": [(c, clan_name(c)) for c in tournament_clans(tournament)],
        "roles": Player.Role.choices,
        "problem": "",
        "confirm": "",
    }


@never_cache
@require_http_methods(["GET", "HEAD", "POST"])
def player_edit(request: HttpRequest, tournament_id: int, player_id: int) -> HttpResponse:
    """Judges: one player's name, clan and role, his join link; remove or replace him."""
    tournament, refused = judge_or_refusal(
        request, tournament_id, judges_only=str(PLAYERS_ONLY_JUDGES)
    )
    if refused is not None:
        return refused
    assert tournament is not None
    try:
        player = player_get(tournament=tournament, player_id=player_id)
    except TournamentError as error:
        return problem_page(request, error_status(error), _("Not found"), error.message)
    if request.method != "POST":
        return render(
            request, "referees/player_edit.html", _player_context(request, tournament, player)
        )
    action = request.POST.get("action", "")
    confirmed = request.POST.get("confirmed") == "yes"
    here = reverse("referees:player_edit", args=[tournament.pk, player.pk])
    now = timezone.now()
    ids = {"tournament_id": tournament.pk, "player_id": player.pk}
    extra: dict[str, Any] = {}
    try:
        if action == "rename":
            renamed = player_rename(
                **ids, name=request.POST.get("name", ""), actor=_actor(request), now=now
            )
            messages.success(request, _("Renamed: %(name)s.") % {"name": renamed.name})
            return redirect(here)
        if action == "move":
            moved = player_move(
                **ids,
                clan=request.POST.get("clan", ""),
                role=request.POST.get("role", ""),
                actor=_actor(request),
                now=now,
            )
            messages.success(
                request,
                _("%(name)s is now %(role)s of the %(clan)s.")
                % {
                    "name": moved.name,
                    "role": _role_label(moved.role),
                    "clan": clan_name(moved.clan),
                },
            )
            return redirect(here)
        if action == "remove" and confirmed:
            player_remove(**ids, actor=_actor(request), now=now)
            messages.success(request, _("%(name)s removed.") % {"name": player.name})
            return redirect("referees:judge", tournament.pk)
        if action == "remove":
            extra["confirm"] = "remove"
        elif action == "replace":
            name = " ".join(request.POST.get("name", "").split())
            if not name:
                raise TournamentError(_("name: give the new player's name"))
            if confirmed:
                replaced = player_replace(**ids, name=name, actor=_actor(request), now=now)
                messages.success(
                    request,
                    _(
                        "%(old)s is replaced by %(name)s. Give %(name)s the new join link "
                        "below: the old one no longer works."
                    )
                    % {"old": player.name, "name": replaced.name},
                )
                return redirect(here)
            extra.update(confirm="replace", new_name=name)
        else:
            return problem_page(request, 400, _("Unknown action"), _("Use the page's buttons."))
        status = 200
    except TournamentError as error:
        extra["problem"], status = error.message, error_status(error)
        player = player_get(tournament=tournament, player_id=player.pk)
    tournament.refresh_from_db()
    context = {**_player_context(request, tournament, player), **extra}
    return render(request, "referees/player_edit.html", context, status=status)
