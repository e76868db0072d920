"""The JSON API (django-ninja), mounted at ``/api/``; OpenAPI at ``/api/openapi.json``.

Every error is a 4xx JSON body ``{"detail": "<what went wrong>", "code": "<code>"}``: the
services' refusals with the status ``ERROR_STATUS`` gives their code, invalid input as 422
naming the field, unknown ids as 404, refusals of permission as 403. Bad input never gives
a 500.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, RequestDataTooBig
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.urls import URLPattern, URLResolver
from django.utils.translation import gettext, gettext_noop, ngettext
from ninja import NinjaAPI
from ninja.errors import AuthenticationError, HttpError
from ninja.errors import ValidationError as NinjaValidationError
from ninja.openapi.docs import Swagger, render_template
from ninja.operation import Operation
from ninja.parser import Parser

from battles.web.api import router as battles_router
from referees.api import router as referees_router
from referees.http.auth import AuthFailed
from referees.http.ratelimit import RateLimited
from referees.kernel.core import TournamentError
from sl5r.api_errors import error_status
from sl5r.rules.errors import MapError, RulesInputError
from sl5r.rules.jsonvalue import MAX_DEPTH, JsonProblem, JsonValueProblem, json_value_problem
from sl5r.serving.database_outage import DATABASE_OUTAGE_ERRORS, database_outage_response

ERROR_SIGN_IN = (
    "authentication required: open your join link or sign in, or send "
    "Authorization: Bearer <join token or judge API key>"
)
ERROR_FORBIDDEN = "you may not do this"
ERROR_NOT_FOUND = "not found"
# Where a field lives; the error names the field alone.
SOURCES = frozenset({"body", "query", "path", "header", "cookie", "form", "file"})
VALUE_ERROR_PREFIX = "Value error, "
# A check of the whole body names its field at the start of its message ("path: ...").
NAMED_MESSAGE = re.compile(r"^(?P<field>[A-Za-z_][\w.\[\]]*): (?P<message>.+)$", re.DOTALL)


class BodyNotAnObject(ValueError):
    """Valid JSON that is not an object: ninja would validate ``[1, 2]`` as ``{}`` and
    answer "kind: Field required", which misleads whoever wrote the array."""

    KINDS = {
        list: gettext_noop("an array"),
        str: gettext_noop("a string"),
        bool: gettext_noop("true or false"),
        type(None): gettext_noop("null"),
    }

    def __init__(self, value: object) -> None:
        self.kind = self.KINDS.get(type(value), gettext_noop("a number"))
        super().__init__(self.kind)


class BodyNotStorable(ValueError):
    """JSON that no database or page could hold (``sl5r.rules.jsonvalue``): NaN or Infinity,
    a lone surrogate, an integer beyond 64 bits, nesting too deep. Refused for every body
    here, before any field is read, so that no operation stores it (a map's free-form data,
    a battle action's own fields) and none trips over it (an id beyond a column's range)."""

    def __init__(self, found: JsonValueProblem) -> None:
        self.found = found
        super().__init__(str(found))


# The problems of sl5r.rules.jsonvalue, in the caller's language ({value}: what was found).
JSON_PROBLEMS = {
    JsonProblem.NOT_FINITE: gettext_noop("must be a finite number, not %(value)s"),
    JsonProblem.SURROGATE: gettext_noop(
        "contains a lone surrogate (%(value)s), which is not a character"
    ),
    JsonProblem.NUL: gettext_noop("contains a NUL character (U+0000), which is never allowed"),
    JsonProblem.INTEGER: gettext_noop(
        "the integer %(value)s is out of range (-9223372036854775808 to 9223372036854775807)"
    ),
    JsonProblem.DEPTH: gettext_noop("nested deeper than %(depth)s levels"),
    JsonProblem.TYPE: gettext_noop("%(value)s is not a JSON value"),
}


class ObjectBodyParser(Parser):
    """Every request body of this API is a JSON object that can be stored and shown."""

    def parse_body(self, request: HttpRequest) -> dict[str, Any]:
        data = super().parse_body(request)
        if not isinstance(data, dict):
            raise BodyNotAnObject(data)
        found = json_value_problem(data)
        if found is not None:
            raise BodyNotStorable(found)
        return data


class SessionSwagger(Swagger):
    """Swagger UI whose "Try it out" sends the CSRF token, so a signed-in judge's session works.

    ninja adds the token only when the API-wide ``auth`` checks CSRF; here each endpoint has
    its own (``referees.http.auth.SessionAuth`` does check it), so ninja would leave it out and
    every POST from the page would be refused 403 ``csrf``. The token goes in the page as
    ninja's own template puts it (``X-CSRFToken`` on every request); the check itself is
    unchanged.
    """

    def render_page(self, request: HttpRequest, api: NinjaAPI, **kwargs: Any) -> HttpResponse:
        self.settings["url"] = self.get_openapi_url(api, kwargs)
        context = {
            "swagger_settings": json.dumps(self.settings, indent=1),
            "api": api,
            "add_csrf": True,
        }
        return render_template(request, self.template, self.template_cdn, context)


class RefereeAPI(NinjaAPI):
    """The API, its operations named after their app's API and their handler.

    ninja names an operation after the handler's module (``referees_api_access_me``);
    ``referees.api`` is a package of one module per resource, and a handler moved between
    them would rename its operation in every client generated from the document. The name is
    ``<app>_api_<handler>`` (``referees_api_me``, ``battles_api_battle_show``) wherever in the
    app's API the handler lives.
    """

    def get_openapi_operation_id(self, operation: Operation) -> str:
        app = operation.view_func.__module__.split(".")[0]
        return f"{app}_api_{operation.view_func.__name__}"


api = RefereeAPI(
    title="SL5R Referee API",
    version="1",
    description=(
        "Refereeing a Strategic Legend of the Five Rings tournament. Browsers use their "
        "session (with the CSRF token on unsafe methods); scripts send "
        "`Authorization: Bearer <token>` with a player's join token or a judge's API key "
        "(`manage.py createjudgekey`). Errors are `{detail, code}` with a 4xx status."
    ),
    urls_namespace="api",
    docs=SessionSwagger(),
    docs_url="/docs",
    openapi_url="/openapi.json",
    parser=ObjectBodyParser(),
)
api.add_router("/", referees_router)
api.add_router("/", battles_router)


def _error(request: HttpRequest, status: int, detail: str, code: str, **extra: Any) -> HttpResponse:
    return api.create_response(request, {"detail": detail, "code": code, **extra}, status=status)


@api.exception_handler(TournamentError)
def _tournament_error(request: HttpRequest, exc: TournamentError) -> HttpResponse:
    return _error(request, error_status(exc), exc.message, exc.code)


def _field(loc: list[Any] | tuple[Any, ...], with_param: bool) -> str:
    parts = [str(p) for p in loc]
    if parts and parts[0] in SOURCES:
        parts = parts[1:]
        # A body schema is one parameter: its name ("payload") is no field of the JSON.
        if with_param and parts:
            parts = parts[1:]
    return ".".join(parts)


def _message(error: dict[str, Any]) -> str:
    message = str(error.get("msg", "invalid"))
    translated = _translated(error)
    if translated is not None:
        return translated
    return message.removeprefix(VALUE_ERROR_PREFIX)


# pydantic's own messages, by error type, in the caller's language: the same English as
# pydantic's, so that English answers are unchanged (codes and field names stay English).
PYDANTIC_MESSAGES: dict[str, str] = {
    "missing": gettext_noop("Field required"),
    "int_type": gettext_noop("Input should be a valid integer"),
    "int_parsing": gettext_noop(
        "Input should be a valid integer, unable to parse string as an integer"
    ),
    "int_from_float": gettext_noop(
        "Input should be a valid integer, got a number with a fractional part"
    ),
    "float_type": gettext_noop("Input should be a valid number"),
    "float_parsing": gettext_noop(
        "Input should be a valid number, unable to parse string as a number"
    ),
    "string_type": gettext_noop("Input should be a valid string"),
    "bool_type": gettext_noop("Input should be a valid boolean"),
    "bool_parsing": gettext_noop("Input should be a valid boolean, unable to interpret input"),
    "list_type": gettext_noop("Input should be a valid list"),
    "dict_type": gettext_noop("Input should be a valid dictionary"),
    "model_attributes_type": gettext_noop(
        "Input should be a valid dictionary or object to extract fields from"
    ),
    "datetime_type": gettext_noop("Input should be a valid datetime"),
    "datetime_parsing": gettext_noop("Input should be a valid datetime, %(error)s"),
    "datetime_from_date_parsing": gettext_noop(
        "Input should be a valid datetime or date, %(error)s"
    ),
    "literal_error": gettext_noop("Input should be %(expected)s"),
    "enum": gettext_noop("Input should be %(expected)s"),
    "greater_than": gettext_noop("Input should be greater than %(gt)s"),
    "greater_than_equal": gettext_noop("Input should be greater than or equal to %(ge)s"),
    "less_than": gettext_noop("Input should be less than %(lt)s"),
    "less_than_equal": gettext_noop("Input should be less than or equal to %(le)s"),
    "extra_forbidden": gettext_noop("Extra inputs are not permitted"),
    "string_pattern_mismatch": gettext_noop("String should match pattern '%(pattern)s'"),
}


# The checks of referees/api/schemas/setup.py raise these (as ValueError, so pydantic's
# value_error): marked here for the catalog, translated by _translated.
SCHEMA_MESSAGES = (
    gettext_noop("give the time with its UTC offset, e.g. 2030-05-01T18:00:00+03:00"),
    gettext_noop("the time in UTC falls outside the years 1 to 9999"),
)


def _plural_message(kind: str, ctx: dict[str, Any]) -> str | None:
    """pydantic's messages that count (characters, items), in the caller's language."""
    if kind == "string_too_short":
        n = ctx["min_length"]
        return ngettext(
            "String should have at least %(min_length)s character",
            "String should have at least %(min_length)s characters",
            n,
        ) % {"min_length": n}
    if kind == "string_too_long":
        n = ctx["max_length"]
        return ngettext(
            "String should have at most %(max_length)s character",
            "String should have at most %(max_length)s characters",
            n,
        ) % {"max_length": n}
    if kind == "too_short" and ctx.get("field_type") == "List":
        n = ctx["min_length"]
        return ngettext(
            "List should have at least %(min_length)s item after validation, not %(actual)s",
            "List should have at least %(min_length)s items after validation, not %(actual)s",
            n,
        ) % {"min_length": n, "actual": ctx["actual_length"]}
    if kind == "too_long" and ctx.get("field_type") == "List":
        n = ctx["max_length"]
        return ngettext(
            "List should have at most %(max_length)s item after validation, not %(actual)s",
            "List should have at most %(max_length)s items after validation, not %(actual)s",
            n,
        ) % {"max_length": n, "actual": ctx["actual_length"]}
    return None


def _translated(error: dict[str, Any]) -> str | None:
    """The message of a pydantic error in the active language; None: keep pydantic's.

    Only when a translation exists (English keeps pydantic's own text, word for word). The
    values pydantic quotes (``'l5r' or 'bushido'``) are codes and stay as they are, but for
    the word "or" between them.
    """
    kind = str(error.get("type", ""))
    ctx = dict(error.get("ctx") or {})
    try:
        if kind == "value_error" and "error" in ctx:
            # A schema's own check: its message is in the catalog (or stays English).
            text = str(ctx["error"])
            translated = gettext(text)
        elif kind in PYDANTIC_MESSAGES:
            template = PYDANTIC_MESSAGES[kind]
            translated = gettext(template)
            if translated == template:
                return None
            if "expected" in ctx:
                # between the last two of the quoted values
                ctx["expected"] = str(ctx["expected"]).replace("' or '", gettext("' or '"))
            translated = translated % ctx if "%(" in translated else translated
        else:
            translated = _plural_message(kind, ctx) or ""
            if translated == str(error.get("msg", "")):
                return None
    except (KeyError, TypeError, ValueError):
        return None
    return translated or None


@api.exception_handler(NinjaValidationError)
def _validation_error(request: HttpRequest, exc: NinjaValidationError) -> HttpResponse:
    errors = []
    lines = []
    for error in exc.errors:
        loc = list(error.get("loc", ()))
        field = _field(loc, with_param=bool(loc) and loc[0] == "body")
        message = _message(error)
        named = NAMED_MESSAGE.match(message)
        if named:
            field = ".".join(p for p in (field, named["field"]) if p)
            message = named["message"]
        lines.append(f"{field}: {message}" if field else message)
        errors.append({"field": field, "message": message, "type": str(error.get("type", ""))})
    detail = "; ".join(lines) or "the request is not valid"
    return _error(request, 422, detail, "validation", errors=errors)


@api.exception_handler(DjangoValidationError)
def _django_validation_error(request: HttpRequest, exc: DjangoValidationError) -> HttpResponse:
    return _error(request, 422, " ".join(exc.messages), "validation")


@api.exception_handler(MapError)
def _map_error(request: HttpRequest, exc: MapError) -> HttpResponse:
    return _error(request, 422, str(exc), "map")


@api.exception_handler(RulesInputError)
def _rules_input_error(request: HttpRequest, exc: RulesInputError) -> HttpResponse:
    return _error(request, 422, str(exc), "rules_input")


@api.exception_handler(Http404)
def _not_found(request: HttpRequest, exc: Http404) -> HttpResponse:
    return _error(request, 404, str(exc) or ERROR_NOT_FOUND, "not_found")


@api.exception_handler(PermissionDenied)
def _forbidden(request: HttpRequest, exc: PermissionDenied) -> HttpResponse:
    return _error(request, 403, str(exc) or ERROR_FORBIDDEN, "forbidden")


@api.exception_handler(RateLimited)
def _rate_limited(request: HttpRequest, exc: RateLimited) -> HttpResponse:
    response = _error(request, 429, exc.message, "rate_limited")
    response["Retry-After"] = str(exc.retry_after)
    return response


@api.exception_handler(AuthFailed)
def _auth_failed(request: HttpRequest, exc: AuthFailed) -> HttpResponse:
    return _error(request, exc.status_code, exc.message, exc.code)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(request, 401, ERROR_SIGN_IN, "unauthorized")


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    codes = {400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found"}
    if isinstance(exc.__cause__, BodyNotAnObject):
        detail = gettext("the request body must be a JSON object, not %(kind)s") % {
            "kind": gettext(exc.__cause__.kind)
        }
        return _error(request, 422, detail, "validation")
    if isinstance(exc.__cause__, BodyNotStorable):
        found = exc.__cause__.found
        message = gettext(JSON_PROBLEMS[found.problem]) % {
            "value": found.value,
            "depth": MAX_DEPTH,
        }
        detail = f"{found.place}: {message}" if found.place else message
        errors = [{"field": found.place, "message": message, "type": found.problem.value}]
        return _error(request, 422, detail, "validation", errors=errors)
    if exc.status_code == 400 and isinstance(exc.__cause__, (ValueError, RecursionError)):
        # ninja's "Cannot parse request body": say what is wrong with it.
        detail = gettext("the request body is not valid JSON: %(error)s") % {"error": exc.__cause__}
        return _error(request, 400, detail, "bad_json")
    return _error(request, exc.status_code, exc.message, codes.get(exc.status_code, "error"))


@api.exception_handler(RequestDataTooBig)
def _too_large(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    # Django would answer an empty HTML 400 page.
    detail = gettext("the request body is larger than the %(limit)s bytes this site accepts") % {
        "limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    }
    return _error(request, 413, detail, "too_large")


# ninja would answer these 500 (with DEBUG on, a traceback): a 503 naming the problem.
def _database_outage(request: HttpRequest, exc: Exception | type[Exception]) -> HttpResponse:
    # ninja hands over the raised error; its annotation also admits the class.
    error = exc if isinstance(exc, Exception) else exc()
    return database_outage_response(request, error)


for _outage_error in DATABASE_OUTAGE_ERRORS:
    api.add_exception_handler(_outage_error, _database_outage)


def api_not_found(request: HttpRequest, rest: str = "") -> HttpResponse:
    """Any other path under /api/: a JSON 404 like the API's own."""
    return _error(request, 404, f"there is no API endpoint /api/{rest}", "not_found")


def _json_405(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """ninja answers a wrong method with an empty 405; give it the API's error body."""

    @functools.wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        response = view(request, *args, **kwargs)
        if response.status_code == 405 and not response.get("Content-Type", "").startswith(
            "application/json"
        ):
            allowed = response.get("Allow", "")
            detail = f"{request.method} is not allowed here (allowed: {allowed})"
            response = _error(request, 405, detail, "method_not_allowed")
            response["Allow"] = allowed
        return response

    return wrapped


def api_urls() -> tuple[list[URLPattern | URLResolver], str, str]:
    """``api.urls``, with JSON bodies for 405s too."""
    patterns, app_name, namespace = api.urls
    for pattern in patterns:
        if isinstance(pattern, URLPattern):
            pattern.callback = _json_405(pattern.callback)
    return patterns, app_name, namespace
