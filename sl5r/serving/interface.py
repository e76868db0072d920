"""What the apps may use of the serving plumbing, and all they may import of ``sl5r.serving``.

An app's code runs inside a request the plumbing serves, but must not depend on how it is
served (a thread pool, Django's ASGI handler, a test client, a Celery worker): it asks here
when its request arrived, for a loop to hand a broadcast to, how many order requests still
wait, and whether an error means the database is down. The arrows then point one way, from
the apps down to this module (tests/test_architecture.py).
"""

from __future__ import annotations

import asyncio
from datetime import datetime

from sl5r.serving import waiting_orders
from sl5r.serving.arrival import arrival_stamps_install
from sl5r.serving.database_outage import DATABASE_OUTAGE_ERRORS, database_error_summary
from sl5r.serving.heap import heap_freeze
from sl5r.serving.threaded_http import request_received_at, server_loop

__all__ = [
    "DATABASE_OUTAGE_ERRORS",
    "arrival_stamps_install",
    "database_error_summary",
    "handoff_loop",
    "heap_freeze",
    "request_received_at",
    "waiting_order_requests",
]


def handoff_loop() -> asyncio.AbstractEventLoop | None:
    """A running loop to hand work to without waiting for it, if the server that runs this
    thread has one; None elsewhere (the clock, Celery, commands, tests), where the caller
    does the work itself."""
    return server_loop()


def waiting_order_requests(*, tournament_id: int, before: datetime) -> int:
    """Order requests for ``tournament_id`` that arrived before ``before`` and are not
    answered yet, in this process or any other that publishes to Redis."""
    return waiting_orders.WAITING.count(tournament_id, before)
