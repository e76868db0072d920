"""Order requests that reached the server but are not answered yet, by tournament.

``sl5r.serving.threaded_http`` stamps each request's arrival before it waits for a thread (R4
judges an order late by that stamp). A request that could be an order for a tournament
(``order_tournament``: a write to one of the order endpoints) is registered here at that
moment and taken off once it is answered. The clocks (``referees.clock_thread.settle_hold``) do not
resolve a turn while a request for its tournament that arrived before its deadline is still
waiting, up to ``SL5R_ORDER_SETTLE_MAX_SECONDS`` after it.

The in-process clock sees this process's registry. With ``REDIS_URL`` set, each serving
process also publishes its waiting stamps to Redis, so that a Celery worker (or another
process's clock) sees them: per tournament a sorted set per process,
``sl5r:waiting-orders:<tournament>:<process>`` (member: a request number, score: its arrival
as a Unix time), with a TTL of ``PUBLISH_TTL`` seconds refreshed every ``HEARTBEAT`` seconds
while it is not empty, and an index set ``sl5r:waiting-orders:<tournament>`` of the
processes. A process that dies mid-request stops refreshing: its entries expire, and the
clock is held for at most that long by them.
"""

from __future__ import annotations

import itertools
import logging
import os
import re
import socket
import threading
import time
import uuid
from datetime import datetime
from typing import Any

log = logging.getLogger(__name__)

KEY_PREFIX = "sl5r:waiting-orders"
PUBLISH_TTL = 5.0  # s: a dead process's entries are gone after this
HEARTBEAT = 1.0  # s: a process refreshes its non-empty keys this often
MIN_PUBLISH_GAP = 0.02  # s: changes within this are published together
REDIS_RETRY_AFTER = 5.0  # s: after a failed read, Redis is not asked again for this long

# The order endpoints (docs/api.md): a General's order and withdrawal, a Daimyo's swap
# choice, a judge's paper order. Only writes; the tournament id comes from the path.
_ORDER_PATH = re.compile(
    r"^/api/tournaments/(\d+)/(?:orders/mine|armies/[^/]+/(?:order|on-swap))/?$"
)
_WRITES = frozenset({"PUT", "POST", "DELETE", "PATCH"})


def order_tournament(method: str, path: str) -> int | None:
    """The tournament an order request is for, or None when it cannot be an order."""
    if method.upper() not in _WRITES:
        return None
    match = _ORDER_PATH.match(path)
    return int(match.group(1)) if match else None


def index_key(tournament_id: int) -> str:
    return f"{KEY_PREFIX}:{tournament_id}"


def process_key(tournament_id: int, process: str) -> str:
    return f"{KEY_PREFIX}:{tournament_id}:{process}"


class WaitingOrders:
    """This process's waiting order requests; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._waiting: dict[int, dict[int, float]] = {}
        self._numbers = itertools.count(1)
        self.process = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        self._changed = threading.Event()
        self._publisher: threading.Thread | None = None
        self._publisher_pid = 0
        self._redis: Any = None
        self._redis_failed_at = 0.0

    def add(self, tournament_id: int, received_at: datetime) -> tuple[int, int]:
        """Register a request; returns the token for ``done``."""
        number = next(self._numbers)
        with self._lock:
            self._waiting.setdefault(tournament_id, {})[number] = received_at.timestamp()
        self._changed.set()
        self._publish_in_background()
        return tournament_id, number

    def done(self, token: tuple[int, int]) -> None:
        tournament_id, number = token
        with self._lock:
            entries = self._waiting.get(tournament_id)
            if entries is not None:
                entries.pop(number, None)
                if not entries:
                    del self._waiting[tournament_id]
        self._changed.set()

    def local_count(self, tournament_id: int, before: datetime) -> int:
        """This process's requests for ``tournament_id`` that arrived before ``before``."""
        limit = before.timestamp()
        with self._lock:
            return sum(1 for at in self._waiting.get(tournament_id, {}).values() if at < limit)

    def snapshot(self) -> dict[int, dict[int, float]]:
        with self._lock:
            return {t: dict(entries) for t, entries in self._waiting.items()}

    def count(self, tournament_id: int, before: datetime) -> int:
        """Requests for ``tournament_id`` that arrived before ``before``, waiting here or in
        any other live process that publishes to Redis."""
        return self.local_count(tournament_id, before) + self.remote_count(tournament_id, before)

    # --- Redis ----------------------------------------------------------------------------

    def _client(self) -> Any:
        from django.conf import settings

        url = getattr(settings, "REDIS_URL", "")
        if not url:
            return None
        if self._redis is None:
            import redis

            self._redis = redis.Redis.from_url(url, socket_timeout=1.0, socket_connect_timeout=1.0)
        return self._redis

    def remote_count(self, tournament_id: int, before: datetime) -> int:
        """Other processes' published requests for the tournament that arrived before
        ``before``; 0 when there is no Redis or it does not answer (logged)."""
        if time.monotonic() - self._redis_failed_at < REDIS_RETRY_AFTER and self._redis_failed_at:
            return 0
        try:
            client = self._client()
            if client is None:
                return 0
            processes = [
                p.decode() if isinstance(p, bytes) else str(p)
                for p in client.smembers(index_key(tournament_id))
            ]
            others = [p for p in processes if p != self.process]
            if not others:
                return 0
            pipe = client.pipeline(transaction=False)
            for process in others:
                pipe.zcount(process_key(tournament_id, process), "-inf", f"({before.timestamp()}")
            return int(sum(int(n) for n in pipe.execute()))
        except Exception as error:
            self._redis_failed_at = time.monotonic()
            log.warning(
                "cannot read the waiting orders from Redis (%s); not waiting for them", error
            )
            return 0

    def publish(self, published: set[int]) -> set[int]:
        """Write this process's waiting requests to Redis; returns the tournaments written.

        ``published`` are those written last time: an emptied one's key is deleted.
        """
        client = self._client()
        if client is None:
            return set()
        snapshot = self.snapshot()
        ttl_ms = int(PUBLISH_TTL * 1000)
        pipe = client.pipeline(transaction=True)
        for tournament_id in published - set(snapshot):
            pipe.delete(process_key(tournament_id, self.process))
        for tournament_id, entries in snapshot.items():
            key = process_key(tournament_id, self.process)
            pipe.delete(key)
            pipe.zadd(key, {str(number): at for number, at in entries.items()})
            pipe.pexpire(key, ttl_ms)
            pipe.sadd(index_key(tournament_id), self.process)
            pipe.pexpire(index_key(tournament_id), ttl_ms)
        pipe.execute()
        return set(snapshot)

    def _publish_in_background(self) -> None:
        from django.conf import settings

        if not getattr(settings, "REDIS_URL", ""):
            return
        if self._publisher is not None and self._publisher_pid == os.getpid():
            return
        with self._lock:
            if self._publisher is not None and self._publisher_pid == os.getpid():
                return
            self._publisher_pid = os.getpid()
            self._publisher = threading.Thread(
                target=self._publish_loop, name="waiting-orders", daemon=True
            )
            self._publisher.start()

    def _publish_loop(self) -> None:
        published: set[int] = set()
        while True:
            self._changed.wait(HEARTBEAT)
            self._changed.clear()
            try:
                published = self.publish(published)
            except Exception as error:
                log.warning("cannot publish the waiting orders to Redis (%s)", error)
                self._changed.set()
                time.sleep(0.5)
                continue
            time.sleep(MIN_PUBLISH_GAP)


WAITING = WaitingOrders()
