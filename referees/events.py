"""Live notifications, sent only after the transaction that made the change commits.

An event is a notification, not the state: it carries the tournament's version and what
kind of change happened, and a client that sees a gap in versions (or reconnects) fetches
the state again over HTTP. The channel layer may drop a message; nothing depends on it.
"""

from __future__ import annotations

import logging
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

log = logging.getLogger(__name__)


def tournament_group(tournament_id: int) -> str:
    return f"tournament.{tournament_id}"


def event_send_on_commit(*, tournament_id: int, version: int, kind: str, **data: Any) -> None:
    """Announce a change to everyone watching the tournament once it is committed."""
    message = {"type": "tournament.event", "version": version, "kind": kind, **data}

    def send() -> None:
        layer = get_channel_layer()
        if layer is None:
            return
        try:
            async_to_sync(layer.group_send)(tournament_group(tournament_id), message)
        except Exception:  # the change is committed; clients resync on the next version
            log.warning(
                "could not broadcast %s for tournament %s", kind, tournament_id, exc_info=True
            )

    transaction.on_commit(send)
