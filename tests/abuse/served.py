"""The site as a stranger on the network meets it: a real ``manage.py serve``, raw requests.

- ``Served``: one Daphne (``manage.py serve --no-clock``) subprocess on this test session's
  database, shared by the tests of a module (``served_site`` in ``tests/abuse/conftest.py``);
- ``request``: one HTTP request with whatever headers and body bytes a client may send;
- ``Socket``: a websocket opened by hand (RFC 6455, the frames of ``tests/abuse/frames.py``),
  so that a test can send what a browser never would (an Origin of another site, a binary
  frame, a 2 MiB message) and read the server's close code.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import json
import secrets
import struct
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.abuse.frames import websocket_frame, websocket_frame_read
from tests.referees.celery_processes import Service
from tests.referees.management.test_clock_serve import free_port

HOST = "127.0.0.1"
SERVE_READY = "Serving SL5R Referee"
TIMEOUT = 15.0

OP_TEXT, OP_BINARY, OP_CLOSE, OP_PING, OP_PONG = 0x1, 0x2, 0x8, 0x9, 0xA


class Served:
    """``manage.py serve`` on a free port, without the turn clock (tests resolve turns)."""

    def __init__(self, env: dict[str, str], log: Path, database_url: str) -> None:
        self.port = free_port()
        self.database_url = database_url
        argv = [
            sys.executable,
            "manage.py",
            "serve",
            "--no-clock",
            "--host",
            HOST,
            "--port",
            str(self.port),
        ]
        self.service = Service("serve", argv, env, log)
        self.service.wait_for(SERVE_READY)

    @property
    def origin(self) -> str:
        return f"http://{HOST}:{self.port}"

    def alive(self) -> bool:
        return self.service.process.poll() is None

    def stop(self) -> None:
        self.service.stop()


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")


def request(
    port: int,
    method: str,
    path: str,
    *,
    headers: dict[str, str] | None = None,
    body: bytes | None = None,
) -> Reply:
    """One request on a connection of its own; redirects are not followed."""
    connection = http.client.HTTPConnection(HOST, port, timeout=TIMEOUT)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, data)


class Socket:
    """One websocket, text and binary frames sent masked; the server's frames read raw."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer

    @classmethod
    async def open(
        cls, port: int, path: str, *, origin: str | None, cookie: str | None = None
    ) -> tuple[int, Socket | None]:
        """The handshake's HTTP status, and the socket when it was accepted (101)."""
        reader, writer = await asyncio.open_connection(HOST, port)
        key = base64.b64encode(secrets.token_bytes(16)).decode()
        lines = [
            f"GET {path} HTTP/1.1",
            f"Host: {HOST}:{port}",
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
        if origin is not None:
            lines.append(f"Origin: {origin}")
        if cookie is not None:
            lines.append(f"Cookie: {cookie}")
        writer.write(("\r\n".join(lines) + "\r\n\r\n").encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), TIMEOUT)
        status = int(head.split(b" ", 2)[1])
        if status != 101:
            writer.close()
            return status, None
        return status, cls(reader, writer)

    def send(self, opcode: int, payload: bytes) -> None:
        self.writer.write(websocket_frame(opcode, payload))

    def send_text(self, text: str) -> None:
        self.send(OP_TEXT, text.encode())

    async def next_message(self, timeout: float = TIMEOUT) -> tuple[str, Any]:
        """``("text", str)``, or ``("close", code)`` (``None``: dropped without a code)."""
        try:
            return await asyncio.wait_for(self._next(), timeout)
        except (asyncio.IncompleteReadError, ConnectionError):
            return "close", None

    async def _next(self) -> tuple[str, Any]:
        while True:
            opcode, payload = await websocket_frame_read(self.reader)
            if opcode == OP_TEXT:
                return "text", payload.decode()
            if opcode == OP_CLOSE:
                code = struct.unpack("!H", payload[:2])[0] if len(payload) >= 2 else None
                return "close", code
            if opcode == OP_PING:
                self.send(OP_PONG, payload)

    async def close(self) -> None:
        try:
            self.send(OP_CLOSE, struct.pack("!H", 1000))
            await self.writer.drain()
        except (ConnectionError, RuntimeError):
            pass
        self.writer.close()
