"""The live-update websocket of a tournament: ``ws/tournaments/<id>/``.

A thin transport for the events of ``referees.live.events``: the tournament's version, the kind
of change, a turn number or phase, and the viewer's own state at that version (``state``,
built by the process's hub for what this socket was admitted as: ``tournament_state`` decides
what it may see, R1.1), or ``since``, the version this viewer's view is unchanged from. A
page that cannot use a frame as it is (it missed a version) fetches
``GET /api/tournaments/<id>/state``. The public's sockets share the public hub
(``tournament.<id>.public``), judges' and players' the viewers' hub (``tournament.<id>``);
no socket is itself a member of a group (``referees.live.hubs``). A pong carries the version
the process last read (at most a second old), so that a page whose socket stayed open while
an event was lost notices it at its next ping.

Who is watching is decided as the API does (``referees.http.auth``): a ``?token=`` query
parameter first (a player's join token or a judge's API key; the browser's websocket API
cannot send an ``Authorization`` header), else the session (a judge signed in, or the
player the device joined as), else the public. The identity decides whether the connection
is allowed (a player of another tournament is turned away) and whose view it is sent.

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
import contextlib
import json
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from http.cookies import SimpleCookie
from typing import Any, TypeVar
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.http import HttpRequest
from django.utils import translation

from referees.kernel.access import (
    judge_key_user,
    player_from_session,
    token_is_judge_key,
    tournament_get,
    user_is_active,
    user_judges,
)
from referees.kernel.core import TournamentError
from referees.live.events import layer_gate
from referees.live.hubs import PublicHub, Sight, hub_join, hub_leave
from referees.models import Tournament
from referees.reading.state import View
from referees.services import player_from_token

log = logging.getLogger(__name__)
T = TypeVar("T")

MAX_MESSAGE_BYTES = 1024

CLOSE_UNSUPPORTED_DATA = 4415
CLOSE_TOO_BIG = 4413
CLOSE_BAD_MESSAGE = 4400
CLOSE_BAD_TOKEN = 4401
CLOSE_OTHER_TOURNAMENT = 4403
CLOSE_NO_TOURNAMENT = 4404


def in_thread(function: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """``function`` run in the server's thread pool, with Channels' care of database
    connections. Not Channels' default, one thread for every socket of the process: a
    league's thousands of pages connecting at once queued there one by one."""
    return database_sync_to_async(function, thread_sensitive=False)


@dataclass(frozen=True)
class Admission:
    """The outcome of a connection attempt: a viewer kind and the version, or a close code;
    for a judge his account, for a player who he is (his view is built for him alone)."""

    viewer: str = ""
    version: int = 0
    refused: int | None = None
    who: int | None = None
    nonce: str = ""
    role: str = ""
    clan: str = ""
    army: str | None = None


def _query_token(scope: Mapping[str, Any]) -> str | None:
    query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
    values = query.get("token")
    return values[0].strip() if values else None


def admit(scope: Mapping[str, Any], tournament_id: int) -> Admission:
    """Who is connecting to ``tournament_id`` (judge, player, public), or why not.

    The same order as ``referees.http.auth`` and ``api._viewer``: a token that is present must
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
        return Admission(viewer="judge", version=version, who=user.pk)
    if player is not None:
        if player.tournament_id != tournament.pk:
            return Admission(refused=CLOSE_OTHER_TOURNAMENT)
        return Admission(
            viewer="player",
            version=version,
            who=player.pk,
            nonce=player.token_nonce,
            role=player.role,
            clan=player.clan,
            army=player.army.code if player.army is not None else None,
        )
    return Admission(viewer="public", version=version)


def scope_language(scope: Mapping[str, Any]) -> str:
    """The language the socket's page is in, as Django's LocaleMiddleware would choose it
    for a request with the same headers (the language cookie, then Accept-Language): the
    views the socket is sent are written in it."""
    request = HttpRequest()
    headers = dict(scope.get("headers") or ())
    request.META["HTTP_ACCEPT_LANGUAGE"] = headers.get(b"accept-language", b"").decode("latin-1")
    cookies = SimpleCookie()
    with contextlib.suppress(Exception):  # a malformed cookie header: no cookies
        cookies.load(headers.get(b"cookie", b"").decode("latin-1"))
    request.COOKIES = {name: morsel.value for name, morsel in cookies.items()}
    return translation.get_language_from_request(request)


# How long a process answers pings with the version it last read, per tournament (s): a
# missed event is noticed within a ping and this; at most one query a second per tournament.
VERSION_FRESH_SECONDS = 1.0
_versions: dict[int, tuple[float, int]] = {}
_version_reads: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[int, asyncio.Lock]] = (
    weakref.WeakKeyDictionary()
)


async def version_recent(tournament_id: int) -> int:
    """The tournament's version, read at most ``VERSION_FRESH_SECONDS`` ago (a pong says it,
    so that a page that missed an event fetches the state: issue 33)."""
    loop = asyncio.get_running_loop()
    kept = _versions.get(tournament_id)
    if kept is not None and loop.time() - kept[0] < VERSION_FRESH_SECONDS:
        return kept[1]
    locks = _version_reads.setdefault(loop, {})
    async with locks.setdefault(tournament_id, asyncio.Lock()):
        kept = _versions.get(tournament_id)
        if kept is not None and loop.time() - kept[0] < VERSION_FRESH_SECONDS:
            return kept[1]
        version = await in_thread(campaign_version)(tournament_id)
        _versions[tournament_id] = (loop.time(), version)
        return version


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
    viewer: str = ""
    tournament_id: int = 0

    async def connect(self) -> None:
        tournament_id: int = self.scope["url_route"]["kwargs"]["tournament_id"]
        # Accepted at once: Daphne drops a handshake not accepted within 5 s, and when
        # thousands of pages connect at once (a league's, benchmarks/league.py) the reads
        # below queue; a dropped handshake only brought the page back to queue again.
        await self.accept()
        # Who is watching decides the hub, so admit first; the version for ``hello`` is
        # read again after joining: an event committed in between is then either counted
        # in ``hello`` or delivered after it, never lost.
        admission = await in_thread(admit)(self.scope, tournament_id)
        if admission.refused is not None:
            await self.close(code=admission.refused)
            return
        sight = None
        if admission.viewer != "public":
            view = View(
                kind=admission.viewer,
                who=admission.who,
                language=scope_language(self.scope),
                nonce=admission.nonce,
            )
            sight = Sight(view=view, role=admission.role, clan=admission.clan, army=admission.army)
        # The hub (public, or the judges' and players' one) sends this socket its events
        # once it is ready (after hello).
        async with layer_gate():
            self.hub = await hub_join(
                layer=self.channel_layer,
                tournament_id=tournament_id,
                key=id(self),
                send=self.base_send,
                sight=sight,
                version_read=version_recent,
            )
        self.group = self.hub.group
        self.tournament_id = tournament_id
        self.viewer = admission.viewer
        try:
            version = await in_thread(campaign_version)(tournament_id)
            await self.send_json({"type": "hello", "version": version})
            if self.hub is not None:
                await self.hub.ready(id(self), version)
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
                async with layer_gate():
                    await hub_leave(hub=hub, key=id(self))
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
        try:
            version: int | None = await version_recent(self.tournament_id)
        except Exception:  # the database is away: the pong still says the socket is alive
            version = None
        await self.send_json(self.pong(version))

    def pong(self, version: int | None) -> dict[str, Any]:
        """The answer to a ping: this socket's pong from its hub (``PublicHub.pong``)."""
        if self.hub is None:
            return {"type": "pong", "version": version}
        return self.hub.pong(id(self), version)
