"""The benchmarks' raw clients: a websocket and a keep-alive HTTP/1.1 connection on asyncio.

What a page does over the network, without a browser and without dependencies
(``websockets`` is not installed): ``WebSocket`` is a minimal RFC 6455 client (text frames,
pings answered; the server's frames unmasked and unfragmented, as Daphne sends them) and
``Http`` one keep-alive connection, as a browser keeps to the site, reopened if the server
drops it. Used by ``fanout.py`` and ``cluster_load.py``.
"""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import struct
from typing import Any

HOST = "127.0.0.1"


def websocket_frame(opcode: int, payload: bytes) -> bytes:
    """One final client frame: masked, as RFC 6455 requires of a client."""
    mask = secrets.token_bytes(4)
    size = len(payload)
    if size < 126:
        header = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 65536:
        header = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        header = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    # XOR through integers: a bytes comprehension takes seconds for a 2 MiB payload.
    repeated = (mask * (size // 4 + 1))[:size]
    masked = (int.from_bytes(payload, "big") ^ int.from_bytes(repeated, "big")).to_bytes(
        size, "big"
    )
    return header + mask + masked


async def websocket_frame_read(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    """One server frame: its opcode and payload (a server's frames are never masked)."""
    first, second = await reader.readexactly(2)
    size = second & 0x7F
    if size == 126:
        (size,) = struct.unpack("!H", await reader.readexactly(2))
    elif size == 127:
        (size,) = struct.unpack("!Q", await reader.readexactly(8))
    return first & 0x0F, await reader.readexactly(size)


class WebSocket:
    """Text frames, pings answered, server frames unmasked and unfragmented (Daphne's)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def connect(cls, port: int, path: str) -> WebSocket:
        reader, writer = await asyncio.open_connection(HOST, port)
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        writer.write(
            (
                f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                f"Sec-WebSocket-Version: 13\r\nOrigin: http://{HOST}:{port}\r\n\r\n"
            ).encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 101"):
            writer.close()
            raise ConnectionError(head.split(b"\r\n", 1)[0].decode())
        return cls(reader, writer)

    def _send(self, opcode: int, payload: bytes) -> None:
        self.writer.write(websocket_frame(opcode, payload))

    async def receive(self) -> dict[str, Any] | None:
        """The next JSON text message; None when the server closes or drops the socket."""
        try:
            return await self._receive()
        except (asyncio.IncompleteReadError, ConnectionError):
            return None

    async def _receive(self) -> dict[str, Any] | None:
        while True:
            opcode, payload = await websocket_frame_read(self.reader)
            if opcode == 0x1:
                message: dict[str, Any] = json.loads(payload)
                return message
            if opcode == 0x8:
                return None
            if opcode == 0x9:
                self._send(0xA, payload)

    async def close(self) -> None:
        try:
            self._send(0x8, struct.pack("!H", 1000))
            await self.writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        self.writer.close()


class Http:
    """One keep-alive connection, as a browser keeps to the site; reopened if dropped.

    A request on a connection that was already open and turns out to be dropped is sent
    again once on a new one (as a browser does for an idempotent request; the benchmarks'
    PUTs are idempotent too: the same order again is the same order).
    """

    def __init__(self, port: int) -> None:
        self.port = port
        self.streams: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None

    async def connect(self) -> None:
        """Open the connection now rather than on the first request."""
        if self.streams is None:
            self.streams = await asyncio.open_connection(HOST, self.port)

    async def request(
        self,
        method: str,
        path: str,
        headers: dict[str, str] | None = None,
        body: bytes = b"",
    ) -> tuple[int, bytes]:
        for attempt in (1, 2):
            fresh = self.streams is None
            if self.streams is None:
                self.streams = await asyncio.open_connection(HOST, self.port)
            reader, writer = self.streams
            lines = [f"{method} {path} HTTP/1.1", f"Host: {HOST}:{self.port}"]
            lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
            lines += [f"Content-Length: {len(body)}", "", ""]
            try:
                writer.write("\r\n".join(lines).encode() + body)
                return await self._response(reader)
            except (asyncio.IncompleteReadError, ConnectionError):
                self.close()
                if fresh or attempt == 2:
                    raise
        raise AssertionError("unreachable")

    async def _response(self, reader: asyncio.StreamReader) -> tuple[int, bytes]:
        head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
        status = int(head[0].split()[1])
        fields = {
            k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head[1:] if h)
        }
        if "content-length" in fields:
            body = await reader.readexactly(int(fields["content-length"]))
        elif fields.get("transfer-encoding", "").lower() == "chunked":
            parts = []
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                chunk = await reader.readexactly(size + 2)
                if size == 0:
                    break
                parts.append(chunk[:-2])
            body = b"".join(parts)
        else:
            body = await reader.read()
            self.close()
        if fields.get("connection", "").lower() == "close":
            self.close()
        return status, body

    def close(self) -> None:
        if self.streams is not None:
            self.streams[1].close()
            self.streams = None
