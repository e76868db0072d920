"""One receive per server process for the public sockets of a tournament: ``PublicHub``.

Every public socket of a tournament gets the same frame (``referees.live.events`` builds the
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

Judges and players (issue 33): the same, with ``ViewerHub`` in ``tournament.<id>``. At a
league's deadline every socket of a process was a member of its tournament's group, so
channels_redis pushed one copy of each event per socket into the one Redis list all of a
process's channels share (capacity 100): hundreds of sockets missed ``turn_resolved``, and
each page then fetched its state over HTTP. Now a process joins once per tournament; for
each event the hub works out which of its sockets' views the change touched (``Sight``,
``view_changed``), has each such view built once (``referees.reading.state.views_json``: every
view of a version is cut from one reading) and sends it in the frame (``state``). A view is
built for the socket's own viewer, by what it was admitted as (R1.1); a page that cannot take
the frame as it is (a missed version) fetches the state.

Only to the sockets whose view changed (issue 42). An order touches the judges', its
General's and his Daimyo's views only; the other sockets of the tournament get no frame at
all (they used to get ``since``, one message per socket per order: at a deadline most of a
process's sends). Each member keeps the version of the last view it was sent
(``Member.current``) and the hub the newest version it has delivered (``seen``), so that a
pong can vouch for the versions in between: nothing this socket sees changed from
``current`` to ``seen`` (``PublicHub.vouched``). The public hub hears of every version too:
the changes the public does not see reach it as a bare note (``VERSION_TYPE``), which costs
one message per process, not one per socket. A hub that missed a version (a gap) vouches for
nobody until each of its sockets was sent a view again.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any, cast

from asgiref.typing import ASGISendCallable, WebSocketSendEvent
from django.conf import settings

from referees.live.events import (
    EVENT_TYPE,
    PUBLIC_FIELDS,
    VERSION_TYPE,
    tournament_group,
    tournament_public_group,
)
from referees.reading.state import View, ViewBuilt, views_json

log = logging.getLogger(__name__)

Send = ASGISendCallable

# channels_redis forgets a group member after ``group_expiry`` (a day by default); the hub
# joins again well before that.
REJOIN_SECONDS = 3600.0

# After the layer failed (Redis gone), the hub waits this long before joining again; the
# sockets themselves close and reconnect (their own channel fails the same way).
RETRY_SECONDS = 1.0


# The hub's heartbeat (issue 42, ``settings.SL5R_LIVE_HEARTBEAT_SECONDS``): every this many
# seconds each ready socket is sent a pong of its own (the version its view stands at,
# ``since``), so that a page knows the server hears it without sending pings: a ping went
# through the whole consumer path (a receive, a dispatch, a read and a send) every 4 s per
# page, which at 3,200 idle pages kept two processes busy; a frame written to a socket is
# only the send. live.js pings only when it has heard nothing for longer (an older server,
# or a network going silent).
def heartbeat_seconds() -> float:
    return float(getattr(settings, "SL5R_LIVE_HEARTBEAT_SECONDS", 4.0))


# How long a pong vouches only for what this hub has delivered while the database says a
# newer version (s): an event on its way (a busy deadline) arrives within it, and the page
# fetches nothing; after it the event counts as lost and the pong says the newer version,
# which the page fetches once.
EVENT_LATE_SECONDS = 10.0

VersionRead = Callable[[int], Awaitable[int]]

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
        # Built once for Viewer.public() (referees.live.events) and already JSON.
        return f'{head[:-1]},"state":{state}}}'
    return head


@dataclass(frozen=True)
class Sight:
    """Whose view a judge's or player's socket gets, and what routes a change to it: the
    player's role, clan and army as of his last view."""

    view: View
    role: str = ""
    clan: str = ""
    army: str | None = None


# Changes whose effect on the judges' and players' views their route tells (see
# ``view_changed``); any other may change any view.
NARROW_KINDS = frozenset({"order", "instruction", "call", "checkin"})


def view_changed(sight: Sight, route: Mapping[str, Any]) -> bool:
    """Whether a change (its ``route``: the kinds of change, and the armies, clans and
    players it concerns) may have changed ``sight``'s view. In doubt, yes.

    An order changes the orders a view lists: every one for a judge, the clan's for its
    Daimyo, his own army's for a General (R1.1; a Karo sees none). An instruction changes
    its clan's players' views, a call its caller's, a check-in none but the judges'.
    """
    kinds = set(route.get("kinds") or ())
    if len(kinds) != 1 or not kinds <= NARROW_KINDS:
        return True  # several changes at once, or one that any view may show
    if sight.view.kind != "player":
        return True  # judges see every one of them
    kind = kinds.pop()
    if kind == "order":
        if sight.army is not None and sight.army in route.get("armies", ()):
            return True
        return sight.role == "daimyo" and sight.clan in route.get("clans", ())
    if kind == "instruction":
        return "clans" not in route or sight.clan in route["clans"]
    if kind == "call":
        return "players" not in route or sight.view.who in route["players"]
    return False  # a check-in


