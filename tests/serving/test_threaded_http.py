"""HTTP on a pool of long-lived threads (sl5r/serving/threaded_http.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from django.test import RequestFactory
from django.utils import timezone

from sl5r.serving.threaded_http import (
    BUFFERED_RESPONSE_BYTES,
    RECEIVED_AT,
    ThreadedWsgiHttp,
    request_received_at,
    server_loop,
    wsgi_environ,
)

Environ = dict[str, Any]


def scope(
    method: str = "GET", path: str = "/", headers: Iterable[tuple[bytes, bytes]] = ()
) -> dict[str, Any]:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"a=1",
        "root_path": "",
        "headers": list(headers),
        "client": ("10.0.0.7", 5555),
        "server": ("127.0.0.1", 8000),
    }


async def call(
    app: ThreadedWsgiHttp, request: dict[str, Any], chunks: list[bytes] | None = None
) -> tuple[list[dict[str, Any]], bytes]:
    """Run one request; the messages sent back and the body they carry."""
    pending = list(chunks if chunks is not None else [b""])
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        if pending:
            body = pending.pop(0)
            return {"type": "http.request", "body": body, "more_body": bool(pending)}
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    await app(request, receive, send)
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return sent, body


def echo(environ: Environ, start_response: Callable[..., Any]) -> list[bytes]:
    length = int(environ.get("CONTENT_LENGTH") or 0)
    data = environ["wsgi.input"].read(length)
    start_response(
        "201 Created",
        [("Content-Type", "text/plain"), ("X-Thread", threading.current_thread().name)],
    )
    return [b"got:", data]


def test_a_request_is_answered_by_the_wsgi_application_with_its_status_headers_and_body() -> None:
    app = ThreadedWsgiHttp(echo, threads=1)
    sent, body = asyncio.run(
        call(app, scope("POST", headers=[(b"content-length", b"5")]), [b"hel", b"lo"])
    )
    assert sent[0]["type"] == "http.response.start"
    assert sent[0]["status"] == 201
    assert (b"content-type", b"text/plain") in sent[0]["headers"]
    assert body == b"got:hello"
    assert len(sent) == 2  # start and the whole body: one trip back to the loop


def test_a_chunked_body_without_a_length_still_reaches_django() -> None:
    app = ThreadedWsgiHttp(echo, threads=1)
    _, body = asyncio.run(call(app, scope("PUT"), [b'{"kind":', b'"hold"}']))
    assert body == b'got:{"kind":"hold"}'


def test_every_request_runs_on_the_same_long_lived_worker_thread() -> None:
    app = ThreadedWsgiHttp(echo, threads=1)

    async def two() -> list[bytes]:
        names = []
        for _ in range(2):
            sent, _ = await call(app, scope())
            names.append(dict(sent[0]["headers"])[b"x-thread"])
        return names

    first, second = asyncio.run(two())
    assert first == second and first.startswith(b"http")


def test_a_response_larger_than_the_buffer_is_streamed_whole_and_in_order() -> None:
    piece = b"x" * 65536

    def big(environ: Environ, start_response: Callable[..., Any]) -> Iterable[bytes]:
        start_response("200 OK", [("Content-Type", "application/octet-stream")])
        for i in range(8):
            yield bytes([65 + i]) + piece

    app = ThreadedWsgiHttp(big, threads=2)
    sent, body = asyncio.run(call(app, scope()))
    assert len(body) == 8 * (len(piece) + 1) > BUFFERED_RESPONSE_BYTES
    assert [body[i * (len(piece) + 1)] for i in range(8)] == list(range(65, 73))
    assert sent[0]["type"] == "http.response.start" and sent[-1].get("more_body", False) is False


def test_the_response_iterable_is_closed_so_django_sends_request_finished() -> None:
    closed = threading.Event()

    class Body:
        def __iter__(self) -> Any:
            return iter([b"ok"])

        def close(self) -> None:
            closed.set()

    def app_(environ: Environ, start_response: Callable[..., Any]) -> Body:
        start_response("200 OK", [])
        return Body()

    asyncio.run(call(ThreadedWsgiHttp(app_, threads=1), scope()))
    assert closed.is_set()


def test_a_client_that_leaves_before_its_body_gets_no_answer_and_no_error() -> None:
    ran = threading.Event()

    def app_(environ: Environ, start_response: Callable[..., Any]) -> list[bytes]:
        ran.set()
        start_response("200 OK", [])
        return [b""]

    async def leave() -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.disconnect"}

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await ThreadedWsgiHttp(app_, threads=1)(scope("POST"), receive, send)
        return sent

    assert asyncio.run(leave()) == []
    assert not ran.is_set()


def test_code_in_a_worker_reaches_the_servers_event_loop() -> None:
    seen: dict[str, Any] = {}

    async def where() -> asyncio.AbstractEventLoop:
        return asyncio.get_running_loop()

    def app_(environ: Environ, start_response: Callable[..., Any]) -> list[bytes]:
        seen["server_loop"] = server_loop()
        seen["async_to_sync_loop"] = async_to_sync(where)()
        start_response("204 No Content", [])
        return []

    async def run() -> asyncio.AbstractEventLoop:
        await call(ThreadedWsgiHttp(app_, threads=1), scope())
        return asyncio.get_running_loop()

    loop = asyncio.run(run())
    assert seen["server_loop"] is loop
    assert seen["async_to_sync_loop"] is loop


def test_server_loop_is_none_outside_a_worker() -> None:
    assert server_loop() is None


def test_the_environ_follows_pep_3333() -> None:
    environ = wsgi_environ(
        scope(
            "POST",
            "/api/x",
            headers=[
                (b"content-type", b"application/json"),
                (b"content-length", b"2"),
                (b"cookie", b"a=1"),
                (b"cookie", b"b=2"),
                (b"accept", b"text/html"),
                (b"accept", b"*/*"),
            ],
        ),
        body=None,  # type: ignore[arg-type]
    )
    assert environ["REQUEST_METHOD"] == "POST"
    assert environ["PATH_INFO"] == "/api/x"
    assert environ["QUERY_STRING"] == "a=1"
    assert environ["CONTENT_TYPE"] == "application/json"
    assert environ["CONTENT_LENGTH"] == "2"
    assert environ["HTTP_COOKIE"] == "a=1; b=2"
    assert environ["HTTP_ACCEPT"] == "text/html,*/*"
    assert environ["REMOTE_ADDR"] == "10.0.0.7"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"]) == ("127.0.0.1", "8000")


def test_at_least_one_thread_is_required() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        ThreadedWsgiHttp(echo, threads=0)


@pytest.mark.django_db(transaction=True)
def test_the_site_keeps_its_database_connection_from_one_request_to_the_next() -> None:
    """The point of the pool: no new connection (and no SQLite WAL checkpoint) per request.

    Which worker thread takes a request is the pool's choice (on a busy machine the one
    that just answered may not be idle yet, and another takes the next request), so the
    requests go on until one thread has served two of them: it used one connection for
    both. The pool has a bounded number of threads, so that always happens.
    """
    from django.conf import settings
    from django.db import connection

    from sl5r.asgi import application

    seen: list[tuple[int, Any]] = []  # (thread, connection) of each query

    def spy(execute: Any, sql: str, params: Any, many: bool, context: dict[str, Any]) -> Any:
        seen.append((threading.get_ident(), connection.connection))
        return execute(sql, params, many, context)

    def repeated_thread() -> int | None:
        threads = [thread for thread, _ in seen]
        return next((t for t in threads if threads.count(t) > 1), None)

    async def until_a_thread_serves_twice() -> list[int]:
        statuses = []
        for _ in range(int(settings.SL5R_HTTP_THREADS) + 1):
            sent, _ = await call(
                application.application_mapping["http"],
                scope("GET", "/healthz", [(b"host", b"localhost")]),
            )
            statuses.append(sent[0]["status"])
            if repeated_thread() is not None:
                break
        return statuses

    # execute_wrapper is per thread, so it is installed inside the worker, around Django.
    http_app = application.application_mapping["http"]
    original = http_app.wsgi_application

    def wrapped(environ: Environ, start_response: Callable[..., Any]) -> Any:
        with connection.execute_wrapper(spy):
            return original(environ, start_response)

    http_app.wsgi_application = wrapped
    try:
        statuses = asyncio.run(until_a_thread_serves_twice())
    finally:
        http_app.wsgi_application = original
    assert set(statuses) == {200}
    assert len(seen) == len(statuses)  # one query a request
    thread = repeated_thread()
    assert thread is not None, seen
    kept = {id(conn) for t, conn in seen if t == thread}
    assert len(kept) == 1, seen


# --- The arrival stamp (R4: an order is late by when it reached the server) ---------------


def test_a_request_is_stamped_with_its_arrival_before_it_waits_for_the_busy_thread() -> None:
    """With the one thread busy, the second request's stamp is from before it got the thread."""
    busy, free = threading.Event(), threading.Event()
    seen: dict[str, Any] = {}

    def app_(environ: Environ, start_response: Callable[..., Any]) -> list[bytes]:
        if environ["PATH_INFO"] == "/slow":
            busy.set()
            free.wait(timeout=30)
        else:
            seen["stamp"] = environ[RECEIVED_AT]
            seen["ran_at"] = timezone.now()
        start_response("204 No Content", [])
        return []

    async def queued() -> datetime:
        app = ThreadedWsgiHttp(app_, threads=1)
        slow = asyncio.create_task(call(app, scope(path="/slow")))
        while not busy.is_set():
            await asyncio.sleep(0.01)
        waiting = asyncio.create_task(call(app, scope(path="/order")))
        await asyncio.sleep(0.1)  # it has been read and queued behind /slow
        freed_at = timezone.now()
        free.set()
        await asyncio.gather(slow, waiting)
        return freed_at

    freed_at = asyncio.run(queued())
    assert seen["stamp"] < freed_at <= seen["ran_at"]


