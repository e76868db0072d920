"""One receive per server process for the public sockets of a tournament: ``PublicHub``.

Every public socket of a tournament gets the same frame (``referees.events`` builds the
public state once per change). When each socket's consumer was a member of
``tournament.<id>.public``, the channel layer copied the message, state and all, once per
socket (channels_redis: one Redis list push of ~10 KB each, then one read and msgpack
decode each), and each consumer woke up to build the same frame again: a fan-out to 1,000
sockets cost ×2–3 a bare server writing one frame (issue 17, benchmarks/fanout.py).

So a process joins the public group once per tournament, with a channel of its own, and
the hub writes the frame, built once, to each of its local public sockets through their
ASGI ``send``. Nothing else changes for the clients: the frame is the one the consumer used
to send (``event_frame``), with the tournament's version; judges and players keep their
own consumers in ``tournament.<id>`` (R1.1: only public sockets ever get a ``state``).

Order: a socket registered by ``PublicHub.join`` receives frames only after it was marked
``ready`` (after its ``hello``); frames arriving in between are kept and sent then, so that
``hello`` is always first and an event committed meanwhile is never lost.

Slow readers: Daphne's ``send`` never waits on the network (Twisted's transport buffers),
so one slow or dead socket delays no other; a socket whose ``send`` fails is dropped from
the hub. A hub with no socket left leaves the group and is forgotten.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, cast

from asgiref.typing import ASGISendCallable, WebSocketSendEvent

from referees.events import EVENT_TYPE, PUBLIC_FIELDS, tournament_public_group

log = logging.getLogger(__name__)

Send = ASGISendCallable

# channels_redis forgets a group member after ``group_expiry`` (a day by default); the hub
# joins again well before that.
REJOIN_SECONDS = 3600.0

# After the layer failed (Redis gone), the hub waits this long before joining again; the
# sockets themselves close and reconnect (their own channel fails the same way).
RETRY_SECONDS = 1.0

# Frames written before the hub lets the loop run something else: 1,000 sockets are a few
# milliseconds of writes, but pings and handshakes should not wait for all of them.
SENDS_BETWEEN_YIELDS = 200


def _text(frame: str) -> WebSocketSendEvent:
    # The text key alone, as the ASGI spec allows (asgiref's type wants both keys; a
    # ``"bytes": None`` confuses Channels' test communicator).
    return cast(WebSocketSendEvent, {"type": "websocket.send", "text": frame})


def event_frame(event: dict[str, Any], *, public: bool) -> str:
    """The text frame of a ``tournament.event``: its public fields only, and for the
    public the ``state`` the public group's message carries, spliced in as it is."""
    out: dict[str, Any] = {
        "type": "event",
        "version": event["version"],
        "kind": event["kind"],
    }
    for name in PUBLIC_FIELDS:
        if name in event:
            out[name] = event[name]
    head = json.dumps(out, separators=(",", ":"))
    state = event.get("state_json")
    if public and isinstance(state, str) and state.startswith("{"):
        # Built once for Viewer.public() (referees.events) and already JSON.
        return f'{head[:-1]},"state":{state}}}'
    return head


class Member:
    """One local public socket: its ASGI ``send``, and the frames held until its hello."""

    __slots__ = ("held", "send")

    def __init__(self, send: Send) -> None:
        self.send = send
        self.held: list[str] | None = []  # None once ready