class Member:
    """One local socket: its ASGI ``send``, the frames held until its hello, (judges and
    players) whose view it gets, and the version of the last view it was sent or greeted
    with (``current``; None while unknown: before its hello, or after the hub missed a
    version)."""

    __slots__ = ("behind", "current", "held", "send", "sight")

    def __init__(self, send: Send, sight: Sight | None = None) -> None:
        self.send = send
        self.held: list[str] | None = []  # None once ready
        self.sight = sight
        self.current: int | None = None
        # The version the database said that this socket's view was not vouched up to, and
        # since when (loop time): what makes an event late (``EVENT_LATE_SECONDS``).
        self.behind: tuple[int, float] | None = None


class PublicHub:
    """The public sockets of one tournament in this process, on one channel layer."""

    @staticmethod
    def group_of(tournament_id: int) -> str:
        return tournament_public_group(tournament_id)

    def __init__(
        self, layer: Any, tournament_id: int, version_read: VersionRead | None = None
    ) -> None:
        self.layer = layer
        self.tournament_id = tournament_id
        self.version_read = version_read  # the database's version, for the heartbeat's pongs
        self.heartbeat_task: asyncio.Task[None] | None = None
        self.group = self.group_of(tournament_id)
        self.members: dict[int, Member] = {}
        self.channel = ""
        self.joined: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[None] | None = None
        self.received = 0  # layer messages taken by this hub: one per event, whatever the sockets
        self.closed = False
        # The newest version whose frames this hub has sent (0: none yet). Every version up
        # to it that reached the hub was delivered; a gap made every member's view unknown.
        self.seen = 0

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
        if self.version_read is not None:
            self.heartbeat_task = asyncio.ensure_future(self.heartbeat())

    async def heartbeat(self) -> None:
        """Every ``heartbeat_seconds()``, each ready socket its pong (see above)."""
        assert self.version_read is not None
        while not self.closed:
            await asyncio.sleep(heartbeat_seconds())
            try:
                version: int | None = await self.version_read(self.tournament_id)
            except Exception:  # the database is away: the pong still says the server is there
                version = None
            ready = [(key, m) for key, m in self.members.items() if m.held is None]
            for sent, (key, member) in enumerate(ready, start=1):
                frame = json.dumps(self.pong(key, version), separators=(",", ":"))
                await self.write(key, member, frame, sent)

    def pong(self, key: int, version: int | None) -> dict[str, Any]:
        """The pong of the socket ``key``, the database saying ``version``: the newest
        version its view is known to stand at, and ``since``: the version of the view it was
        last sent, unchanged up to there. A page holding that view moves its version on
        without fetching (an order of another clan changed nothing it sees, and it was sent
        nothing for it); a page behind it missed a frame and fetches. While the database
        says a version this hub has not delivered yet, the pong says the hub's for
        ``EVENT_LATE_SECONDS``: the event is on its way, and a pong overtaking it must not
        make every page fetch (issue 42)."""
        if version is None:
            return {"type": "pong", "version": None}
        through, current = self.vouched(key)
        member = self.members.get(key)
        late = False
        if member is not None:
            # Timed per socket and per version: caught up past the version it was behind,
            # a socket starts again with the next one.
            now = asyncio.get_running_loop().time()
            if version <= through:
                member.behind = None
            elif member.behind is None or member.behind[0] <= through:
                member.behind = (version, now)
            late = member.behind is not None and now - member.behind[1] >= EVENT_LATE_SECONDS
        if late or current is None:  # lost, or a view the hub cannot vouch for: compare
            return {"type": "pong", "version": version}
        return {"type": "pong", "version": through, "since": current}

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
                await self.on_event(message)
            elif message.get("type") == VERSION_TYPE:
                self.on_version(int(message["version"]))

    async def on_event(self, message: dict[str, Any]) -> None:
        version = int(message["version"])
        self.gap_check(version)
        await self.broadcast(event_frame(message, public=True), current=version)
        self.seen = max(self.seen, version)

    def on_version(self, version: int) -> None:
        """A change the public does not see: its sockets' views stand, at a newer version."""
        self.gap_check(version)
        self.seen = max(self.seen, version)

    def gap_check(self, first: int) -> bool:
        """Whether versions before ``first`` were missed since the last delivered one; then
        no member's view is vouched for until it is sent one again. The first message of a
        new hub is trusted as each socket's hello is: the hub joined the group before it."""
        if self.seen == 0 or first <= self.seen + 1:
            return False
        for member in self.members.values():
            member.current = None
        return True

    def vouched(self, key: int) -> tuple[int, int | None]:
        """What a pong may say for the socket ``key``: the newest version delivered (or that
        of its own view, if newer), and the version of its view, unchanged since (None: the
        hub cannot say)."""
        member = self.members.get(key)
        current = None if member is None else member.current
        return max(self.seen, current or 0), current

    async def broadcast(
        self, frame: str, keys: list[int] | None = None, *, current: int | None = None
    ) -> None:
        """``frame`` to every socket (or those of ``keys``) ready for it; held for the
        others until their hello. ``current``: the version of the view the frame brings
        (a page without its state fetches one at least as new)."""
        sent = 0
        chosen = self.members.items() if keys is None else self._chosen(keys)
        for key, member in list(chosen):
            if current is not None:
                member.current = max(member.current or 0, current)
            if member.held is not None:
                member.held.append(frame)
                continue
            sent += 1
            await self.write(key, member, frame, sent)

    async def write(self, key: int, member: Member, frame: str, sent: int) -> None:
        """``frame`` to one ready socket (the ``sent``-th of a round of writes): a socket
        whose send fails is dropped from the hub, and the loop gets a turn now and then."""
        try:
            await member.send(_text(frame))
        except Exception:
            log.warning("dropped a socket of %s", self.group, exc_info=True)
            self.members.pop(key, None)
        if sent % SENDS_BETWEEN_YIELDS == 0:
            await asyncio.sleep(0)

    def _chosen(self, keys: list[int]) -> list[tuple[int, Member]]:
        return [(key, self.members[key]) for key in keys if key in self.members]

    async def ready(self, key: int, version: int) -> None:
        """The socket said hello (at ``version``, read after the hub joined the group): send
        what arrived meanwhile, then every frame as it comes."""
        member = self.members.get(key)
        if member is None or member.held is None:
            return
        member.current = max(member.current or 0, version)
        while member.held:
            frame = member.held.pop(0)
            await member.send(_text(frame))
        member.held = None

    async def close(self) -> None:
        self.closed = True
        tasks = [task for task in (self.task, self.heartbeat_task) if task is not None]
        for task in tasks:
            task.cancel()
        # Their ends (cancelled, or failed) are taken here, not raised: they are going anyway.
        await asyncio.gather(*tasks, return_exceptions=True)
        if self.channel:
            try:
                await self.layer.group_discard(self.group, self.channel)
            except Exception:  # the layer expires the member
                log.warning("could not leave %s", self.group, exc_info=True)


