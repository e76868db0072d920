"""The rate limiter (referees/http/ratelimit.py) on a shared cache that may be down."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
import redis
from django.test import override_settings

from referees.http.ratelimit import RateLimited, rate_check, rate_hit, rate_limit

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
    with caplog.at_level(logging.WARNING, logger="referees.http.ratelimit"):
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


PREFIX = "sl5r-test-rl"


def _redis_cache_config(url: str) -> dict[str, Any]:
    return {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": url,
            "KEY_PREFIX": PREFIX,
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }


@pytest.fixture
def redis_cache(redis_url: str) -> Iterator[redis.Redis]:
    """The limiter counting in a real Redis cache (the tests' database; its keys, under the
    cache's prefix, deleted before and after: other tests share the database)."""
    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(f"{PREFIX}:*"):
        client.delete(key)
    with override_settings(CACHES=_redis_cache_config(redis_url)):
        yield client
    for key in client.scan_iter(f"{PREFIX}:*"):
        client.delete(key)
    client.close()


@pytest.fixture
def sends(monkeypatch: pytest.MonkeyPatch) -> list[bytes]:
    """Every write redis-py makes to a Redis socket: one a round trip."""
    sent: list[bytes] = []
    send = redis.connection.AbstractConnection.send_packed_command

    def counted(
        self: redis.connection.AbstractConnection, command: Any, *args: Any, **kwargs: Any
    ) -> None:
        sent.append(command)
        send(self, command, *args, **kwargs)

    monkeypatch.setattr(redis.connection.AbstractConnection, "send_packed_command", counted)
    return sent


@override_settings(SL5R_RATE_LIMITS={"orders": "3/min"})
def test_on_redis_an_order_is_counted_in_one_round_trip_and_refused_past_the_limit(
    redis_cache: redis.Redis, sends: list[bytes], rate_window_still: None
) -> None:
    """Django's RedisCache counts with two round trips (EXISTS, then INCRBY); the limiter
    sends its two commands (SET NX EX, INCR) together, the window expiring with the rate."""
    rate_hit("orders", "player:4")  # the connection opened (its handshake is not counted)
    counts = []
    for _ in range(3):
        before = len(sends)
        counts.append(rate_hit("orders", "player:5"))
        assert len(sends) - before == 1, "one write to Redis a count"

    assert counts == [1, 2, 3]
    (key,) = redis_cache.keys(f"{PREFIX}:*player:5*")
    assert 0 < redis_cache.ttl(key) <= 61
    with pytest.raises(RateLimited, match="at most 3 a minute"):
        rate_limit("orders", "player:5")
    with pytest.raises(RateLimited):
        rate_check("orders", "player:5")  # the cache reads the limiter's count


@override_settings(SL5R_RATE_LIMITS={"orders": "2/min"})
def test_on_redis_each_player_has_his_own_window(
    redis_cache: redis.Redis, rate_window_still: None
) -> None:
    rate_limit("orders", "player:1")
    rate_limit("orders", "player:1")
    rate_limit("orders", "player:2")

    with pytest.raises(RateLimited):
        rate_limit("orders", "player:1")
    rate_limit("orders", "player:2")
