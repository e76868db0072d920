"""Live events, sent only after the transaction that made the change commits.

An event carries the tournament's version and what kind of change happened; each socket is
then sent its own view of the new version by its process's hub (``referees.live.hubs``), and a
client that sees a gap in versions (or reconnects) fetches the state again over HTTP. The
channel layer may drop a message; nothing depends on it.

What a socket is sent is safe by construction: ``version``, ``kind``, ``turn`` and ``phase``
(whatever else a service passes, an army code, a clan, a province, is dropped here, in the
one function that sends, rather than trusted to every caller), and a view built by
``tournament_state`` for the socket's own reader, the single place visibility is decided
(R1.1). The message to the judges' and players' group also carries ``route``: the kinds of
change and the armies, clans or players concerned, which the hubs read to tell whose view
changed and which no socket is ever sent.

The public (the big screen, anonymous pages) all see the same state, so it is built once
per change, here in the on-commit callback, and sent to the public group
``tournament.<id>.public`` as ``state_json`` (JSON text, which goes into the sockets' frame
as ``state`` without being decoded). Judges' and players' views differ per viewer; their
group ``tournament.<id>`` gets the event and its route, and each process builds the views
its own sockets need.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.serializers.json import DjangoJSONEncoder
from django.dispatch import receiver
from django.utils import timezone

from referees.kernel.core import tournament_changed
from referees.kernel.visibility import Viewer
from referees.models import Tournament
from referees.reading.state import tournament_state
from sl5r.serving.interface import handoff_loop

log = logging.getLogger(__name__)

EVENT_TYPE = "tournament.event"
"""The channel-layer message type; consumers handle it in ``tournament_event``."""

VERSION_TYPE = "tournament.version"
"""The note the public group gets of a change the public does not see (an order): its
version only, so that each process's public hub can vouch that its sockets' views stand
(``referees.live.hubs``); no socket is sent anything for it."""

PUBLIC_FIELDS = ("turn", "phase")
"""Besides ``version`` and ``kind``, the only fields an event may carry (public to all)."""


def tournament_group(tournament_id: int) -> str:
    return f"tournament.{tournament_id}"


def tournament_public_group(tournament_id: int) -> str:
    """The group of the public sockets only: its messages also carry the public state."""
    return f"tournament.{tournament_id}.public"


def public_state(tournament_id: int) -> str | None:
    """What ``GET …/state`` answers the public now, as JSON text; None if it cannot be built.

    Text rather than data: hundreds of public sockets forward it as it is, where each of
    them encoding the same nested state again (and the channel layer packing and unpacking
    it for each) cost more than everything else in a fan-out (benchmarks/fanout.py).

    Never raises: it runs after the commit, where a failure must not reach the caller; the
    public pages then fetch the state as judges and players do.
    """
    try:
        tournament = Tournament.objects.select_related("campaign").get(pk=tournament_id)
        state = tournament_state(tournament=tournament, viewer=Viewer.public(), now=timezone.now())
        return json.dumps(state, cls=DjangoJSONEncoder, separators=(",", ":"))
    except Exception:
        log.warning(
            "could not build the public state of tournament %s", tournament_id, exc_info=True
        )
        return None


def event_payload(*, version: int, kind: str, **data: Any) -> dict[str, Any]:
    """The broadcast message: version, kind, and a turn number or phase name if given.

    Anything else in ``data`` is left out on purpose (see the module docstring), and so are
    values of the wrong type, so that no object can smuggle text through ``turn``.
    """
    message: dict[str, Any] = {"type": EVENT_TYPE, "version": int(version), "kind": str(kind)}
    turn = data.get("turn")
    if isinstance(turn, int) and not isinstance(turn, bool):
        message["turn"] = turn
    phase = data.get("phase")
    if isinstance(phase, str):
        message["phase"] = str(phase)  # a TextChoices member becomes its plain value
    return message


# Changes that alter nothing the public may see: the public group is told only the version
# (``VERSION_TYPE``; no public state is built, no public socket is sent anything) — an order
# is given up to 48 times a second in a burst. A Daimyo's instruction is
# read by his Generals only; a call for a judge and a check-in by the judges (R1.1: the big
# screen shows nothing of them).
NOT_PUBLIC_KINDS = frozenset({"order", "instruction", "call", "checkin"})


def event_route(kinds: Sequence[str], data: Mapping[str, Any]) -> dict[str, Any]:
    """What the judges' and players' hubs (``referees.live.hubs.ViewerHub``) need to tell whose
    view a change touched: every kind of change in it, and the armies, clans or players it
    concerns (an order's, an instruction's clan, a call's caller). Read by the server only:
    no frame a socket receives carries it."""
    route: dict[str, Any] = {"kinds": [str(k) for k in kinds]}
    for name in ("armies", "clans", "players"):
        value = data.get(name)
        if isinstance(value, list):
            route[name] = list(value)
    return route


@receiver(tournament_changed, dispatch_uid="referees.live.events.event_send")
def event_send(
    *,
    tournament_id: int,
    version: int,
    kind: str,
    data: dict[str, Any],
    kinds: Sequence[str] = (),
    **_: Any,
) -> None:
    """Announce a committed change to everyone watching the tournament.

    The kernel sends ``tournament_changed`` once per unit of work, after its commit. Only
    ``turn`` and ``phase`` of ``data`` are broadcast: judges and players get just that (and
    their own views, which their process's hub builds, issue 33); the public group gets the
    same plus the public state, built here once for all its sockets.
    """
    message = event_payload(version=version, kind=kind, **data)
    layer = get_channel_layer()
    if layer is None:
        return
    _group_send(
        layer,
        tournament_group(tournament_id),
        {**message, "route": event_route(kinds or (kind,), data)},
    )
    if kind in NOT_PUBLIC_KINDS:
        note = {"type": VERSION_TYPE, "version": message["version"]}
        _group_send(layer, tournament_public_group(tournament_id), note)
        return
    public = dict(message)
    state = public_state(tournament_id)
    if state is not None:
        public["state_json"] = state
    _group_send(layer, tournament_public_group(tournament_id), public)


# Channel-layer commands in flight at once, per event loop (per server process). redis-py's
# pool refuses a command beyond its ``max_connections`` (100 by default) with "Too many
# connections" instead of waiting: a venue's Wi-Fi coming back makes hundreds of sockets
# join or leave in the same instant (benchmarks/fanout.py), and a league's deadline hands
# the loop hundreds of events to send at once (benchmarks/league.py: 229 refused sends at
# 100 tournaments, each a lost event). Every send, join and leave of the process waits here.
LAYER_COMMANDS_AT_ONCE = 32
_layer_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def layer_gate() -> asyncio.Semaphore:
    """This event loop's gate for channel-layer commands (see ``LAYER_COMMANDS_AT_ONCE``)."""
    loop = asyncio.get_running_loop()
    gate = _layer_gates.get(loop)
    if gate is None:
        gate = _layer_gates[loop] = asyncio.Semaphore(LAYER_COMMANDS_AT_ONCE)
    return gate


async def _gated_send(layer: Any, group: str, message: dict[str, Any]) -> None:
    async with layer_gate():
        await layer.group_send(group, message)


def _group_send(layer: Any, group: str, message: dict[str, Any]) -> None:
    """Hand the message to the channel layer; a failure is logged, never raised.

    In the web server's request threads the send is left to the server's event loop and
    not waited for: the request is answered without a round trip to Redis. Messages may
    then reach the layer out of order, which clients allow for (they keep the newest
    version). Elsewhere (the clock, Celery, commands) it is sent before returning.
    """
    loop = handoff_loop()
    if loop is not None:
        future = asyncio.run_coroutine_threadsafe(_gated_send(layer, group, message), loop)
        future.add_done_callback(lambda done: _sent(done, group, message))
        return
    try:
        async_to_sync(layer.group_send)(group, message)
    except Exception:  # the change is committed; clients resync on the next version
        _send_failed(group, message)


def _sent(done: Future[None], group: str, message: dict[str, Any]) -> None:
    if not done.cancelled() and done.exception() is not None:
        _send_failed(group, message, done.exception())


def _send_failed(group: str, message: dict[str, Any], error: BaseException | None = None) -> None:
    log.warning(
        "could not broadcast %s (version %s) to %s",
        message.get("kind"),
        message.get("version"),
        group,
        exc_info=error or True,
    )