def test_the_arrival_is_stamped_once_the_whole_body_is_in() -> None:
    """A body sent slowly does not date the request from its first bytes."""
    stamps: list[datetime] = []
    last_part_at: list[datetime] = []

    def app_(environ: Environ, start_response: Callable[..., Any]) -> list[bytes]:
        stamps.append(environ[RECEIVED_AT])
        start_response("204 No Content", [])
        return []

    async def slow_body() -> None:
        parts = [b'{"kind":', b'"hold"}']

        async def receive() -> dict[str, Any]:
            if len(parts) == 1:
                await asyncio.sleep(0.05)
                last_part_at.append(timezone.now())
            return {"type": "http.request", "body": parts.pop(0), "more_body": bool(parts)}

        async def send(message: dict[str, Any]) -> None:
            return None

        await ThreadedWsgiHttp(app_, threads=1)(scope("PUT"), receive, send)

    asyncio.run(slow_body())
    assert stamps[0] >= last_part_at[0]


def test_request_received_at_reads_the_stamp_and_is_now_without_one() -> None:
    """Django's test client and other servers give no stamp: the request arrives now."""
    factory = RequestFactory()
    stamp = timezone.now() - timedelta(seconds=3)

    stamped = request_received_at(factory.put("/api/x", **{RECEIVED_AT: stamp}))
    before = timezone.now()
    unstamped = request_received_at(factory.put("/api/x"))

    assert stamped == stamp
    assert before <= unstamped <= timezone.now()


