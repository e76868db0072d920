"""The rate limiter (referees/ratelimit.py) on a shared cache that may be down."""

from __future__ import annotations

import logging

import pytest
from django.test import override_settings

from referees.ratelimit import RateLimited, rate_check, rate_hit, rate_limit

# Nothing listens on port 1: every cache call fails at once, as with Redis stopped.
REDIS_DOWN = {
    "default": {
        "BACKEND": "django.core.cache.backends.redis.RedisCache",
        "LOCATION": "redis://127.0.0.1:1/0",
        "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
    }
}


@override_settings(CACHES=REDIS_DOWN, SL5R_RATE_LIMITS={"orders": "1/hour", "joins": "1/hour"})
def test_while_the_cache_is_down_requests_go_through_uncounted(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An order must not be refused, or lost, because the counter is down: the limiter lets
    it by and says so in the log."""
    with caplog.at_level(logging.WARNING, logger="referees.ratelimit"):
        for _ in range(3):
            rate_limit("orders", "player:1")
        rate_check("joins", "ip:10.0.0.1")
        counted = rate_hit("joins", "ip:10.0.0.1")

    assert counted == 0
    assert "rate limit orders not counted: the cache did not answer" in caplog.text


@override_settings(SL5R_RATE_LIMITS={"orders": "2/hour"})
def test_past_the_limit_a_request_is_refused_with_the_wait() -> None:
    rate_limit("orders", "player:7")
    rate_limit("orders", "player:7")

    with pytest.raises(RateLimited, match="at most 2 an hour") as refused:
        rate_limit("orders", "player:7")

    assert refused.value.retry_after > 0
