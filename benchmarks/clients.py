"""The benchmarks' clients: a page's websocket and its keep-alive HTTP connection.

What a page does over the network, without a browser, on the standard clients
(``websockets``, ``httpx``; requirements-dev.txt): ``WebSocket`` is a page's socket, with the
Origin header of the site's own pages (the server refuses other origins) and no pings of its
own (a browser sends none); ``Http`` is the one keep-alive connection a browser keeps to
the site. Used by ``fanout.py``, ``cluster_load.py`` and ``league.py``.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Origin

HOST = "127.0.0.1"
# A connection the server dropped while the request was on its way; httpx itself replaces a
# kept connection that the server closed before the request.
DROPPED = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
IDEMPOTENT = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})


class WebSocket:
    """A page's websocket to the site; JSON text messages."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection
        self.last_text = ""  # the raw text of the last message received, as sent
        self.last_wall = 0.0  # time.time() when it was received (before decoding it)

    @classmethod
    async def connect(cls, port: int, path: str) -> WebSocket:
        """The open socket; ConnectionError when the server refuses the handshake."""
        try:
            connection = await connect(
                f"ws://{HOST}:{port}{path}",
                origin=Origin(f"http://{HOST}:{port}"),
                proxy=None,  # loopback only, whatever the environment's proxy says
                ping_interval=None,
                open_timeout=None,  # the callers bound the wait where it matters
                max_size=None,  # a browser takes a state of any size
            )
        except InvalidHandshake as error:
            raise ConnectionError(str(error)) from error
        return cls(connection)

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON message; None when the server closes or drops the socket."""
        try:
            text = await self.connection.recv()
        except ConnectionClosed:
            return None
        self.last_wall = time.time()
        self.last_text = text if isinstance(text, str) else text.decode("utf-8")
        message: dict[str, Any] = json.loads(text)
        return message

    async def send(self, message: dict[str, Any]) -> bool:
        """Send a JSON message (a page's ping); False when the socket is already closed."""
        try:
            await self.connection.send(json.dumps(message, separators=(",", ":")))
        except ConnectionClosed:
            return False
        return True

    async def close(self) -> None:
        await self.connection.close()


class Http:
    """One keep-alive connection, as a browser keeps to the site; reopened if dropped.

    An idempotent request on a connection dropped under it is sent again once on a new one,
    as a browser does (the benchmarks' PUTs are idempotent: the same order again is the
    same order).

    ``connections``: how many connections it may open when requests overlap (a browser
    opens up to six per site); the second opens only while the first is busy.
    """

    def __init__(self, port: int, connections: int = 1) -> None:
        self.client = httpx.AsyncClient(
            base_url=f"http://{HOST}:{port}",
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
            timeout=None,  # a measurement: a slow answer is a figure, not an error
            trust_env=False,  # no proxy from the environment: loopback only
            verify=False,  # plain HTTP; an SSL context per client costs 50 ms × 1,000 pages
        )

    async def connect(self) -> None:
        """Open the connection now rather than on the first request (httpx opens it with a
        request: ``/healthz``)."""
        await self.request("GET", "/healthz")

    async def request(
        self,
        method: str,
        path: str,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
    ) -> tuple[int, bytes]:
        """The status and body; ConnectionError when no answer came."""
        for attempt in (1, 2):
            try:
                response = await self.client.request(method, path, headers=headers, content=body)
            except DROPPED as error:
                if attempt == 2 or method not in IDEMPOTENT:
                    raise ConnectionError(f"{type(error).__name__}: {error}") from error
            except httpx.TransportError as error:
                raise ConnectionError(f"{type(error).__name__}: {error}") from error
            else:
                return response.status_code, response.content
        raise AssertionError("unreachable")

    async def close(self) -> None:
        await self.client.aclose()
