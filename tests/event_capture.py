"""What one tournament operation does that others can see: versions, live events, queries.

``effects_of(...)`` runs one operation the way a request or the clock would have it
committed, and measures only its public effects, not which function did what inside: how
far ``Campaign.version`` grew (read from the database), which live events reached the
tournament's two channel-layer groups after commit (``tournament.<id>`` for judges and
players, ``tournament.<id>.public`` for the public sockets, referees/live/events.py), and which
queries the operation ran. Tests built on it keep holding however the work is arranged
inside the services.

The events are those a consumer would receive: ``TournamentListener`` subscribes one channel
to each group on the in-memory channel layer (``IN_MEMORY_LAYERS``) and ``drain()`` takes
what arrived once both channels stay quiet, so a sender that delivers from a background
loop is counted too.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import connection
from django.test.utils import CaptureQueriesContext

from referees.live.events import tournament_group, tournament_public_group
from referees.models import Tournament

IN_MEMORY_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
"""``CHANNEL_LAYERS`` for these tests: one process, nothing to reach (no Redis needed)."""

# How long both channels must stay empty before everything sent is taken to have arrived,
# and how long a drain may go on at most. Generous on purpose: a message arriving later than
# this would be missed by the count, whereas waiting costs only time. Not a timing assertion.
QUIET_SECONDS = 0.5
DEADLINE_SECONDS = 10.0


@dataclass(frozen=True)
class Delivered:
    """The messages each group delivered, oldest first."""

    main: list[dict[str, Any]]
    public: list[dict[str, Any]]

    def summary(self) -> str:
        def pairs(messages: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
            return [(m.get("kind"), m.get("version")) for m in messages]

        return f"main group (kind, version): {pairs(self.main)}; public: {pairs(self.public)}"


class TournamentListener:
    """A watcher of one tournament in both of its groups."""

    def __init__(self, tournament_id: int) -> None:
        layer = get_channel_layer()
        if layer is None:
            raise RuntimeError("no channel layer is configured")
        self.layer = layer
        self.main = async_to_sync(layer.new_channel)()
        self.public = async_to_sync(layer.new_channel)()
        async_to_sync(layer.group_add)(tournament_group(tournament_id), self.main)
        async_to_sync(layer.group_add)(tournament_public_group(tournament_id), self.public)

    def drain(self) -> Delivered:
        """Everything delivered so far, once both channels have been quiet for a while."""
        return async_to_sync(self._drain)()

    async def _drain(self) -> Delivered:
        main: list[dict[str, Any]] = []
        public: list[dict[str, Any]] = []
        give_up = time.monotonic() + DEADLINE_SECONDS
        while time.monotonic() < give_up:
            got_main = await self._take(self.main, main)
            got_public = await self._take(self.public, public)
            if not (got_main or got_public):
                break
        return Delivered(main=main, public=public)

    async def _take(self, channel: str, into: list[dict[str, Any]]) -> bool:
        try:
            message = await asyncio.wait_for(self.layer.receive(channel), QUIET_SECONDS)
        # Not the builtin TimeoutError: they are one class only from Python 3.11 on.
        except asyncio.TimeoutError:
            return False
        into.append(message)
        return True


@dataclass(frozen=True)
class Effects:
    """What one operation did, as the database and the watchers saw it."""

    version_before: int
    version_after: int
    delivered: Delivered
    queries: list[dict[str, Any]]

    @property
    def version_bumps(self) -> int:
        return self.version_after - self.version_before

    def describe(self) -> str:
        """For an assertion's message: what ran and what was sent."""
        return (
            f"version {self.version_before} -> {self.version_after}; "
            f"{self.delivered.summary()}\n{len(self.queries)} queries:\n"
            f"{queries_listed(self.queries)}"
        )


OnCommitCapture = Callable[..., AbstractContextManager[Any]]
"""pytest-django's ``django_capture_on_commit_callbacks`` fixture."""


def campaign_version(tournament_id: int) -> int:
    """The tournament's version as stored now."""
    version: int = Tournament.objects.values_list("campaign__version", flat=True).get(
        pk=tournament_id
    )
    return version


def effects_of(
    *, tournament_id: int, operation: Callable[[], object], on_commit: OnCommitCapture
) -> Effects:
    """Run ``operation`` once, have its transaction's after-commit work done, and measure.

    The queries are those of the operation itself (its transaction), not of the work done
    after the commit (building the public state for the event). In a test's transaction the
    operation's atomic block is a savepoint, so ``SAVEPOINT`` and ``RELEASE SAVEPOINT`` are
    among them; a real request's ``BEGIN`` and ``COMMIT`` would not be counted.
    """
    listener = TournamentListener(tournament_id)
    before = campaign_version(tournament_id)
    # The queries are counted until the operation returns; the capture then runs the
    # after-commit callbacks, as a commit would, outside the count.
    with on_commit(execute=True), CaptureQueriesContext(connection) as queries:
        operation()
    delivered = listener.drain()
    return Effects(
        version_before=before,
        version_after=campaign_version(tournament_id),
        delivered=delivered,
        queries=list(queries.captured_queries),
    )


def queries_listed(queries: Iterable[Mapping[str, Any]]) -> str:
    """One numbered line per query, shortened, for an assertion's message."""
    lines = [f"{n:3}. {str(q['sql'])[:200]}" for n, q in enumerate(queries, start=1)]
    return "\n".join(lines) or "(no queries)"
