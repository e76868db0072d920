"""The websocket handshake's origin check: the page must come from this very site.

Channels' ``AllowedHostsOriginValidator`` compares the Origin's host name with
``ALLOWED_HOSTS`` only, so a page served by anything else on the same machine (another
port: ``http://127.0.0.1:9999`` against a site on :8000) or over the other scheme could
open a socket with the visitor's cookies. ``SameOriginValidator`` accepts the handshake
only when

- the request's ``Host`` is one of ``ALLOWED_HOSTS`` (as Django's ``get_host`` checks), and
- the ``Origin`` is the request's own ``scheme://host:port`` (``ws`` -> ``http``,
  ``wss`` -> ``https``; a port left out is the scheme's default), or one of
  ``CSRF_TRUSTED_ORIGINS`` (exact, or ``https://*.example.com`` as Django's CSRF check
  reads it): the same rule as Django's CSRF check of a form post.

The scheme: Daphne puts none in a websocket's scope, so it is ``wss`` when the venue server
serves TLS itself (``SL5R_TLS``: that port speaks nothing else) or, with
``SECURE_PROXY_SSL_HEADER``, when the proxy's header says ``https`` (as Django's
``is_secure``); otherwise ``ws``. A scope that carries a ``scheme`` is believed.

A handshake without an Origin (or ``null``) is refused, as Channels refused it before: every
browser sends one, and the tests' and benchmarks' clients send the site's own. A refusal is
the same as before, Channels' ``WebsocketDenier``: the handshake is answered 403 (the
consumer's 44xx close codes are for connections that got past this check).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from django.utils.http import is_same_domain

DEFAULT_PORTS = {"http": 80, "https": 443}


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            try:
                return str(value.decode("latin-1"))
            except UnicodeDecodeError:  # pragma: no cover - latin-1 decodes any byte
                return None
    return None


def request_scheme(scope: dict[str, Any]) -> str:
    """``https`` or ``http``: the scheme of the page that may open this socket."""
    scheme = scope.get("scheme")
    if scheme in ("ws", "wss", "http", "https"):
        return "https" if scheme in ("wss", "https") else "http"
    if getattr(settings, "SL5R_TLS", None) is not None:
        return "https"
    proxy_header = getattr(settings, "SECURE_PROXY_SSL_HEADER", None)
    if proxy_header:
        meta_name, secure_value = proxy_header
        name = meta_name.removeprefix("HTTP_").lower().replace("_", "-").encode("latin-1")
        value = _header(scope, name)
        if value is not None and value.split(",", 1)[0].strip() == secure_value:
            return "https"
    return "http"


def _allowed_hosts() -> list[str]:
    allowed = list(settings.ALLOWED_HOSTS)
    if settings.DEBUG and not allowed:  # as Django's HttpRequest.get_host
        allowed = [".localhost", "127.0.0.1", "[::1]"]
    return allowed


def _origin_tuple(origin: str) -> tuple[str, str, int] | None:
    """``(scheme, host, port)`` of an http(s) origin, the port filled in; else None."""
    try:
        parts = urlsplit(origin)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path or parts.query or parts.fragment or parts.username or parts.password:
        return None
    return parts.scheme, parts.hostname.lower(), port or DEFAULT_PORTS[parts.scheme]


def _trusted(origin: str) -> bool:
    """``origin`` is one of ``CSRF_TRUSTED_ORIGINS`` (as ``CsrfViewMiddleware`` matches)."""
    parsed = urlsplit(origin)
    for trusted in settings.CSRF_TRUSTED_ORIGINS:
        if "*" not in trusted:
            if origin == trusted:
                return True
            continue
        pattern = urlsplit(trusted)
        if pattern.scheme == parsed.scheme and is_same_domain(
            parsed.netloc, pattern.netloc.lstrip("*")
        ):
            return True
    return False


def origin_allowed(scope: dict[str, Any]) -> bool:
    """Whether this handshake's Origin is the site's own (or trusted) and its Host allowed."""
    origin = _header(scope, b"origin")
    host = _header(scope, b"host")
    if not origin or not host:
        return False
    domain, _port = split_domain_port(host.lower())
    if not domain or not validate_host(domain, _allowed_hosts()):
        return False
    if _trusted(origin):
        return True
    scheme = request_scheme(scope)
    own = _origin_tuple(f"{scheme}://{host}")
    return own is not None and _origin_tuple(origin) == own


class SameOriginValidator:
    """ASGI middleware for websockets: refuse a handshake from another origin (see above)."""

    def __init__(self, application: Any) -> None:
        self.application = application

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("SameOriginValidator is for websocket connections only")
        if origin_allowed(scope):
            return await self.application(scope, receive, send)
        # Channels' stubs type a consumer's scope as their TypedDict; this one is a plain dict.
        return await WebsocketDenier()(scope, receive, send)  # type: ignore[arg-type]
