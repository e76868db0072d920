"""Who is calling the API: a judge, a player, or nobody in particular.

Two ways in, tried in this order:

- ``Authorization: Bearer <token>`` for scripts and the players' pages: a player's join
  token, or a judge's API key (``manage.py createjudgekey``). A token that is present but
  not valid is refused with 401 at once, rather than quietly treated as no token.
- The Django session for browsers: a logged-in user (a judge), and/or the player the
  device joined as (``/join/<token>``). Unsafe methods then need the CSRF token, as any
  form on the site does; bearer requests do not, a browser never sends that header itself.

Endpoints anyone may read add ``public`` last, so they get an anonymous caller instead of a
401.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.http import HttpRequest
from ninja.errors import AuthenticationError, HttpError
from ninja.security import APIKeyCookie, HttpBearer
from ninja.utils import check_csrf

from referees.kernel.access import (
    judge_key_user,
    player_from_session,
    player_session_logout,
    session_claim,
    token_is_judge_key,
    user_is_active,
)
from referees.kernel.tokens import PlayerClaim, token_claim
from referees.models import Player
from referees.services import player_from_token

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "TRACE"})

ERROR_BAD_TOKEN = (
    "the bearer token is not valid: the join link was revoked or replaced, "
    "or the API key is unknown or revoked"
)
ERROR_CSRF = (
    "CSRF check failed: a browser session must send the X-CSRFToken header "
    "(the csrftoken cookie's value) with this request"
)


@dataclass(frozen=True)
class Caller:
    """The person behind a request: a user (maybe a judge), a player, both or neither."""

    via: Literal["bearer", "session", "public"]
    user: AbstractBaseUser | None = None
    player: Player | None = None
    # Only from the ``CLAIMED`` schemes: who the signed link or session says the player
    # is, not yet read; the service that acts on it checks it under the lock.
    claim: PlayerClaim | None = None


class AuthFailed(HttpError):
    """A refused credential, with the code the error body carries."""

    def __init__(self, status: int, message: str, code: str) -> None:
        super().__init__(status, message)
        self.code = code


class BearerAuth(HttpBearer):
    """A player's join token or a judge's API key.

    ``claims``: a player's token is only checked for its signature, and the caller carries
    its claim (``Caller.claim``) for a service to check under the tournament's lock: the
    orders, where the frame holds every player's link (referees/services/order_frame.py).
    """

    def __init__(self, *, claims: bool = False) -> None:
        super().__init__()
        self.claims = claims

    def __call__(self, request: HttpRequest) -> Caller | None:
        # HttpBearer's own, but reading the one header from META: ``request.headers`` builds
        # a mapping of every header first, a tenth of an order's API work in a burst.
        value = request.META.get("HTTP_AUTHORIZATION", "")
        scheme, _space, token = value.partition(" ")
        if not value or scheme.lower() != self.openapi_scheme:
            return None
        return self.authenticate(request, token)

    def authenticate(self, request: HttpRequest, token: str) -> Caller | None:
        token = token.strip()
        if token_is_judge_key(token):
            user = judge_key_user(token)
            if user is not None:
                return Caller(via="bearer", user=user)
        elif self.claims:
            claim = token_claim(token)
            if claim is not None:
                return Caller(via="bearer", claim=claim)
        else:
            player = player_from_token(token)
            if player is not None:
                return Caller(via="bearer", player=player)
        raise AuthFailed(401, ERROR_BAD_TOKEN, "bad_token")


class SessionAuth(APIKeyCookie):
    """The browser's session: a logged-in user, and/or the player the device joined as."""

    def __init__(self, *, claims: bool = False) -> None:
        self.param_name = settings.SESSION_COOKIE_NAME
        self.claims = claims  # as BearerAuth's
        super().__init__(csrf=True)

    def __call__(self, request: HttpRequest) -> Caller | None:
        user = request.user if user_is_active(getattr(request, "user", None)) else None
        session = getattr(request, "session", None)
        player, claim = None, None
        if session is not None and self.claims and user is None:
            claim = session_claim(session)
        elif session is not None:
            player = player_from_session(session)
        if user is None and player is None and claim is None:
            return None
        # Checked only for a session that stands for someone: without one there is
        # nothing a forged request could act as, and the answer should be 401.
        if (
            request.method not in SAFE_METHODS
            and not getattr(request, "_ninja_csrf_exempt", False)
            and check_csrf(request) is not None
        ):
            raise AuthFailed(403, ERROR_CSRF, "csrf")
        return Caller(via="session", user=user, player=player, claim=claim)  # type: ignore[arg-type]

    def _get_key(self, request: HttpRequest) -> str | None:  # pragma: no cover - unused
        return request.COOKIES.get(self.param_name)

    def authenticate(self, request: HttpRequest, key: str | None) -> Caller | None:
        return None  # pragma: no cover - __call__ does the work


def public(request: HttpRequest) -> Caller:
    """Anyone: the last resort of endpoints that need no credentials."""
    return Caller(via="public")


bearer = BearerAuth()
session = SessionAuth()

# Endpoints that need someone: a judge, a player, or a user setting a tournament up.
SIGNED_IN = [bearer, session]
# Endpoints that answer anyone, with more for those who say who they are.
ANYONE = [bearer, session, public]
# A General's own orders: his link or session is checked by the order service, under the
# tournament's lock, without a query of its own (referees/services/order_frame.py).
CLAIMED = [BearerAuth(claims=True), SessionAuth(claims=True)]
# What anyone may read, with a player's link or session as a claim that the endpoint reads
# with its own rows, in the same statement (the state: referees/kernel/readers.py).
ANYONE_CLAIMED = [*CLAIMED, public]


def caller_recheck(request: HttpRequest) -> Caller:
    """The caller as ``SIGNED_IN`` reads him, player row and all (401 when nobody): for a
    claim the service refused, to say exactly why."""
    for scheme in (bearer, session):
        caller = scheme(request)
        if caller is not None:
            request.auth = caller  # type: ignore[attr-defined]
            return caller
    raise AuthenticationError()


def claim_refused(request: HttpRequest, caller: Caller) -> Caller:
    """A claim whose link no longer stands (revoked, replaced, its player gone), as
    ``SIGNED_IN`` and ``ANYONE`` refuse it: a bearer token 401 at once; a session is logged
    out of the player and is whoever else it stands for, or nobody."""
    if caller.via == "bearer":
        raise AuthFailed(401, ERROR_BAD_TOKEN, "bad_token")
    session = getattr(request, "session", None)
    if session is not None:
        player_session_logout(session)
    return Caller(via="public")


def caller_of(request: HttpRequest) -> Caller:
    """The ``Caller`` that authentication stored on the request."""
    caller = getattr(request, "auth", None)
    return caller if isinstance(caller, Caller) else Caller(via="public")
