"""The page a new judge's one-time link opens: he chooses his password and is signed in.

Django's own password-reset confirmation does the work, on the invitation tokens of
``referees.services.judges``: opening the link moves the token into the session and redirects to
the same address without it (so it never leaks in a Referer), and only submitting the form
uses it up. A link preview in a chat app, which only fetches the page, does not spend the
link. Once the password is set the judge is signed in and goes to his home; from then on he
signs in on the site's sign-in page. A link used already, expired or forged gets a page
saying so (410), never a 500.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.views import PasswordResetConfirmView
from django.http import HttpResponse
from django.shortcuts import resolve_url
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from referees.http.refusals import problem_page
from referees.services.judges import welcome_link_account, welcome_tokens


class JudgeWelcomeView(PasswordResetConfirmView):
    """``/accounts/welcome/<uidb64>/<token>/``: choose a password, then signed in."""

    template_name = "referees/judge_welcome.html"
    token_generator = welcome_tokens
    post_reset_login = True
    title = gettext_lazy("Welcome: choose your password")

    def get_user(self, uidb64: str) -> User | None:
        # A disabled account's link signs nobody in.
        return welcome_link_account(uidb64=uidb64)

    def get_success_url(self) -> str:
        return str(resolve_url(settings.LOGIN_REDIRECT_URL))

    def render_to_response(self, context: dict[str, Any], **response_kwargs: Any) -> HttpResponse:
        if not self.validlink:
            return problem_page(
                self.request,
                410,
                _("This sign-in link cannot be used"),
                _(
                    "This link has been used already, has expired or is not valid. "
                    "Ask a judge of your tournament for a new one, or sign in with your "
                    "password if you have chosen one."
                ),
            )
        response: HttpResponse = super().render_to_response(context, **response_kwargs)
        return response

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        context: dict[str, Any] = super().get_context_data(**kwargs)
        context["welcome_user"] = self.user
        return context


judge_welcome = JudgeWelcomeView.as_view()