class ViewerHub(PublicHub):
    """The judges' and players' sockets of one tournament in this process: each gets its
    own view, built once per version whoever else holds it (see the module docstring)."""

    @staticmethod
    def group_of(tournament_id: int) -> str:
        return tournament_group(tournament_id)

    def __init__(
        self, layer: Any, tournament_id: int, version_read: VersionRead | None = None
    ) -> None:
        super().__init__(layer, tournament_id, version_read)
        self.pending: list[dict[str, Any]] = []
        self.delivering: asyncio.Task[None] | None = None

    async def on_event(self, message: dict[str, Any]) -> None:
        """Queue the event; the views of everything queued are built and sent together.

        At a deadline a tournament's orders come faster than its views can be built (each
        new version is a new reading); the hub goes on receiving meanwhile, and the next
        delivery covers every event that arrived during the last one: one build per view
        for all of them, not one per event (issue 33)."""
        self.pending.append(message)
        if self.delivering is None or self.delivering.done():
            self.delivering = asyncio.ensure_future(self._deliver_pending())

    async def _deliver_pending(self) -> None:
        while self.pending and not self.closed:
            batch, self.pending = self.pending, []
            try:
                await self.deliver(events_merged(batch))
            except asyncio.CancelledError:
                raise
            except Exception:  # the next event, or the pages' pings, bring them up to date
                log.warning("could not deliver the events of %s", self.group, exc_info=True)

    async def close(self) -> None:
        if self.delivering is not None:
            self.delivering.cancel()
            await asyncio.gather(self.delivering, return_exceptions=True)
        await super().close()

    async def deliver(self, message: dict[str, Any]) -> None:
        route = message.get("route")
        route = route if isinstance(route, dict) else {}
        version = int(message["version"])
        if self.gap_check(int(message.get("since", version - 1)) + 1):
            route = {}  # a version was missed: any view may have changed
        changed: dict[View, list[int]] = {}
        for key, member in self.members.items():
            if member.sight is None:
                continue
            if member.current is None or view_changed(member.sight, route):
                changed.setdefault(member.sight.view, []).append(key)
        head = event_frame(message, public=False)
        built: Mapping[View, ViewBuilt | None] = {}
        if changed:
            try:
                only_orders = route.get("kinds") == ["order"]
                since = int(message.get("since", int(message["version"]) - 1))
                built = await asyncio.get_running_loop().run_in_executor(
                    None,
                    functools.partial(
                        views_json,
                        tournament_id=self.tournament_id,
                        views=list(changed),
                        orders_only_since=since if only_orders else None,
                    ),
                )
            except Exception:  # the pages fetch the state as before
                log.warning("could not build the views of %s", self.group, exc_info=True)
        for view, keys in changed.items():
            done = built.get(view)
            if done is None:
                await self.broadcast(head, keys, current=version)
                continue
            for key in keys:  # his role, clan or army may have changed with this version
                seated = self.members.get(key)
                if seated is not None and seated.sight is not None:
                    seated.sight = replace(
                        seated.sight, role=done.role, clan=done.clan, army=done.army
                    )
            await self.broadcast(_spliced(head, "state", done.json), keys, current=version)
        # The others' views stand: no frame (a pong vouches for them, ``vouched``).
        self.seen = max(self.seen, version)


