"""HTTP for the ASGI server: Django's WSGI handler on a fixed pool of threads.

Django's own ASGI handler runs every request's synchronous code in a thread made for that
request, hopping between it and the event loop several times (the request signals, the
middleware adapters, the view, closing the response), and a thread made per request cannot
keep a database connection: each request opened its own and closed it again, and closing the
last SQLite connection checkpoints the WAL to disk. Under a burst of 48 orders that was most
of the time spent (benchmarks/README.md, order burst).

Here a request crosses to a worker thread once and back once. The workers live as long as
the process, so with ``CONN_MAX_AGE`` (settings) each keeps its database connection.
Several workers (``SL5R_HTTP_THREADS``), so that one request's database round trips do not
hold up the others, and so that the orders of a burst are in hand together and stored in
one transaction (the group commit of ``referees.services.orders``). Websockets stay on
Channels' asynchronous consumers.

Code in a worker that needs the event loop (``async_to_sync``, e.g. a broadcast on the
channel layer) runs on the server's loop, as it would under Django's ASGI handler, instead
of starting a loop of its own for every call; ``server_loop`` gives that loop to code that
wants to hand it work without waiting.

Each request's arrival, before it waits for a worker, is kept in its environ: under a burst
the wait for a thread is most of a request's time, and R4 judges an order late by when it
reached the server, not by when a thread got to it (``request_received_at``).

With ``SL5R_HTTP=django`` Django's own ASGI handler serves HTTP instead, wrapped in
``ArrivalStamped``, which gives it the same guarantees: the arrival in the scope, the order
counted as waiting until it is answered, and ``server_loop`` in the request's threads.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import threading
from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from datetime import datetime
from tempfile import SpooledTemporaryFile
from typing import IO, TYPE_CHECKING, Any

from asgiref.sync import SyncToAsync
from django.utils import timezone

from sl5r.serving.arrival import request_arrival
from sl5r.serving.waiting_orders import WAITING, order_tournament

if TYPE_CHECKING:
    from django.http import HttpRequest

log = logging.getLogger(__name__)

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
# A server's send takes any message mapping, as Django's ASGI handler expects of it.
Send = Callable[[Mapping[str, Any]], Awaitable[None]]
WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
# The wrapped application gets ArrivalStamped's own copy of the scope, a dict.
AsgiApp = Callable[[dict[str, Any], Receive, Send], Awaitable[None]]

# A response up to this size is collected in the worker and sent from the loop in one go;
# a larger one (a static file) is streamed from the worker chunk by chunk.
BUFFERED_RESPONSE_BYTES = 256 * 1024
# Request bodies stay in memory up to this size, then spill to a temporary file; Django
# refuses bodies over DATA_UPLOAD_MAX_MEMORY_SIZE itself, with a 400.
BODY_IN_MEMORY_BYTES = 1024 * 1024
# The environ key of the moment the whole request had reached this process (an aware UTC
# datetime). A dotted name, as PEP 3333 asks of server extensions: no header can set it.
# ArrivalStamped puts it under the same key in the ASGI scope.
RECEIVED_AT = "sl5r.received_at"

_local = threading.local()
# The loop of the server an ArrivalStamped request runs for; asgiref copies the context into
# the threads Django's ASGI handler runs the request's synchronous code in.
_request_loop: ContextVar[asyncio.AbstractEventLoop | None] = ContextVar(
    "sl5r_request_loop", default=None
)


def request_received_at(request: HttpRequest) -> datetime:
    """When ``request`` reached the server, before it waited for a thread.

    The pool stamps the environ (``request.META``); ``ArrivalStamped`` stamps the ASGI
    scope, which Django's ``ASGIRequest`` keeps. Requests that came through neither
    (Django's test client, another server) have no stamp: for them it is now.
    """
    received = request.META.get(RECEIVED_AT)
    if received is None:
        received = (getattr(request, "scope", None) or {}).get(RECEIVED_AT)
    return received if isinstance(received, datetime) else timezone.now()


def server_loop() -> asyncio.AbstractEventLoop | None:
    """The event loop of the server this thread works for; None outside a request."""
    loop: asyncio.AbstractEventLoop | None = getattr(_local, "loop", None) or _request_loop.get()
    return loop if loop is not None and loop.is_running() else None


class _Disconnected(Exception):
    """The client went away before its request body arrived."""


class _Response:
    """``start_response`` and the body of one WSGI response, collected in the worker."""

    def __init__(self) -> None:
        self.status = 500
        self.headers: list[tuple[bytes, bytes]] = []
        self.started = False

    def start_response(
        self, status: str, headers: list[tuple[str, str]], exc_info: Any = None
    ) -> Callable[[bytes], None]:
        if exc_info is not None and self.started:
            raise exc_info[1].with_traceback(exc_info[2])
        self.status = int(status.split(" ", 1)[0])
        self.headers = [
            (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
        ]
        return self._write_forbidden

    @staticmethod
    def _write_forbidden(data: bytes) -> None:
        raise RuntimeError("the WSGI write() callable is not supported")


class ThreadedWsgiHttp:
    """An ASGI application for ``http`` scopes that runs a WSGI application in workers."""

    def __init__(self, wsgi_application: WsgiApp, *, threads: int) -> None:
        if threads < 1:
            raise ValueError(f"threads: at least 1, not {threads}")
        self.wsgi_application = wsgi_application
        self.threads = threads
        self._executor: ThreadPoolExecutor | None = None
        self._executor_loop: asyncio.AbstractEventLoop | None = None
        self._executor_pid = 0
        self._lock = threading.Lock()

    def _executor_for(self, loop: asyncio.AbstractEventLoop) -> ThreadPoolExecutor:
        # Made on first use, in the serving process (not at import, before a fork), and
        # again if a test runs the application on another loop.
        with self._lock:
            if (
                self._executor is None
                or self._executor_loop is not loop
                or self._executor_pid != os.getpid()
            ):
                if self._executor is not None and self._executor_pid == os.getpid():
                    self._executor.shutdown(wait=False)
                self._executor = ThreadPoolExecutor(
                    max_workers=self.threads,
                    thread_name_prefix="http",
                    initializer=worker_start,
                    initargs=(loop,),
                )
                self._executor_loop = loop
                self._executor_pid = os.getpid()
            return self._executor

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"ThreadedWsgiHttp serves http scopes, not {scope['type']!r}")
        loop = asyncio.get_running_loop()
        with SpooledTemporaryFile(max_size=BODY_IN_MEMORY_BYTES) as body:
            try:
                await _read_body(receive, body)
            except _Disconnected:
                return
            # Stamped once the body is in, so that a client dribbling its body past a
            # deadline cannot claim the moment it began: by the kernel, when its last bytes
            # came in, not when this loop got to them (sl5r/serving/arrival.py).
            received_at = request_arrival(scope, now=timezone.now())
            size = body.tell()
            body.seek(0)
            environ = wsgi_environ(scope, body)
            environ[RECEIVED_AT] = received_at
            # A chunked body arrives without a length, and Django reads only that many bytes.
            environ.setdefault("CONTENT_LENGTH", str(size))
            response = _Response()
            # A possible order holds its tournament's clock until it is answered
            # (sl5r/serving/waiting_orders.py, referees.clock_thread.settle_hold).
            tournament_id = order_tournament(scope["method"], scope["path"])
            token = None if tournament_id is None else WAITING.add(tournament_id, received_at)
            try:
                chunks = await loop.run_in_executor(
                    self._executor_for(loop), self._run, environ, response, send, loop
                )
            finally:
                if token is not None:
                    WAITING.done(token)
        if chunks is not None:
            await send(
                {
                    "type": "http.response.start",
                    "status": response.status,
                    "headers": response.headers,
                }
            )
            await send({"type": "http.response.body", "body": b"".join(chunks)})

    def _run(
        self,
        environ: dict[str, Any],
        response: _Response,
        send: Send,
        loop: asyncio.AbstractEventLoop,
    ) -> list[bytes] | None:
        """In a worker: the response's body, or None when it was too big and was streamed."""
        result = self.wsgi_application(environ, response.start_response)
        try:
            chunks: list[bytes] = []
            size = 0
            streaming = False
            for chunk in result:
                if not chunk:
                    continue
                if not streaming and size + len(chunk) <= BUFFERED_RESPONSE_BYTES:
                    chunks.append(chunk)
                    size += len(chunk)
                    continue
                if not streaming:
                    streaming = True
                    _send_from_worker(
                        loop,
                        send,
                        {
                            "type": "http.response.start",
                            "status": response.status,
                            "headers": response.headers,
                        },
                    )
                    for earlier in chunks:
                        _send_from_worker(
                            loop,
                            send,
                            {"type": "http.response.body", "body": earlier, "more_body": True},
                        )
                    chunks = []
                _send_from_worker(
                    loop, send, {"type": "http.response.body", "body": chunk, "more_body": True}
                )
            if streaming:
                _send_from_worker(loop, send, {"type": "http.response.body", "body": b""})
                return None
            return chunks
        finally:
            # Django's request_finished signal (closing or keeping the database
            # connection, as CONN_MAX_AGE says) is sent from here.
            close = getattr(result, "close", None)
            if close is not None:
                close()


def worker_start(loop: asyncio.AbstractEventLoop) -> None:
    """Make this thread serve requests for the server that runs ``loop`` (a worker of the
    pool; a benchmark that calls the handler in-process as the server would)."""
    _local.loop = loop
    # async_to_sync in this thread then runs its coroutine on the server's loop, as in a
    # thread started by sync_to_async (asgiref keeps the loop in this thread-local).
    SyncToAsync.threadlocal.main_event_loop = loop
    SyncToAsync.threadlocal.main_event_loop_pid = os.getpid()


def _send_from_worker(loop: asyncio.AbstractEventLoop, send: Send, message: Message) -> None:
    asyncio.run_coroutine_threadsafe(_call(send, message), loop).result()


async def _call(send: Send, message: Message) -> None:
    await send(message)


async def _read_body(receive: Receive, body: IO[bytes]) -> None:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise _Disconnected
        body.write(message.get("body", b""))
        if not message.get("more_body", False):
            return


def wsgi_environ(scope: Scope, body: IO[bytes]) -> dict[str, Any]:
    """The WSGI environ for an ASGI http scope (PEP 3333)."""
    script_name = scope.get("root_path", "") or ""
    path = scope["path"]
    if script_name and path.startswith(script_name):
        path = path[len(script_name) :]
    server = scope.get("server") or ("localhost", 80)
    environ: dict[str, Any] = {
        "REQUEST_METHOD": scope["method"],
        "SCRIPT_NAME": script_name.encode("utf-8").decode("latin-1"),
        "PATH_INFO": path.encode("utf-8").decode("latin-1"),
        "QUERY_STRING": scope.get("query_string", b"").decode("latin-1"),
        "SERVER_PROTOCOL": f"HTTP/{scope.get('http_version', '1.1')}",
        "SERVER_NAME": str(server[0]),
        "SERVER_PORT": str(server[1] if server[1] is not None else 80),
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": scope.get("scheme", "http"),
        "wsgi.input": body,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    client = scope.get("client")
    if client:
        environ["REMOTE_ADDR"] = str(client[0])
        environ["REMOTE_PORT"] = str(client[1])
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        key = name if name in ("CONTENT_LENGTH", "CONTENT_TYPE") else f"HTTP_{name}"
        value = raw_value.decode("latin-1")
        # Repeated headers are joined with commas (RFC 9110), cookies with semicolons.
        if key in environ:
            value = f"{environ[key]}{'; ' if key == 'HTTP_COOKIE' else ','}{value}"
        environ[key] = value
    return environ


class ArrivalStamped:
    """An ASGI application for ``http`` scopes (Django's ASGI handler) with the guarantees
    of ``ThreadedWsgiHttp``: each request's arrival in its scope under ``RECEIVED_AT``, a
    possible order counted as waiting (``sl5r.serving.waiting_orders``) from then until it is
    answered, and ``server_loop`` set for the code it runs in threads."""

    def __init__(self, application: AsgiApp) -> None:
        self.application = application

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            raise ValueError(f"ArrivalStamped serves http scopes, not {scope['type']!r}")
        # A copy: the scope is the server's, and the stamp is this request's. The handler
        # builds its request from this dict once it has read the body, so the stamp made
        # at the body's last part is in it.
        scope = dict(scope)
        tournament_id = order_tournament(scope["method"], scope["path"])
        tokens: list[tuple[int, int]] = []

        async def stamping_receive() -> Message:
            message = await receive()
            if (
                message["type"] == "http.request"
                and not message.get("more_body", False)
                and RECEIVED_AT not in scope
            ):
                # As in the pool: once the whole body is in, so that a client dribbling
                # its body past a deadline cannot claim the moment it began.
                received_at = request_arrival(scope, now=timezone.now())
                scope[RECEIVED_AT] = received_at
                if tournament_id is not None:
                    tokens.append(WAITING.add(tournament_id, received_at))
            return message

        loop_token = _request_loop.set(asyncio.get_running_loop())
        try:
            await self.application(scope, stamping_receive, send)
        finally:
            _request_loop.reset(loop_token)
            for token in tokens:
                WAITING.done(token)