class PublicHub:
    """The public sockets of one tournament in this process, on one channel layer."""

    def __init__(self, layer: Any, tournament_id: int) -> None:
        self.layer = layer
        self.tournament_id = tournament_id
        self.group = tournament_public_group(tournament_id)
        self.members: dict[int, Member] = {}
        self.channel = ""
        self.joined: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.received = 0  # layer messages taken by this hub: one per event, whatever the sockets
        self.closed = False

    async def start(self) -> None:
        try:
            self.channel = await self.layer.new_channel()
            await self.layer.group_add(self.group, self.channel)
        except BaseException as error:
            if not self.joined.done():
                self.joined.set_exception(error)
                self.joined.exception()  # retrieved here; joiners re-raise it themselves
            raise
        self.joined.set_result(None)
        self.task = asyncio.ensure_future(self.run())

    async def run(self) -> None:
        rejoin_at = asyncio.get_running_loop().time() + REJOIN_SECONDS
        while not self.closed:
            try:
                timeout = max(0.0, rejoin_at - asyncio.get_running_loop().time())
                try:
                    message = await asyncio.wait_for(self.layer.receive(self.channel), timeout)
                except TimeoutError:
                    await self.layer.group_add(self.group, self.channel)
                    rejoin_at = asyncio.get_running_loop().time() + REJOIN_SECONDS
                    continue
            except asyncio.CancelledError:
                raise
            except Exception:
                log.warning("the hub of %s lost the channel layer", self.group, exc_info=True)
                await asyncio.sleep(RETRY_SECONDS)
                try:
                    await self.layer.group_add(self.group, self.channel)
                except Exception:
                    continue
                rejoin_at = asyncio.get_running_loop().time() + REJOIN_SECONDS
                continue
            self.received += 1
            if message.get("type") == EVENT_TYPE:
                await self.broadcast(event_frame(message, public=True))

    async def broadcast(self, frame: str) -> None:
        sent = 0
        for key, member in list(self.members.items()):
            if member.held is not None:
                member.held.append(frame)
                continue
            try:
                await member.send(_text(frame))
            except Exception:
                log.warning("dropped a public socket of %s", self.group, exc_info=True)
                self.members.pop(key, None)
            sent += 1
            if sent % SENDS_BETWEEN_YIELDS == 0:
                await asyncio.sleep(0)

    async def ready(self, key: int) -> None:
        """The socket said hello: send what arrived meanwhile, then every frame as it comes."""
        member = self.members.get(key)
        if member is None or member.held is None:
            return
        while member.held:
            frame = member.held.pop(0)
            await member.send(_text(frame))
        member.held = None

    async def close(self) -> None:
        self.closed = True
        if self.task is not None:
            self.task.cancel()
            # Its end (cancelled, or failed) is taken here, not raised: it is going anyway.
            await asyncio.gather(self.task, return_exceptions=True)
        if self.channel:
            try:
                await self.layer.group_discard(self.group, self.channel)
            except Exception:  # the layer expires the member
                log.warning("could not leave %s", self.group, exc_info=True)


_hubs: dict[tuple[asyncio.AbstractEventLoop, Any, int], PublicHub] = {}


def hub_of(layer: Any, tournament_id: int) -> PublicHub | None:
    """This process's hub of the tournament on ``layer``, if any socket is in it."""
    return _hubs.get((asyncio.get_running_loop(), layer, tournament_id))


async def hub_join(*, layer: Any, tournament_id: int, key: int, send: Send) -> PublicHub:
    """Register a public socket (``key``: unique while it is open); returns once the hub is
    in the group, so that any event committed after this is delivered to the socket.

    Raises what the layer raised if the hub could not join the group.
    """
    index = (asyncio.get_running_loop(), layer, tournament_id)
    hub = _hubs.get(index)
    if hub is None:
        hub = _hubs[index] = PublicHub(layer, tournament_id)
        hub.members[key] = Member(send)
        try:
            await hub.start()
        except BaseException:
            if _hubs.get(index) is hub:
                del _hubs[index]
            raise
        return hub
    hub.members[key] = Member(send)
    try:
        await asyncio.shield(hub.joined)
    except BaseException:
        hub.members.pop(key, None)
        raise
    return hub


async def hub_leave(*, hub: PublicHub, key: int) -> None:
    """Unregister a socket; the last one out takes the hub out of the group."""
    hub.members.pop(key, None)
    if hub.members:
        return
    index = (asyncio.get_running_loop(), hub.layer, hub.tournament_id)
    if _hubs.get(index) is hub:
        del _hubs[index]
    await hub.close()


def hubs_open() -> int:
    """How many hubs this process holds (all loops): 0 once every public socket left."""
    return len(_hubs)
