"""The judges of a tournament and the judge's API keys: server-rendered forms on the services.

``/referees/tournaments/<id>/judges/`` lists the judges and offers the changes, each a form
posted to its own address and handled by a ``referees.services.judges`` service. A one-time sign-in
link and a new API key are secrets shown once: they are in the answer to the form that made
them (never cached, never stored) and nowhere else. A removal and a revocation first ask
"are you sure" on a page of their own, so no script is needed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render, resolve_url
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_safe

from referees.http.refusals import judge_or_refusal, problem_page
from referees.kernel.access import user_judges
from referees.kernel.core import Actor, TournamentError
from referees.models import JudgeKey, Tournament
from referees.services.judges import (
    MAX_KEY_LABEL,
    JudgeInvitation,
    judge_add,
    judge_invite,
    judge_key_issue,
    judge_key_revoke,
    judge_link_renew,
    judge_remove,
    tournament_judges,
    user_judge_keys,
)
from sl5r.api_errors import error_status
from sl5r.public_url import public_url, qr_svg

JUDGES_ONLY = gettext_lazy("Only a judge of this tournament may manage its judges.")


class UsernameForm(forms.Form):
    username = forms.CharField(
        label=gettext_lazy("User name"),
        max_length=150,
        # Someone else's name: the browser should not offer the judge's own.
        widget=forms.TextInput(
            attrs={"autocomplete": "off", "autocapitalize": "none", "spellcheck": "false"}
        ),
    )


class KeyForm(forms.Form):
    label = forms.CharField(
        label=gettext_lazy("What the key is for (e.g. laptop, scoring script)"),
        max_length=MAX_KEY_LABEL,
        required=False,
    )


def _add_form(data: Any = None) -> UsernameForm:
    return UsernameForm(data, prefix="add")


def _invite_form(data: Any = None) -> UsernameForm:
    return UsernameForm(data, prefix="invite")


def _key_form(data: Any = None) -> KeyForm:
    return KeyForm(data, prefix="key")


def _judges_url(tournament: Tournament) -> str:
    return reverse("referees:judges", args=[tournament.pk])


def _actor(request: HttpRequest) -> Actor:
    user = request.user
    assert isinstance(user, AbstractBaseUser)
    return Actor.of_user(user)


def _page(
    request: HttpRequest,
    tournament: Tournament,
    *,
    status: int = 200,
    add_form: UsernameForm | None = None,
    invite_form: UsernameForm | None = None,
    key_form: KeyForm | None = None,
    shown: dict[str, Any] | None = None,
    problem: str = "",
) -> HttpResponse:
    user = request.user
    assert isinstance(user, AbstractBaseUser)
    judges = tournament_judges(tournament=tournament)
    rows = [
        {
            "user": judge,
            "name": judge.get_username(),
            "is_me": judge.pk == user.pk,
            # An invited judge who has not chosen a password yet signs in only by his link.
            "pending": not judge.has_usable_password(),
        }
        for judge in judges
    ]
    context: dict[str, Any] = {
        "tournament": tournament,
        "judges": rows,
        "removable": len(rows) > 1,
        "add_form": add_form or _add_form(),
        "invite_form": invite_form or _invite_form(),
        "key_form": key_form or _key_form(),
        "keys": user_judge_keys(user=user),
        "problem": problem,
    }
    if shown is not None and shown.get("tournament") == tournament.pk:
        if "invitation" in shown:
            context["invitation"] = {
                **shown["invitation"],
                "qr": qr_svg(shown["invitation"]["url"]),
            }
        if "issued" in shown:
            context["issued"] = shown["issued"]
    with timezone.override(tournament.time_zone):
        return render(request, "referees/judges.html", context, status=status)


def _tournament(
    request: HttpRequest, tournament_id: int
) -> tuple[Tournament | None, HttpResponse | None]:
    return judge_or_refusal(request, tournament_id, judges_only=str(JUDGES_ONLY))


def _chosen(request: HttpRequest, name: str) -> int | None:
    """The id a form (POST) or a link (GET) names in ``name``; None when it is no id."""
    value = (request.POST if request.method == "POST" else request.GET).get(name, "")
    return int(value) if value.isascii() and value.isdigit() and len(value) < 12 else None


def _not_chosen(request: HttpRequest, what: str) -> HttpResponse:
    return problem_page(request, 400, _("Bad request"), what)


@never_cache
@require_safe
def judges_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """The judges, the forms to add, invite and remove one, and the judge's API keys."""
    tournament, refusal = _tournament(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None
    # What a form just made, shown once: a reload or the back button finds it gone.
    return _page(request, tournament, shown=request.session.pop(SHOWN_ONCE, None))


# A one-time link or a new API key is shown on the page the form redirects to (so that a
# reload never posts the form again), kept in the judge's own session until then.
SHOWN_ONCE = "judges_shown_once"


def _show_once(request: HttpRequest, tournament: Tournament, **shown: Any) -> HttpResponse:
    request.session[SHOWN_ONCE] = {"tournament": tournament.pk, **shown}
    return redirect(_judges_url(tournament))


def _invitation_shown(request: HttpRequest, invitation: JudgeInvitation) -> dict[str, Any]:
    return {
        "name": invitation.user.get_username(),
        "url": public_url(request, invitation.path),
    }


def _form_posted(
    request: HttpRequest,
    tournament_id: int,
    *,
    make_form: Callable[[Any], forms.Form],
    form_key: str,
    field: str,
    act: Callable[[Tournament, dict[str, Any]], HttpResponse],
) -> HttpResponse:
    """One of the page's forms posted: checked, then ``act`` with its data; a refusal of the
    service is shown on the form's ``field``, the page kept as it was. A GET goes back to
    the page."""
    tournament, refusal = _tournament(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None
    if request.method != "POST":
        return redirect(_judges_url(tournament))
    form = make_form(request.POST)
    # _page's keyword for this form is chosen at run time, so no type checker can match it.
    shown: dict[str, Any] = {form_key: form}
    if not form.is_valid():
        return _page(request, tournament, status=400, **shown)
    try:
        return act(tournament, form.cleaned_data)
    except TournamentError as error:
        form.add_error(field, error.message)
        return _page(request, tournament, status=error_status(error), **shown)


@never_cache
@require_http_methods(["GET", "POST"])
def judge_add_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    def act(tournament: Tournament, data: dict[str, Any]) -> HttpResponse:
        user = judge_add(
            tournament_id=tournament.pk,
            username=data["username"],
            actor=_actor(request),
            now=timezone.now(),
        )
        messages.success(
            request,
            _("%(name)s is now a judge of this tournament.") % {"name": user.get_username()},
        )
        return redirect(_judges_url(tournament))

    return _form_posted(
        request, tournament_id, make_form=_add_form, form_key="add_form", field="username", act=act
    )


@never_cache
@require_http_methods(["GET", "POST"])
def judge_invite_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A new account and its one-time link, shown in this answer only."""

    def act(tournament: Tournament, data: dict[str, Any]) -> HttpResponse:
        invitation = judge_invite(
            tournament_id=tournament.pk,
            username=data["username"],
            actor=_actor(request),
            now=timezone.now(),
        )
        return _show_once(request, tournament, invitation=_invitation_shown(request, invitation))

    return _form_posted(
        request,
        tournament_id,
        make_form=_invite_form,
        form_key="invite_form",
        field="username",
        act=act,
    )


@never_cache
@require_http_methods(["GET", "POST"])
def judge_link_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A new one-time link for a judge (``judge``) who lost his before choosing a password."""
    tournament, refusal = _tournament(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None
    if request.method != "POST":
        return redirect(_judges_url(tournament))
    user_id = _chosen(request, "judge")
    if user_id is None:
        return _not_chosen(request, _("judge: say which judge, by his number"))
    try:
        invitation = judge_link_renew(
            tournament_id=tournament.pk, user_id=user_id, actor=_actor(request), now=timezone.now()
        )
    except TournamentError as error:
        return _page(request, tournament, status=error_status(error), problem=error.message)
    return _show_once(request, tournament, invitation=_invitation_shown(request, invitation))


def _confirm(
    request: HttpRequest,
    tournament: Tournament,
    *,
    question: str,
    explanation: str,
    button: str,
    field: tuple[str, int],
) -> HttpResponse:
    return render(
        request,
        "referees/judges_confirm.html",
        {
            "tournament": tournament,
            "question": question,
            "explanation": explanation,
            "button": button,
            "field_name": field[0],
            "field_value": field[1],
            "cancel_url": _judges_url(tournament),
        },
    )


@never_cache
@require_http_methods(["GET", "POST"])
def judge_remove_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """GET ``?judge=<id>`` asks "Remove X?"; POST removes him (never the last judge)."""
    tournament, refusal = _tournament(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None
    user_id = _chosen(request, "judge")
    if user_id is None:
        return _not_chosen(request, _("judge: say which judge, by his number"))
    judge = next((j for j in tournament_judges(tournament=tournament) if j.pk == user_id), None)
    if judge is None:
        return problem_page(
            request,
            404,
            _("Not found"),
            _("there is no judge %(id)s in this tournament") % {"id": user_id},
        )
    name = judge.get_username()
    if request.method != "POST":
        me = judge.pk == request.user.pk
        return _confirm(
            request,
            tournament,
            question=(
                _("Remove yourself as a judge of this tournament?")
                if me
                else _("Remove %(name)s as a judge?") % {"name": name}
            ),
            explanation=(
                _("You will no longer be able to open this tournament's console.")
                if me
                else _(
                    "%(name)s will no longer be able to open this tournament's console. "
                    "His account stays; he can be added again."
                )
                % {"name": name}
            ),
            button=_("Remove %(name)s") % {"name": name},
            field=("judge", judge.pk),
        )
    try:
        judge_remove(
            tournament_id=tournament.pk, user_id=user_id, actor=_actor(request), now=timezone.now()
        )
    except TournamentError as error:
        return _page(request, tournament, status=error_status(error), problem=error.message)
    if not user_judges(request.user, tournament):
        # He removed himself: the page is no longer his.
        return redirect(resolve_url(settings.LOGIN_REDIRECT_URL))
    messages.success(
        request, _("%(name)s is no longer a judge of this tournament.") % {"name": name}
    )
    return redirect(_judges_url(tournament))


@never_cache
@require_http_methods(["GET", "POST"])
def judge_key_create_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """A new API key of the signed-in judge, shown in this answer only."""

    def act(tournament: Tournament, data: dict[str, Any]) -> HttpResponse:
        user = request.user
        assert isinstance(user, AbstractBaseUser)
        issued = judge_key_issue(
            user=user,
            tournament_id=tournament.pk,
            label=data["label"],
            actor=_actor(request),
            now=timezone.now(),
        )
        return _show_once(
            request,
            tournament,
            issued={
                "key": issued.key,
                "label": issued.judge_key.label,
                "id": issued.judge_key.pk,
                "example_url": public_url(request, f"/api/tournaments/{tournament.pk}/state"),
            },
        )

    return _form_posted(
        request, tournament_id, make_form=_key_form, form_key="key_form", field="label", act=act
    )


def _key_name(judge_key: JudgeKey) -> str:
    if judge_key.label:
        return _("API key %(id)s (“%(label)s”)") % {"id": judge_key.pk, "label": judge_key.label}
    return _("API key %(id)s") % {"id": judge_key.pk}


@never_cache
@require_http_methods(["GET", "POST"])
def judge_key_revoke_page(request: HttpRequest, tournament_id: int) -> HttpResponse:
    """GET ``?key=<id>`` asks "Revoke the key?"; POST revokes it: it stops working at once."""
    tournament, refusal = _tournament(request, tournament_id)
    if refusal is not None:
        return refusal
    assert tournament is not None
    key_id = _chosen(request, "key")
    if key_id is None:
        return _not_chosen(request, _("key: say which API key, by its number"))
    user = request.user
    assert isinstance(user, AbstractBaseUser)
    judge_key = next((k for k in user_judge_keys(user=user) if k.pk == key_id), None)
    if judge_key is None:
        return problem_page(
            request, 404, _("Not found"), _("you have no API key %(id)s") % {"id": key_id}
        )
    if request.method != "POST":
        return _confirm(
            request,
            tournament,
            question=_("Revoke %(key)s?") % {"key": _key_name(judge_key)},
            explanation=_(
                "Scripts that use it are refused from now on, in every tournament you judge. "
                "A revoked key cannot be restored; make a new one instead."
            ),
            button=_("Revoke the key"),
            field=("key", judge_key.pk),
        )
    try:
        judge_key_revoke(
            user=user,
            key_id=key_id,
            tournament_id=tournament.pk,
            actor=_actor(request),
            now=timezone.now(),
        )
    except TournamentError as error:
        return _page(request, tournament, status=error_status(error), problem=error.message)
    messages.success(request, _("%(key)s is revoked.") % {"key": _key_name(judge_key)})
    return redirect(_judges_url(tournament))
