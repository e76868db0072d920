"""The cluster's TCP proxy: round-robin, websockets through, dead backends skipped.

The backends are small asyncio servers in the test: one says its name and closes, one
reads to the end and counts, one speaks just enough RFC 6455 to shake hands, send a text
frame and a ping, and report the client's pong. The client side of the websocket is the
benchmarks' raw client (``benchmarks/clients.py``).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import signal
import socket
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from benchmarks.clients import WebSocket
from sl5r.tcp_proxy import TcpProxy, address_parse

BASE_DIR = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"
WAIT = 10.0
WS_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def dead_port() -> int:
    """A port with nobody listening."""
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


@pytest.fixture
async def servers() -> AsyncIterator[Callable[[Handler], Awaitable[int]]]:
    """Start backend servers on free ports; all closed at the end."""
    started: list[asyncio.Server] = []

    async def start(handler: Handler) -> int:
        server = await asyncio.start_server(handler, HOST, 0)
        started.append(server)
        return int(server.sockets[0].getsockname()[1])

    yield start
    for server in started:
        server.close()


@pytest.fixture
async def proxies() -> AsyncIterator[Callable[[list[int]], Awaitable[int]]]:
    """Start a proxy in front of the given backend ports; its port. Closed at the end."""
    started: list[TcpProxy] = []

    async def start(ports: list[int]) -> int:
        proxy = TcpProxy([(HOST, p) for p in ports], connect_timeout=2.0)
        started.append(proxy)
        _host, port = await proxy.start(host=HOST, port=0)
        return port

    yield start
    for proxy in started:
        await proxy.close()


def says(name: str) -> Handler:
    async def handler(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(name.encode())
        await writer.drain()
        writer.close()

    return handler


async def fetch(port: int, data: bytes = b"", *, half_close: bool = False) -> bytes:
    """Connect, send ``data`` (then end the sending side if asked), read to the end."""
    reader, writer = await asyncio.open_connection(HOST, port)
    writer.write(data)
    if half_close:
        writer.write_eof()
    try:
        return await asyncio.wait_for(reader.read(), WAIT)
    finally:
        writer.close()


async def test_connections_go_round_robin_over_the_backends(
    servers: Callable[[Handler], Awaitable[int]], proxies: Callable[[list[int]], Awaitable[int]]
) -> None:
    """Each new connection goes to the next backend in turn."""
    port = await proxies([await servers(says("a")), await servers(says("b"))])

    answers = [await fetch(port) for _ in range(4)]

    assert answers == [b"a", b"b", b"a", b"b"]


async def test_a_dead_backend_is_skipped(
    servers: Callable[[Handler], Awaitable[int]], proxies: Callable[[list[int]], Awaitable[int]]
) -> None:
    """A backend that refuses the connection is passed over for the next one."""
    port = await proxies([dead_port(), await servers(says("alive"))])

    answers = [await fetch(port) for _ in range(3)]

    assert answers == [b"alive"] * 3


async def test_no_backend_answering_closes_the_connection(
    proxies: Callable[[list[int]], Awaitable[int]],
) -> None:
    """With every backend down, the client's connection is closed, not left hanging."""
    port = await proxies([dead_port(), dead_port()])

    assert await fetch(port, b"GET / HTTP/1.1\r\n\r\n") == b""


async def test_the_end_of_the_clients_data_reaches_the_backend(
    servers: Callable[[Handler], Awaitable[int]], proxies: Callable[[list[int]], Awaitable[int]]
) -> None:
    """A client that stops sending (half-close) still gets the answer to all it sent."""

    async def count(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        data = await reader.read()  # to the end: needs the client's EOF passed on
        writer.write(f"{len(data)} bytes".encode())
        await writer.drain()
        writer.close()

    port = await proxies([await servers(count)])
    body = b"x" * 300_000  # several chunks

    assert await fetch(port, body, half_close=True) == b"300000 bytes"


async def websocket_backend(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Shake hands, send a text frame and a ping, then report the pong's payload."""
    head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1")
    fields = {
        k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in head.split("\r\n"))
    }
    assert fields.get("upgrade", "").lower() == "websocket", head
    accept = base64.b64encode(
        hashlib.sha1((fields["sec-websocket-key"] + WS_GUID).encode()).digest()
    ).decode()
    writer.write(
        (
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {accept}\r\n\r\n"
        ).encode()
    )

    def frame(opcode: int, payload: bytes) -> bytes:
        return struct.pack("!BB", 0x80 | opcode, len(payload)) + payload

    writer.write(frame(0x1, json.dumps({"type": "hello"}).encode()))
    writer.write(frame(0x9, b"are you there"))  # ping
    await writer.drain()
    first, second = await reader.readexactly(2)
    mask = await reader.readexactly(4)
    payload = bytes(b ^ mask[i % 4] for i, b in enumerate(await reader.readexactly(second & 0x7F)))
    report = {"type": "pong" if first & 0x0F == 0xA else "other", "payload": payload.decode()}
    writer.write(frame(0x1, json.dumps(report).encode()))
    await writer.drain()
    writer.close()


async def test_a_websocket_upgrade_passes_through(
    servers: Callable[[Handler], Awaitable[int]], proxies: Callable[[list[int]], Awaitable[int]]
) -> None:
    """The handshake and frames in both directions pass unchanged through the proxy."""
    port = await proxies([await servers(websocket_backend)])

    ws = await asyncio.wait_for(WebSocket.connect(port, "/ws/tournaments/1/"), WAIT)
    try:
        hello = await asyncio.wait_for(ws.receive(), WAIT)
        # receive() answers the ping with a pong, then returns the backend's report.
        report = await asyncio.wait_for(ws.receive(), WAIT)
    finally:
        await ws.close()

    assert hello == {"type": "hello"}
    assert report == {"type": "pong", "payload": "are you there"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [("8000", "expected HOST:PORT"), ("127.0.0.1:http", "not a port number"), (":80", "HOST")],
)
def test_bad_addresses_are_refused(text: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        address_parse(text)


def test_addresses_are_parsed() -> None:
    assert address_parse("127.0.0.1:8001") == ("127.0.0.1", 8001)
    assert address_parse("[::1]:8002") == ("::1", 8002)


def test_the_command_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    """``python -m sl5r.tcp_proxy`` forwards to its backend and exits 0 on SIGTERM."""
    with socket.socket() as backend:
        backend.bind((HOST, 0))
        backend.listen()
        backend_port = backend.getsockname()[1]
        listen_port = dead_port()
        log = tmp_path / "proxy.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "sl5r.tcp_proxy",
                    "--listen",
                    f"{HOST}:{listen_port}",
                    "--backend",
                    f"{HOST}:{backend_port}",
                ],
                cwd=BASE_DIR,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            client = None
            for _ in range(100):  # until it listens
                try:
                    client = socket.create_connection((HOST, listen_port), timeout=WAIT)
                    break
                except ConnectionRefusedError:
                    if process.poll() is not None:
                        break
                    time.sleep(0.1)
            assert client is not None, log.read_text()
            with client:
                client.sendall(b"ping")
                backend.settimeout(WAIT)
                accepted, _ = backend.accept()
                with accepted:
                    assert accepted.recv(4) == b"ping"
            process.send_signal(signal.SIGTERM)
            code = process.wait(timeout=WAIT)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()

    assert code == 0, log.read_text()
    assert "proxy stopped" in log.read_text()
