"""The real services the production setup uses: PostgreSQL and Redis."""

from __future__ import annotations

import psycopg
import pytest
from channels_redis.core import RedisChannelLayer


@pytest.mark.postgres
def test_postgresql_answers(postgres_url: str) -> None:
    """psycopg connects to the PostgreSQL server and runs a query."""
    with psycopg.connect(postgres_url, connect_timeout=5) as conn:
        row = conn.execute("select 1").fetchone()

    assert row == (1,)


@pytest.mark.redis
async def test_redis_channel_layer_delivers_a_message(redis_url: str) -> None:
    """A message sent through the Redis channel layer comes back on its channel."""
    layer = RedisChannelLayer(hosts=[redis_url], prefix="sl5r-test")
    try:
        channel = await layer.new_channel()
        await layer.send(channel, {"type": "test.message", "text": "hello"})

        message = await layer.receive(channel)
    finally:
        await layer.close_pools()

    assert message == {"type": "test.message", "text": "hello"}
