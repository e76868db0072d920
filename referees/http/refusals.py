"""The answers a page gives instead of itself: a problem page, or the judges-only check.

Shared by the judge console, the printable sheets (join links, Small Farm proxies) and the
battle table page, so that each refuses in the same words and with the same status.
"""

from __future__ import annotations

from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.translation import gettext as _

from referees.kernel.access import tournament_get, user_judges
from referees.kernel.core import TournamentError
from referees.models import Tournament


def problem_page(request: HttpRequest, status: int, title: str, message: str) -> HttpResponse:
    return render(
        request, "referees/problem.html", {"title": title, "message": message}, status=status
    )


def judge_or_refusal(
    request: HttpRequest, tournament_id: int, *, judges_only: str
) -> tuple[Tournament | None, HttpResponse | None]:
    """The tournament for its judge; for anyone else the answer to send instead.

    Not signed in: the site's sign-in page (``LOGIN_URL``), back here afterwards. No such
    tournament: 404. Signed in but not one of its judges: 403 with ``judges_only``, saying
    what is reserved.
    """
    if not request.user.is_authenticated:
        return None, redirect_to_login(request.get_full_path())
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError as error:
        return None, problem_page(request, 404, _("Not found"), error.message)
    if not user_judges(request.user, tournament):
        return None, problem_page(request, 403, _("Judges only"), judges_only)
    return tournament, None
