"""Requests carrying a NUL character are refused with a 400 that says where it is.

PostgreSQL cannot store or even compare a text containing NUL (U+0000): a query with one
fails with ``DataError``, which would be a 500 (an army code ``a%00b`` in a URL, an
announcement ``"\\u0000"``, a player's name). SQLite stores it silently, so the same
request would behave differently on the two databases. No field of this site has a use
for the character, so it is refused before any view runs: in the path or the query string
(``%00``), and anywhere in a JSON body (a ``\\u0000`` in a string or a key). The answer is
``{"detail", "code": "nul_character"}`` under ``/api/``, as the API's other errors, and a
short text elsewhere. Form posts are Django forms, whose fields refuse NUL themselves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.utils.translation import gettext as _

NUL = "\x00"
NUL_CODE = "nul_character"
API_PREFIX = "/api/"
# Bodies that are not JSON: forms (checked by Django's form fields) and uploads.
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/")


def nul_field(data: Any) -> str | None:
    """Where in parsed JSON ``data`` a string (or key) holds a NUL, e.g. ``path[1]``; else None.

    The top level is ``""``. A loop, not a recursion: JSON nested as deep as the parser
    allows must not exhaust the stack here.
    """
    pending: list[tuple[Any, str]] = [(data, "")]
    while pending:
        value, where = pending.pop()
        if isinstance(value, str):
            if NUL in value:
                return where
        elif isinstance(value, dict):
            for key, item in value.items():
                field = f"{where}.{key}" if where else str(key)
                if NUL in str(key):
                    return field
                pending.append((item, field))
        elif isinstance(value, list):
            pending.extend((item, f"{where}[{index}]") for index, item in enumerate(value))
    return None


def _in_address(request: HttpRequest) -> bool:
    if NUL in request.path:
        return True
    query = request.META.get("QUERY_STRING", "")
    return NUL in query or "%00" in query


def _in_body(request: HttpRequest) -> str | None:
    """Where the JSON body holds a NUL (``body`` for a bare string); None if nowhere."""
    content_type = request.content_type or ""  # None only on an HttpRequest built by hand
    if request.method in ("GET", "HEAD", "OPTIONS") or content_type.startswith(FORM_TYPES):
        return None
    try:
        raw = request.body
    except RequestDataTooBig:
        return None  # refused where the body is read, with its own error
    if b"\\u0000" not in raw and b"\x00" not in raw:
        return None  # the common case: no need to parse the body twice
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None  # not JSON (or nested too deep): whoever reads it refuses it
    found = nul_field(data)
    if found is None:
        return None
    return found or "body"


def nul_refusal(request: HttpRequest, detail: str) -> HttpResponse:
    """The 400 for ``request``: the API's error body under ``/api/``, plain text elsewhere."""
    if request.path.startswith(API_PREFIX):
        return JsonResponse({"detail": detail, "code": NUL_CODE}, status=400)
    return HttpResponseBadRequest(detail, content_type="text/plain; charset=utf-8")


class NulCharacterMiddleware:
    """Refuses a NUL character in the path, the query string or a JSON body (400)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if _in_address(request):
            return nul_refusal(
                request, _("the address contains a NUL character (U+0000), which is never allowed")
            )
        field = _in_body(request)
        if field is not None:
            return nul_refusal(
                request,
                _("%(field)s: contains a NUL character (U+0000), which is never allowed")
                % {"field": field},
            )
        return self.get_response(request)
