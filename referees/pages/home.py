"""The site's front doors: the public home, the judges' sign-in and sign-out, the judge's home.

The public home lists the tournaments under way (their big screen and history) and the maps;
the judge's home lists the tournaments he judges with the links he works from. Judges sign
in on Django's ``LoginView`` with this site's template, never the admin's page, which only
staff accounts may use. Failed sign-ins are limited per address (``SL5R_RATE_LIMITS``), on
this page and on the admin's, in one count: a guesser gains nothing by changing doors.
"""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.decorators import login_required
from django.contrib.auth.forms import AuthenticationForm
from django.contrib.auth.views import LoginView, LogoutView
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from referees.http.ratelimit import RateLimited, client_ip, rate_check, rate_hit
from referees.http.refusals import problem_page
from referees.reading.homes import (
    judged_tournaments,
    tournaments_finished_recently,
    tournaments_under_way,
)
from strategic_map.selectors import map_list

SIGN_IN_SCOPE = "sign_ins"


def _sign_in_key(request: HttpRequest) -> str:
    return f"ip:{client_ip(request)}"


class SignInView(LoginView):
    """Django's sign-in, with this site's page and a limit on wrong passwords."""

    template_name = "registration/sign_in.html"

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            rate_check(SIGN_IN_SCOPE, _sign_in_key(request))
        except RateLimited as limited:
            refused = problem_page(
                request,
                429,
                _("Too many attempts"),
                _(
                    "Too many wrong passwords were tried from this address. "
                    "Try again in %(seconds)s seconds."
                )
                % {"seconds": limited.retry_after},
            )
            refused["Retry-After"] = str(limited.retry_after)
            return refused
        response: HttpResponse = super().post(request, *args, **kwargs)
        return response

    def form_invalid(self, form: AuthenticationForm) -> HttpResponse:
        # Only a wrong name or password counts: an empty field guesses nothing.
        if form.is_bound and form.data.get("username") and form.data.get("password"):
            rate_hit(SIGN_IN_SCOPE, _sign_in_key(self.request))
        response: HttpResponse = super().form_invalid(form)
        return response


sign_in = SignInView.as_view()


class AdminSignInView(SignInView):
    """The admin's sign-in (``/admin/login/``): its own page and staff-only form, with the
    count of wrong passwords this site's sign-in keeps (Django's has none)."""

    template_name = "admin/login.html"
    authentication_form = AdminAuthenticationForm
    next_page = "admin:index"

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        # What django.contrib.admin's own login view puts in its page.
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context.update(
            admin.site.each_context(self.request),
            title=_("Log in"),
            subtitle=None,
            app_path=self.request.get_full_path(),
            username=self.request.user.get_username(),
        )
        return context


admin_sign_in = AdminSignInView.as_view()
# POST only (Django 5): a link or an image elsewhere cannot sign a judge out.
sign_out = LogoutView.as_view()


@never_cache
@require_safe
@login_required
def judge_home(request: HttpRequest) -> HttpResponse:
    """The tournaments the signed-in user judges (a superuser: all), with their pages."""
    return render(
        request,
        "referees/judge_home.html",
        {"tournaments": judged_tournaments(user=request.user)},
    )


@never_cache
@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """Tournaments under way and lately finished, to follow on their big screen; the maps."""
    return render(
        request,
        "referees/home.html",
        {
            "under_way": tournaments_under_way(),
            "finished": tournaments_finished_recently(now=timezone.now()),
            "maps": map_list(),
        },
    )
