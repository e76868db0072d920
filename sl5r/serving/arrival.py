"""When a request reached this machine, as close to the network as the process can tell (R4).

R4 judges an order late by when it reached the server. The event loop stamps a request when it
gets to it, and on a busy laptop (a projector, a browser, a backup to USB: load 10 on two
cores) the loop falls a quarter of a second behind: orders that reached the network interface
in time were refused as late (issue 31).

So the kernel stamps it instead. Each connection the site's server accepts asks for receive
timestamps (``SO_TIMESTAMPNS``) and is read with ``recvmsg``: every read brings the moment its
bytes reached the socket, taken by the kernel when the packet came in, whatever the process
was doing then. ``arrival_note`` keeps the latest per client address; ``request_arrival``
gives a request that moment (its last bytes, as the loop's stamp was taken once the whole body
was in), never later than now.

Behind a balancer the bytes reach the balancer first. The cluster's HAProxy stamps each
request in ``X-SL5R-Received-At`` (microseconds since the epoch; deploy/haproxy/haproxy.cfg),
replacing any such header a client sent. ``BalancerStamped`` takes that stamp only on
connections from ``SL5R_TRUSTED_PROXIES`` (the same trust as their X-Forwarded-For) and
drops the header from everyone else, so nobody can date his own order. A stamp from the
future, or older than ``STAMP_TRUSTED_SECONDS``, is not trusted.

We write this ourselves because no server we could use exposes the kernel's stamp: Daphne
(Twisted) reads with ``recv``. ``arrival_stamps_install`` makes Twisted's TCP server
connections read with ``recvmsg`` instead (``StampedServer``), in ``manage.py serve`` and
``manage.py venue`` only. Twisted is loaded in every process anyway (Daphne is the first
installed app).
"""

from __future__ import annotations

import contextlib
import errno
import ipaddress
import socket
import struct
from collections.abc import Mapping
from datetime import datetime, timezone
from typing import Any

from twisted.internet import main, tcp
from twisted.internet.interfaces import IProtocol, IReactorFDSet

# Linux's value where the socket module does not name it.
SO_TIMESTAMPNS = getattr(socket, "SO_TIMESTAMPNS", 35)
SCM_TIMESTAMPNS = SO_TIMESTAMPNS
_TIMESPEC = struct.Struct("@qq")
_ANCILLARY_SIZE = socket.CMSG_SPACE(_TIMESPEC.size) if hasattr(socket, "CMSG_SPACE") else 0
ARRIVAL_HEADER = b"x-sl5r-received-at"
BALANCER_RECEIVED_AT = "sl5r.balancer_received_at"
"""The scope key of the balancer's stamp (a Unix time): no header can set it."""
STAMP_TRUSTED_SECONDS = 30.0
"""A stamp older than this is not this request's (a connection idle since its last read)."""

_latest: dict[tuple[str, int], float] = {}
"""The last read's kernel stamp per client (host, port), kept on the server's loop thread."""


def arrival_note(client: tuple[str, int], stamp: float) -> None:
    _latest[client] = stamp


def arrival_forget(client: tuple[str, int]) -> None:
    _latest.pop(client, None)


def request_arrival(scope: Mapping[str, Any], *, now: datetime) -> datetime:
    """When the request in ``scope`` reached us: the balancer's or the kernel's stamp of its
    last bytes when there is a trustworthy one, else ``now`` (the loop's own moment)."""
    stamp = scope.get(BALANCER_RECEIVED_AT)
    if not isinstance(stamp, float):
        client = scope.get("client")
        if client and len(client) >= 2:
            stamp = _latest.get((str(client[0]), int(client[1])))
    moment = now.timestamp()
    if stamp is None or not moment - STAMP_TRUSTED_SECONDS <= stamp <= moment:
        return now
    return datetime.fromtimestamp(stamp, timezone.utc)


class BalancerStamped:
    """ASGI middleware, outermost: the balancer's stamp of an HTTP request from a trusted
    proxy into the scope (``BALANCER_RECEIVED_AT``); the header itself goes on to nobody."""

    def __init__(self, application: Any, *, trusted: list[str]) -> None:
        self.application = application
        self.everyone = "*" in trusted
        self.networks = [ipaddress.ip_network(t, strict=False) for t in trusted if t != "*"]

    def trusts(self, host: str) -> bool:
        if self.everyone:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = scope.get("headers") or []
            stamps = [value for name, value in headers if name == ARRIVAL_HEADER]
            if stamps:
                scope = dict(scope)
                scope["headers"] = [(n, v) for n, v in headers if n != ARRIVAL_HEADER]
                client = scope.get("client")
                if client and self.trusts(str(client[0])):
                    # Not a number: no stamp, and the loop's own moment stands.
                    with contextlib.suppress(ValueError):
                        scope[BALANCER_RECEIVED_AT] = int(stamps[-1]) / 1_000_000
        await self.application(scope, receive, send)


def ancillary_stamp(ancillary: list[tuple[int, int, bytes]]) -> float | None:
    """The kernel's receive time in ``recvmsg``'s ancillary data, as a Unix time."""
    for level, kind, data in ancillary:
        if level == socket.SOL_SOCKET and kind == SCM_TIMESTAMPNS and len(data) >= 16:
            seconds, nanoseconds = _TIMESPEC.unpack(data[: _TIMESPEC.size])
            return float(seconds + nanoseconds / 1e9)
    return None


def stamps_enable(sock: socket.socket) -> bool:
    """Ask the kernel to stamp what ``sock`` receives; False where it cannot."""
    if not _ANCILLARY_SIZE:
        return False
    try:
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
    except OSError:
        return False
    return True


class StampedServer(tcp.Server):
    """A TCP server connection that notes the kernel's stamp of every read."""

    def __init__(
        self,
        sock: socket.socket,
        protocol: IProtocol,
        client: tuple[object, ...],
        server: tcp.Port,
        sessionno: int,
        reactor: IReactorFDSet,
    ) -> None:
        super().__init__(sock, protocol, client, server, sessionno, reactor)
        self._sl5r_client = (str(client[0]), int(str(client[1])))
        self._sl5r_stamped = stamps_enable(sock)

    def doRead(self) -> Any:
        if not self._sl5r_stamped:
            return super().doRead()
        try:
            data, ancillary, _flags, _address = self.socket.recvmsg(
                self.bufferSize, _ANCILLARY_SIZE
            )
        except OSError as error:
            # As Twisted's own doRead: nothing to read yet, or the connection is gone.
            if error.args[0] == errno.EWOULDBLOCK:
                return None
            return main.CONNECTION_LOST
        stamp = ancillary_stamp(ancillary)
        if stamp is not None and data:
            arrival_note(self._sl5r_client, stamp)
        return self._dataReceived(data)

    def connectionLost(self, reason: Any) -> None:
        arrival_forget(self._sl5r_client)
        super().connectionLost(reason)


def arrival_stamps_install() -> None:
    """Make Twisted's TCP servers in this process read with the kernel's receive stamps
    (``manage.py serve`` and ``venue`` call it before they listen)."""
    tcp.Port.transport = StampedServer
