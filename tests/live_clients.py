"""A page's clients for the tests that drive a real server: its websocket and its HTTP.

On the standard clients (``websockets``, ``httpx``; requirements-dev.txt). ``WebSocket`` is
a page's socket, with the Origin header of the site's own pages (the server refuses other
origins) and no pings of its own (a browser sends none); ``http_client`` is the one
keep-alive connection a page or a phone keeps to the site (httpx opens a new one when the
server has closed it). Raw, malformed frames are ``tests/abuse/frames.py``'s, not these.
"""

from __future__ import annotations

import json
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Origin

HOST = "127.0.0.1"


class WebSocket:
    """A page's websocket to the site; JSON text messages."""

    def __init__(self, connection: ClientConnection) -> None:
        self.connection = connection

    @classmethod
    async def connect(cls, port: int, path: str) -> WebSocket:
        """The open socket; ConnectionError when the server refuses the handshake."""
        try:
            connection = await connect(
                f"ws://{HOST}:{port}{path}",
                origin=Origin(f"http://{HOST}:{port}"),
                proxy=None,  # loopback only, whatever the environment's proxy says
                ping_interval=None,
                open_timeout=None,  # the tests bound their waits themselves
                max_size=None,  # a browser takes a state of any size
            )
        except InvalidHandshake as error:
            raise ConnectionError(str(error)) from error
        return cls(connection)

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON message; None when the server closes or drops the socket."""
        try:
            message: dict[str, Any] = json.loads(await self.connection.recv())
        except ConnectionClosed:
            return None
        return message

    async def close(self) -> None:
        """The closing handshake, as a page that is left."""
        await self.connection.close()

    def drop(self) -> None:
        """Close the TCP connection without the handshake and without awaiting, as a page
        that is killed does (also from a task being cancelled)."""
        self.connection.transport.close()


def http_client(port: int) -> httpx.AsyncClient:
    """One keep-alive connection to the server on ``port``; no proxy, no timeout of its own."""
    return httpx.AsyncClient(
        base_url=f"http://{HOST}:{port}",
        limits=httpx.Limits(max_connections=1, max_keepalive_connections=1),
        timeout=None,
        trust_env=False,  # no proxy from the environment: loopback only
        verify=False,  # plain HTTP; skips building an SSL context per client
    )
