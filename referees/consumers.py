"""The live-update websocket of a tournament: ``ws/tournaments/<id>/``.

A thin transport for the notifications of ``referees.events``: it says *that* something
changed (the tournament's version, the kind of change, a turn number or phase) and never
*what*; the page then fetches ``GET /api/tournaments/<id>/state``, where
``tournament_state`` decides what the viewer may see (R1.1). Judges and players join the
group ``tournament.<id>`` and nothing else. The public joins ``tournament.<id>.public``
instead, whose messages also carry ``state``, the public state built once per change, so
that hundreds of spectators need not all fetch the same thing; only a public socket ever
forwards a ``state``.

Who is watching is decided as the API does (``referees.auth``): a ``?token=`` query
parameter first (a player's join token or a judge's API key; the browser's websocket API
cannot send an ``Authorization`` header), else the session (a judge signed in, or the
player the device joined as), else the public. The identity only decides whether the
connection is allowed: a player of another tournament is turned away.

Refusals are sent as close codes after the handshake, so that a browser can read them (a
refused handshake only shows as 1006):

====  ==========================================================================
4400  a message other than ``{"type": "ping"}`` (not JSON, not an object, another type)
4401  the ``?token=`` is not valid (revoked or replaced join link, unknown API key)
4403  the caller is a player of another tournament
4404  there is no such tournament
4413  a message larger than 1 KiB
4415  a binary frame
====  ==========================================================================

(Not the protocol's own 1009 and 1003: Daphne's websocket library lets an application
close only with 1000 or 3000-4999, and turns any other code into an error and a 1011.)
A message over 1 MiB never gets here: Daphne drops the connection.

A connection from another site never gets here: ``sl5r.asgi`` first checks that the
Origin header is the site's own scheme, host and port (``sl5r/serving/websocket_origin.py``) and
refuses the handshake otherwise.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer

from referees.access import (
    judge_key_user,
    player_from_session,
    token_is_judge_key,
    tournament_get,
    user_is_active,
    user_judges,
)
from referees.events import tournament_group
from referees.fanout import PublicHub, event_frame, hub_join, hub_leave
from referees.kernel import TournamentError
from referees.models import Tournament
from referees.services import player_from_token

log = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 1024

CLOSE_UNSUPPORTED_DATA = 4415
CLOSE_TOO_BIG = 4413
CLOSE_BAD_MESSAGE = 4400
CLOSE_BAD_TOKEN = 4401
CLOSE_OTHER_TOURNAMENT = 4403
CLOSE_NO_TOURNAMENT = 4404

# channels_redis forgets a group member after ``group_expiry`` (a day by default); a
# connection that pings rejoins its group long before that.
REJOIN_SECONDS = 3600.0

# Group changes in flight at once, per event loop (per server process). redis-py's pool
# refuses a command beyond its ``max_connections`` (100 by default) with "Too many
# connections" instead of waiting, and a venue's Wi-Fi coming back makes hundreds of
# sockets connect or close in the same instant (benchmarks/fanout.py did exactly that).
GROUP_CHANGES_AT_ONCE = 32
_group_gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = (
    weakref.WeakKeyDictionary()
)


def _group_gate() -> asyncio.Semaphore:
    loop = asyncio.get_running_loop()
    gate = _group_gates.get(loop)
    if gate is None:
        gate = _group_gates[loop] = asyncio.Semaphore(GROUP_CHANGES_AT_ONCE)
    return gate


@dataclass(frozen=True)
class Admission:
    """The outcome of a connection attempt: a viewer kind and the version, or a close code."""

    viewer: str = ""
    version: int = 0
    refused: int | None = None


def _query_token(scope: Mapping[str, Any]) -> str | None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = query.get("token")
    return values[0].strip() if values else None


def admit(scope: Mapping[str, Any], tournament_id: int) -> Admission:
    """Who is connecting to ``tournament_id`` (judge, player, public), or why not.

    The same order as ``referees.auth`` and ``api._viewer``: a token that is present must
    be valid; a judge of this tournament is a judge; a player counts only in his own
    tournament; anyone else is the public.
    """
    try:
        tournament = tournament_get(tournament_id=tournament_id)
    except TournamentError:
        return Admission(refused=CLOSE_NO_TOURNAMENT)
    version = tournament.campaign.version
    user = None
    player = None

    token = _query_token(scope)
    if token:
        if token_is_judge_key(token):
            user = judge_key_user(token)
        else:
            player = player_from_token(token)
        if user is None and player is None:
            return Admission(refused=CLOSE_BAD_TOKEN)
    else:
        signed_in = scope.get("user")
        user = signed_in if user_is_active(signed_in) else None
        session = scope.get("session")
        player = player_from_session(session) if session is not None else None

    if user is not None and user_judges(user, tournament):
        return Admission(viewer="judge", version=version)
    if player is not None:
        if player.tournament_id != tournament.pk:
            return Admission(refused=CLOSE_OTHER_TOURNAMENT)
        return Admission(viewer="player", version=version)
    return Admission(viewer="public", version=version)


def campaign_version(tournament_id: int) -> int:
    """The tournament's current version (0 if it went away meanwhile)."""
    version = (
        Tournament.objects.filter(pk=tournament_id)
        .values_list("campaign__version", flat=True)
        .first()
    )
    return int(version or 0)


