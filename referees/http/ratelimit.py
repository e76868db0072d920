"""A small fixed-window rate limiter on Django's cache.

Each scope allows a number of requests per window for one key: "orders" counts a player's
order submissions; "joins" counts an IP address's failed join attempts (a wrong or revoked
token); "sign_ins" its failed sign-ins (a wrong password). Good ones are not counted: a whole
venue may share one address, and a valid token cannot be guessed anyway; the limit is there
to stop guessing.

The limits come from ``settings.SL5R_RATE_LIMITS``, read on every call, e.g.
``{"orders": "30/min", "joins": "20/min"}`` (the defaults); ``None`` switches a scope off.
A fixed window lets up to twice the limit through around a window's edge, which is fine
for stopping a stuck script or a guessing loop; nothing here is about fairness.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import redis
from django.conf import settings
from django.core.cache import cache
from django.core.signals import setting_changed
from django.dispatch import receiver
from django.http import HttpRequest
from redis.exceptions import RedisError

log = logging.getLogger(__name__)

DEFAULT_RATES: dict[str, str | None] = {
    "orders": "30/min",
    "joins": "20/min",
    "sign_ins": "10/min",
}
UNITS = {"s": 1, "sec": 1, "second": 1, "m": 60, "min": 60, "minute": 60, "h": 3600, "hour": 3600}
WHAT = {
    "orders": "order submissions",
    "joins": "failed join attempts",
    "sign_ins": "failed sign-ins",
}


@dataclass(frozen=True)
class Rate:
    limit: int
    seconds: int

    @classmethod
    def parse(cls, text: str) -> Rate:
        """``"30/min"``, ``"5/10s"``, ``"100/hour"``."""
        count, _, period = text.partition("/")
        digits = "".join(ch for ch in period if ch.isdigit())
        unit = period[len(digits) :].strip().lower()
        if not count.strip().isdigit() or unit not in UNITS:
            raise ValueError(f'rate "{text}": write it as "30/min", "5/10s" or "100/hour"')
        return cls(limit=int(count), seconds=(int(digits) if digits else 1) * UNITS[unit])

    def describe(self) -> str:
        if self.seconds == 60:
            return f"{self.limit} a minute"
        if self.seconds == 3600:
            return f"{self.limit} an hour"
        return f"{self.limit} every {self.seconds} seconds"


class RateLimited(Exception):
    """Too many requests in a scope; ``retry_after`` is the wait in seconds."""

    def __init__(self, scope: str, rate: Rate, retry_after: int) -> None:
        self.scope = scope
        self.rate = rate
        self.retry_after = retry_after
        self.message = (
            f"too many {WHAT.get(scope, 'requests')}: at most {rate.describe()}; "
            f"try again in {retry_after} s"
        )
        super().__init__(self.message)


def rate_for(scope: str) -> Rate | None:
    configured = getattr(settings, "SL5R_RATE_LIMITS", None) or {}
    text = configured.get(scope, DEFAULT_RATES.get(scope))
    return _rate_parsed(text) if text else None


@lru_cache(maxsize=64)
def _rate_parsed(text: str) -> Rate:
    # Read on every counted request (an order): parsed once per text, not per request.
    return Rate.parse(text)


# Django's RedisCache counts with EXISTS then INCRBY: two round trips for every order, each
# a wait for the GIL again in a burst. Where the cache is Redis, the limiter talks to the
# same server with redis-py (what the cache uses underneath), keys made by the cache.
_REDIS_CACHE = "django.core.cache.backends.redis.RedisCache"
# The cache's own options, which redis-py does not take.
_CACHE_ONLY_OPTIONS = frozenset({"pool_class", "parser_class", "serializer"})


@lru_cache(maxsize=1)
def _redis_client() -> redis.Redis | None:
    """A client of the Redis server the default cache writes to, or None for another cache.
    Made once, not per order; forgotten when ``CACHES`` changes (``_caches_changed``)."""
    config: dict[str, Any] = dict(settings.CACHES.get("default", {}))
    if config.get("BACKEND") != _REDIS_CACHE:
        return None
    location = config["LOCATION"]
    # Several servers: the cache writes to the first (the others are read replicas).
    url = str((location.split(",") if isinstance(location, str) else list(location))[0]).strip()
    options = {
        name: value
        for name, value in (config.get("OPTIONS") or {}).items()
        if name not in _CACHE_ONLY_OPTIONS
    }
    return redis.Redis.from_url(url, **options)


@receiver(setting_changed)
def _caches_changed(*, setting: str, **_kwargs: Any) -> None:
    # Django's own caches are made anew on this signal (tests' override_settings).
    if setting == "CACHES":
        _redis_client.cache_clear()


# What the Redis cache raises when Redis is down or hangs (its timeouts are in settings).
CACHE_DOWN = (RedisError, OSError)


def _cache_down(scope: str, error: Exception) -> None:
    # Let the request through, uncounted: an order must not be refused, or lost, because
    # the counter is down; guessing join links for the length of a Redis outage is harmless.
    log.warning("rate limit %s not counted: the cache did not answer (%s)", scope, error)


def _window(rate: Rate, now: float) -> tuple[int, int]:
    window = int(now // rate.seconds)
    retry_after = max(1, int((window + 1) * rate.seconds - now + 0.999))
    return window, retry_after


def _cache_key(scope: str, key: str, window: int) -> str:
    return f"sl5r:rl:{scope}:{key}:{window}"


def rate_hit(scope: str, key: str) -> int:
    """Count one request for ``key`` in ``scope``; the count in this window so far."""
    rate = rate_for(scope)
    if rate is None:
        return 0
    window, _ = _window(rate, time.time())
    cache_key = _cache_key(scope, key, window)
    timeout = rate.seconds + 1
    client = _redis_client()
    try:
        if client is not None:
            # One round trip: the window made with its expiry if it is new, then counted.
            # The key and the stored integer are the cache's own, so rate_check reads them.
            stored_key = cache.make_key(cache_key)
            with client.pipeline(transaction=False) as pipe:
                pipe.set(stored_key, 0, ex=timeout, nx=True)
                pipe.incr(stored_key)
                return int(pipe.execute()[1])
        # Counting into an existing window is the common case: one incr (two round trips
        # on Redis), not add-then-incr (three). The window starts with the first add only.
        try:
            count: int = cache.incr(cache_key)
        except ValueError:  # no window yet, or it just expired
            # add() fails only if another request started the window meanwhile.
            count = 1 if cache.add(cache_key, 1, timeout=timeout) else cache.incr(cache_key)
    except CACHE_DOWN as error:
        _cache_down(scope, error)
        return 0
    return count


def rate_check(scope: str, key: str) -> None:
    """Raise ``RateLimited`` when ``key`` has used up ``scope``'s limit; counts nothing."""
    rate = rate_for(scope)
    if rate is None:
        return
    window, retry_after = _window(rate, time.time())
    try:
        count = cache.get(_cache_key(scope, key, window)) or 0
    except CACHE_DOWN as error:
        _cache_down(scope, error)
        return
    if count >= rate.limit:
        raise RateLimited(scope, rate, retry_after)


def rate_limit(scope: str, key: str) -> None:
    """Count one request for ``key`` in ``scope``; raise ``RateLimited`` past the limit."""
    rate = rate_for(scope)
    if rate is None:
        return
    if rate_hit(scope, key) > rate.limit:
        _, retry_after = _window(rate, time.time())
        raise RateLimited(scope, rate, retry_after)


def client_ip(request: HttpRequest) -> str:
    """The address the request came from, as the server saw it.

    Behind the load balancer that is the client's own address: sl5r/asgi.py takes it from
    X-Forwarded-For when, and only when, the request came from one of
    ``SL5R_TRUSTED_PROXIES``.
    """
    return str(request.META.get("REMOTE_ADDR") or "unknown")