def test_an_order_request_counts_as_waiting_from_its_arrival_until_it_is_answered() -> None:
    """Issue 12: queued behind the busy thread, a PUT to an order endpoint is counted as
    waiting for its tournament (the clock holds the turn for it); once answered, not."""
    from sl5r.serving.waiting_orders import WAITING

    busy, free = threading.Event(), threading.Event()
    far = timezone.now() + timedelta(hours=1)

    def app_(environ: Environ, start_response: Callable[..., Any]) -> list[bytes]:
        if environ["PATH_INFO"] == "/slow":
            busy.set()
            free.wait(timeout=30)
        start_response("204 No Content", [])
        return []

    async def queued() -> tuple[int, int, int]:
        app = ThreadedWsgiHttp(app_, threads=1)
        slow = asyncio.create_task(call(app, scope(path="/slow")))
        while not busy.is_set():
            await asyncio.sleep(0.01)
        order = asyncio.create_task(call(app, scope("PUT", "/api/tournaments/4242/orders/mine")))
        state = asyncio.create_task(call(app, scope("GET", "/api/tournaments/4343/state")))
        while WAITING.local_count(4242, far) == 0 and not order.done():
            await asyncio.sleep(0.01)
        counted = (WAITING.local_count(4242, far), WAITING.local_count(4343, far))
        free.set()
        await asyncio.gather(slow, order, state)
        return (*counted, WAITING.local_count(4242, far))

    assert asyncio.run(queued()) == (1, 0, 0)