class TournamentConsumer(AsyncJsonWebsocketConsumer):
    """Forwards the tournament's events; answers pings; everything else closes."""

    group: str | None = None
    hub: PublicHub | None = None
    joined_at: float = 0.0
    viewer: str = ""

    async def connect(self) -> None:
        tournament_id: int = self.scope["url_route"]["kwargs"]["tournament_id"]
        # Who is watching decides the group, so admit first; the version for ``hello`` is
        # read again after joining: an event committed in between is then either counted
        # in ``hello`` or delivered after it, never lost.
        admission = await database_sync_to_async(admit)(self.scope, tournament_id)
        await self.accept()
        if admission.refused is not None:
            await self.close(code=admission.refused)
            return
        if admission.viewer == "public":
            # The hub sends this socket its events once it is ready (after hello).
            self.hub = await hub_join(
                layer=self.channel_layer,
                tournament_id=tournament_id,
                key=id(self),
                send=self.base_send,
            )
            self.group = self.hub.group
        else:
            group = tournament_group(tournament_id)
            async with _group_gate():
                await self.channel_layer.group_add(group, self.channel_name)
            self.group = group
        self.joined_at = time.monotonic()
        self.viewer = admission.viewer
        try:
            version = await database_sync_to_async(campaign_version)(tournament_id)
            await self.send_json({"type": "hello", "version": version})
            if self.hub is not None:
                await self.hub.ready(id(self))
        except BaseException:
            # Channels calls no disconnect after a failed connect: leave the hub or group
            # here, or it would keep writing to a dead socket.
            await self.leave()
            raise

    async def leave(self) -> None:
        if self.group is None:
            return
        group, self.group = self.group, None
        hub, self.hub = self.hub, None
        try:
            if hub is not None:
                await hub_leave(hub=hub, key=id(self))
                return
            async with _group_gate():
                await self.channel_layer.group_discard(group, self.channel_name)
        except Exception:  # the socket is going anyway; the layer expires the member
            log.warning("could not leave %s", group, exc_info=True)

    async def refuse(self, code: int) -> None:
        await self.leave()
        await self.close(code=code)

    async def disconnect(self, code: int) -> None:
        await self.leave()

    async def receive(
        self, text_data: str | None = None, bytes_data: bytes | None = None, **kwargs: Any
    ) -> None:
        if self.group is None:
            return  # closing already
        if text_data is None:
            await self.refuse(CLOSE_UNSUPPORTED_DATA)
            return
        if len(text_data.encode("utf-8")) > MAX_MESSAGE_BYTES:
            await self.refuse(CLOSE_TOO_BIG)
            return
        try:
            content = json.loads(text_data)
        except ValueError:
            await self.refuse(CLOSE_BAD_MESSAGE)
            return
        if not isinstance(content, dict) or content.get("type") != "ping":
            await self.refuse(CLOSE_BAD_MESSAGE)
            return
        if self.hub is None and time.monotonic() - self.joined_at > REJOIN_SECONDS:
            async with _group_gate():
                await self.channel_layer.group_add(self.group, self.channel_name)
            self.joined_at = time.monotonic()
        await self.send_json({"type": "pong"})

    async def tournament_event(self, event: dict[str, Any]) -> None:
        """A ``tournament.event`` from ``tournament.<id>``: forward its public fields, nothing
        else, and never a state (public sockets get theirs from the hub, not here)."""
        if self.group is None or not self.viewer:
            return  # refused or closing: the group message raced the close
        await self.send(text_data=event_frame(event, public=False))
