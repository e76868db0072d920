"""A database that refuses connections gets a clear 503, never a 500 or a traceback.

While PostgreSQL restarts, fails over or refuses connections, every query raises
``django.db.OperationalError`` (or ``InterfaceError`` on a connection the server dropped).
Left alone that is a 500, and with ``DEBUG`` on a traceback page. Here it becomes a 503
with ``Retry-After``: a JSON body ``{"detail", "code": "database_unavailable"}`` under
``/api/`` (as the API's other errors), a short page that reloads itself elsewhere. The
server needs no restart afterwards: connections are checked before reuse
(``CONN_HEALTH_CHECKS``), so the first request after the outage reconnects.

``DatabaseOutageMiddleware`` catches what a view raises; the API catches its own errors
first, so ``sl5r.api`` registers ``database_outage_response`` as its handler for the same
errors. ``/healthz`` answers its own 503.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils.html import format_html
from django.utils.translation import get_language
from django.utils.translation import gettext as _

log = logging.getLogger(__name__)

DATABASE_OUTAGE_ERRORS: tuple[type[Exception], ...] = (OperationalError, InterfaceError)
"""What a database that is down, restarting or refusing connections raises."""

OUTAGE_CODE = "database_unavailable"
RETRY_AFTER_SECONDS = 5
JSON_PATH_PREFIXES = ("/api/", "/healthz")

PAGE = (
    '<!DOCTYPE html><html lang="{}"><head><meta charset="utf-8">'
    '<meta name="viewport" content="width=device-width, initial-scale=1">'
    '<meta http-equiv="refresh" content="{}"><title>{}</title></head>'
    "<body><h1>{}</h1><p>{}</p></body></html>"
)


def database_outage_text() -> str:
    """What the caller is told, in the request's language."""
    return str(_("The database is not answering. Try again in a few seconds."))


def database_error_summary(exc: BaseException) -> str:
    """One line for the log: the error's kind and the first line of its text (psycopg's
    run over several lines, and a traceback says nothing more when the server is down)."""
    first_line = (str(exc).strip().splitlines() or [""])[0]
    return f"{type(exc).__name__}: {first_line}" if first_line else type(exc).__name__


def database_outage_response(request: HttpRequest, exc: Exception) -> HttpResponse:
    """The 503 for ``request`` that failed with ``exc``: JSON for the API, else a page.

    The error's own text (host names, the database's name) stays in the server's log.
    """
    log.warning(
        "database unavailable: %s %s answered 503 (%s)",
        request.method,
        request.path,
        database_error_summary(exc),
    )
    detail = database_outage_text()
    response: HttpResponse
    if request.path.startswith(JSON_PATH_PREFIXES):
        response = JsonResponse({"detail": detail, "code": OUTAGE_CODE}, status=503)
    else:
        title = _("Service unavailable")
        page = format_html(PAGE, get_language() or "en", RETRY_AFTER_SECONDS, title, title, detail)
        response = HttpResponse(page, status=503, content_type="text/html; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response


class DatabaseOutageMiddleware:
    """Turns a view's database connection errors into ``database_outage_response``."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, DATABASE_OUTAGE_ERRORS):
            return database_outage_response(request, exception)
        return None