def events_merged(batch: list[dict[str, Any]]) -> dict[str, Any]:
    """Events received together, as one: the newest version, its kind, the newest turn and
    phase said, and a route that changes every view any of them changed.

    ``since`` (the version the unchanged views stand from) is the first event's previous
    version only when the versions follow each other: with one missing, nobody can be told
    that nothing changed since.
    """
    events = sorted(batch, key=lambda m: int(m["version"]))
    merged = dict(events[-1])
    if len(events) == 1:
        return merged
    for name in PUBLIC_FIELDS:
        said = [m[name] for m in events if name in m]
        if said:
            merged[name] = said[-1]
    versions = [int(m["version"]) for m in events]
    routes = [m.get("route") if isinstance(m.get("route"), dict) else None for m in events]
    keys = {frozenset(r) for r in routes if r is not None}
    if (
        any(r is None for r in routes)
        or len(keys) != 1
        or versions != list(range(versions[0], versions[0] + len(versions)))
    ):
        merged["route"] = {}  # every view may have changed
        return merged
    route: dict[str, Any] = {}
    for name in next(iter(keys)):
        route[name] = list(dict.fromkeys(v for r in routes if r is not None for v in r[name]))
    merged["route"] = route
    merged["since"] = versions[0] - 1
    return merged


def _spliced(head: str, name: str, value: str) -> str:
    """``head`` (a JSON object's text) with ``name`` set to ``value`` (JSON text)."""
    return f'{head[:-1]},"{name}":{value}}}'


_hubs: dict[tuple[asyncio.AbstractEventLoop, Any, int, type[PublicHub]], PublicHub] = {}


def hub_of(layer: Any, tournament_id: int, kind: type[PublicHub] = PublicHub) -> PublicHub | None:
    """This process's hub of the tournament on ``layer`` (public, or ``ViewerHub``), if
    any socket is in it."""
    return _hubs.get((asyncio.get_running_loop(), layer, tournament_id, kind))


async def hub_join(
    *,
    layer: Any,
    tournament_id: int,
    key: int,
    send: Send,
    sight: Sight | None = None,
    version_read: VersionRead | None = None,
) -> PublicHub:
    """Register a socket (``key``: unique while it is open): a public one, or with its
    ``sight`` a judge's or player's. Returns once the hub is in the group, so that any
    event committed after this is delivered to the socket. With ``version_read`` a new hub
    sends its sockets their pongs every ``heartbeat_seconds()``.

    Raises what the layer raised if the hub could not join the group.
    """
    kind: type[PublicHub] = PublicHub if sight is None else ViewerHub
    index = (asyncio.get_running_loop(), layer, tournament_id, kind)
    hub = _hubs.get(index)
    if hub is None:
        hub = _hubs[index] = kind(layer, tournament_id, version_read)
        hub.members[key] = Member(send, sight)
        try:
            await hub.start()
        except BaseException:
            if _hubs.get(index) is hub:
                del _hubs[index]
            raise
        return hub
    hub.members[key] = Member(send, sight)
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
    index = (asyncio.get_running_loop(), hub.layer, hub.tournament_id, type(hub))
    if _hubs.get(index) is hub:
        del _hubs[index]
    await hub.close()


def hubs_open() -> int:
    """How many hubs this process holds (all loops): 0 once every public socket left."""
    return len(_hubs)
