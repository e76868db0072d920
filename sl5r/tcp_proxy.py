"""A small round-robin TCP proxy: ``python -m sl5r.tcp_proxy``.

``make cluster`` (``sl5r/cluster.py``) puts it in front of its two ASGI processes. It works
at the TCP level: each new client connection goes to the next backend in turn and its bytes
are copied both ways untouched, so HTTP keep-alive and websocket upgrades pass through as
they are. Stickiness is not needed: the state lives in PostgreSQL and the live events
travel through Redis, so any backend can serve any request or socket. A backend that
refuses the connection is skipped for that connection (the next one is tried); only when
none answers is the client's connection closed.

    python -m sl5r.tcp_proxy --listen 127.0.0.1:8000 --backend 127.0.0.1:8001 \\
        --backend 127.0.0.1:8002
    python -m sl5r.tcp_proxy --fd 3 --backend ...   # a listening socket inherited from a parent

Standard library only: it starts without Django.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import socket
import sys
from collections.abc import Sequence

log = logging.getLogger("sl5r.tcp_proxy")

Address = tuple[str, int]

CONNECT_TIMEOUT = 3.0
CHUNK_BYTES = 64 * 1024


class TcpProxy:
    """Accepts connections and joins each one to the next backend that answers."""

    def __init__(
        self, backends: Sequence[Address], *, connect_timeout: float = CONNECT_TIMEOUT
    ) -> None:
        if not backends:
            raise ValueError("a proxy needs at least one backend")
        self.backends = list(backends)
        self.connect_timeout = connect_timeout
        self._turn = 0
        self._server: asyncio.Server | None = None
        self._handlers: set[asyncio.Task[None]] = set()

    async def start(
        self, *, host: str = "127.0.0.1", port: int = 0, sock: socket.socket | None = None
    ) -> Address:
        """Listen on ``sock`` (already bound and listening) or on ``host:port``."""
        if sock is not None:
            self._server = await asyncio.start_server(self._serve, sock=sock)
        else:
            self._server = await asyncio.start_server(self._serve, host, port)
        return self.address

    @property
    def address(self) -> Address:
        if self._server is None or not self._server.sockets:
            raise RuntimeError("the proxy is not listening")
        name = self._server.sockets[0].getsockname()
        return str(name[0]), int(name[1])

    async def close(self) -> None:
        """Stop accepting and drop the connections in progress."""
        if self._server is not None:
            self._server.close()
        for task in list(self._handlers):
            task.cancel()
        await asyncio.gather(*self._handlers, return_exceptions=True)
        if self._server is not None:
            await self._server.wait_closed()

    def _order(self) -> list[Address]:
        """The backends to try for a new connection: the next one in turn first."""
        start = self._turn % len(self.backends)
        self._turn += 1
        return self.backends[start:] + self.backends[:start]

    async def _connect(self) -> tuple[Address, asyncio.StreamReader, asyncio.StreamWriter]:
        problems = []
        for backend in self._order():
            try:
                reader, writer = await asyncio.wait_for(
                    asyncio.open_connection(*backend), self.connect_timeout
                )
            except (OSError, asyncio.TimeoutError) as error:
                problems.append(f"{backend[0]}:{backend[1]}: {error or type(error).__name__}")
                continue
            return backend, reader, writer
        raise ConnectionError("no backend answered (" + "; ".join(problems) + ")")

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        try:
            try:
                _backend, up_reader, up_writer = await self._connect()
            except ConnectionError as error:
                log.warning("connection from %s dropped: %s", _peer(writer), error)
                return
            try:
                await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
            finally:
                up_writer.close()
        except asyncio.CancelledError:
            pass  # the proxy is closing: drop the connection
        finally:
            writer.close()
            self._handlers.discard(task)


async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    """Copy until ``source`` ends, then pass the end on (half-close) to ``sink``."""
    try:
        while chunk := await source.read(CHUNK_BYTES):
            sink.write(chunk)
            await sink.drain()
        if sink.can_write_eof() and not sink.is_closing():
            sink.write_eof()
    except (ConnectionError, OSError):
        # One side went away: closing the other ends the copy in the other direction too.
        sink.close()


def _peer(writer: asyncio.StreamWriter) -> str:
    peer = writer.get_extra_info("peername")
    return f"{peer[0]}:{peer[1]}" if peer else "?"


def address_parse(text: str) -> Address:
    """``HOST:PORT`` (``[::1]:PORT`` for IPv6) as a pair; ValueError naming the problem."""
    host, sep, port = text.rpartition(":")
    if not sep or not host:
        raise ValueError(f"{text!r}: expected HOST:PORT")
    if not port.isdigit() or not 0 <= int(port) < 65536:
        raise ValueError(f"{text!r}: {port!r} is not a port number")
    return host.strip("[]"), int(port)


async def proxy_run(backends: Sequence[Address], *, listen: Address | None, fd: int | None) -> None:
    """Serve until SIGINT or SIGTERM."""
    proxy = TcpProxy(backends)
    sock = socket.socket(fileno=fd) if fd is not None else None
    if listen is not None:
        await proxy.start(host=listen[0], port=listen[1])
    else:
        await proxy.start(sock=sock)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    host, port = proxy.address
    targets = ", ".join(f"{h}:{p}" for h, p in backends)
    log.info("proxy listening on %s:%s, round-robin over %s", host, port, targets)
    await stop.wait()
    await proxy.close()
    log.info("proxy stopped")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sl5r.tcp_proxy", description="Round-robin TCP proxy (websockets pass)."
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--listen", metavar="HOST:PORT", help="address to listen on")
    where.add_argument("--fd", type=int, help="an inherited listening socket's descriptor")
    parser.add_argument(
        "--backend", metavar="HOST:PORT", action="append", required=True, help="repeat for each"
    )
    args = parser.parse_args(argv)
    try:
        backends = [address_parse(b) for b in args.backend]
        listen = address_parse(args.listen) if args.listen else None
    except ValueError as error:
        parser.error(str(error))
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(proxy_run(backends, listen=listen, fd=args.fd))
    return 0


if __name__ == "__main__":
    sys.exit(main())
