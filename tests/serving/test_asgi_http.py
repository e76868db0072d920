"""HTTP through Django's own ASGI handler (``SL5R_HTTP=django``), with the pool's guarantees.

``sl5r.serving.threaded_http.ArrivalStamped`` gives the stock handler what the thread pool gives its
requests (tests/serving/test_threaded_http.py): the arrival stamped once the whole body is in (R4
judges an order late by it), a possible order counted as waiting until it is answered (the
clocks hold the turn for it), and ``server_loop`` in the threads the request's code runs in.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.asgi import get_asgi_application
from django.db import connection
from django.utils import timezone

from referees.models import Tournament
from sl5r.serving.threaded_http import (
    RECEIVED_AT,
    ArrivalStamped,
    AsgiApp,
    Message,
    Receive,
    Scope,
    Send,
    server_loop,
)
from sl5r.serving.waiting_orders import WAITING
from strategic_map.models import Order
from tests.referees.management import test_clock_serve
from tests.referees.services.test_order_arrival import deadline_set, moves_of, order_scope
from tests.serving.test_threaded_http import scope

BASE_DIR = Path(__file__).resolve().parents[2]

server_env = test_clock_serve.server_env
serve = test_clock_serve.serve


def body_parts(*parts: bytes, gap: float = 0.0) -> Receive:
    """An ASGI ``receive`` that gives ``parts`` as one body, ``gap`` seconds apart."""
    pending = list(parts)

    async def receive() -> Message:
        if not pending:
            await asyncio.sleep(3600)
        if len(pending) < len(parts):
            await asyncio.sleep(gap)
        body = pending.pop(0)
        return {"type": "http.request", "body": body, "more_body": bool(pending)}

    return receive


async def no_send(message: Message) -> None:
    return None


async def read_body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += bytes(message.get("body", b""))
        if not message.get("more_body", False):
            return body


# --- The stamp, the waiting order, the loop ----------------------------------------------


def test_a_request_is_stamped_in_its_scope_once_its_whole_body_is_in() -> None:
    """A body sent slowly does not date the request from its first bytes; the server's own
    scope is left as it was."""
    seen: dict[str, Any] = {}
    server_scope = scope("PUT", "/api/x")

    async def app(request: Scope, receive: Receive, send: Send) -> None:
        seen["unstamped"] = RECEIVED_AT not in request
        await read_body(receive)
        seen["last_part_at"] = timezone.now()
        seen["stamp"] = request[RECEIVED_AT]

    started = timezone.now()
    asyncio.run(ArrivalStamped(app)(server_scope, body_parts(b"{", b"}", gap=0.05), no_send))

    assert seen["unstamped"] is True
    assert started + timedelta(milliseconds=50) <= seen["stamp"] <= seen["last_part_at"]
    assert RECEIVED_AT not in server_scope


def test_an_order_request_counts_as_waiting_from_its_arrival_until_it_is_answered() -> None:
    """A PUT to an order endpoint counts for its tournament while its view works; a read of
    another tournament does not count; once answered, nothing is left."""
    far = timezone.now() + timedelta(hours=1)
    working, answer = threading.Event(), threading.Event()

    async def app(request: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        if request["method"] == "PUT":
            working.set()
            await asyncio.to_thread(answer.wait, 30)

    async def scenario() -> tuple[int, int, int]:
        stamped = ArrivalStamped(app)
        order = asyncio.create_task(
            stamped(scope("PUT", "/api/tournaments/4242/orders/mine"), body_parts(b"{}"), no_send)
        )
        read = asyncio.create_task(
            stamped(scope("GET", "/api/tournaments/4343/state"), body_parts(b""), no_send)
        )
        while not working.is_set():
            await asyncio.sleep(0.01)
        counted = (WAITING.local_count(4242, far), WAITING.local_count(4343, far))
        answer.set()
        await asyncio.gather(order, read)
        return (*counted, WAITING.local_count(4242, far))

    assert asyncio.run(scenario()) == (1, 0, 0)


def test_a_client_gone_before_its_body_is_in_leaves_no_stamp_and_nothing_waiting() -> None:
    far = timezone.now() + timedelta(hours=1)
    seen: dict[str, Any] = {}

    async def disconnect() -> Message:
        return {"type": "http.disconnect"}

    async def app(request: Scope, receive: Receive, send: Send) -> None:
        seen["message"] = (await receive())["type"]
        seen["stamped"] = RECEIVED_AT in request
        seen["waiting"] = WAITING.local_count(4242, far)

    request = scope("PUT", "/api/tournaments/4242/orders/mine")
    asyncio.run(ArrivalStamped(app)(request, disconnect, no_send))

    assert seen == {"message": "http.disconnect", "stamped": False, "waiting": 0}


def test_code_in_a_requests_thread_hands_work_to_the_servers_loop() -> None:
    """``server_loop`` (a broadcast not waited for, referees/live/events.py) works in the threads
    Django's handler runs views in, as in the pool's workers; outside a request it is None."""
    seen: dict[str, Any] = {}

    async def app(request: Scope, receive: Receive, send: Send) -> None:
        await read_body(receive)
        seen["loop"] = asyncio.get_running_loop()
        seen["in_thread"] = await sync_to_async(server_loop)()

    asyncio.run(ArrivalStamped(app)(scope(), body_parts(b""), no_send))

    assert seen["in_thread"] is seen["loop"]
    assert server_loop() is None


def test_only_http_scopes_are_served() -> None:
    async def app(request: Scope, receive: Receive, send: Send) -> None:
        raise AssertionError("not reached")

    with pytest.raises(ValueError, match="http scopes"):
        asyncio.run(ArrivalStamped(app)({"type": "websocket"}, body_parts(b""), no_send))


# --- Through Django's ASGI handler -------------------------------------------------------


def reached_after(moment: datetime, application: AsgiApp) -> AsgiApp:
    """``application`` handed the request's body only after ``moment``: the request waited
    (for the loop, a thread) between reaching the server and its handler starting."""

    async def delayed(request: Scope, receive: Receive, send: Send) -> None:
        async def late_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request" and not message.get("more_body", False):
                await asyncio.sleep(max(0.0, (moment - timezone.now()).total_seconds()))
            return message

        await application(request, late_receive, send)

    return delayed


@pytest.mark.django_db(transaction=True)
def test_an_order_that_arrived_before_the_deadline_is_stored_though_djangos_handler_ran_it_after(
    make_running_tournament: Callable[..., Tournament], monkeypatch: pytest.MonkeyPatch
) -> None:
    """R4 with ``SL5R_HTTP=django``: the order's request is in before the deadline, Django's
    handler gets it only after, and the order is stored dated by its arrival, not refused
    as late; it counted as waiting until it was answered."""
    # given: connections made per request and closed after it, as SL5R_HTTP=django sets
    monkeypatch.setitem(connection.settings_dict, "CONN_MAX_AGE", 0)
    tournament = make_running_tournament(player_count=8, turn_seconds=600)
    move = moves_of(tournament)[0]
    deadline = timezone.now() + timedelta(milliseconds=300)
    deadline_set(tournament.pk, deadline)
    handler_starts = deadline + timedelta(milliseconds=100)
    application = ArrivalStamped(reached_after(handler_starts, get_asgi_application()))
    body = f'{{"kind": "move", "path": ["{move.target}"]}}'.encode()
    request = order_scope(tournament.pk, move.token, body)
    sent: list[Message] = []

    async def send(message: Message) -> None:
        sent.append(message)

    async def scenario() -> tuple[datetime, int, int]:
        order = asyncio.create_task(application(request, body_parts(body), send))
        while WAITING.local_count(tournament.pk, deadline) == 0 and not order.done():
            await asyncio.sleep(0.01)
        arrived_by = timezone.now()
        waiting = WAITING.local_count(tournament.pk, deadline)
        await asyncio.wait_for(order, timeout=30)
        return arrived_by, waiting, WAITING.local_count(tournament.pk, deadline)

    # when
    arrived_by, waiting, waiting_after = asyncio.run(scenario())
    answered_at = timezone.now()

    # then
    status = next(m["status"] for m in sent if m["type"] == "http.response.start")
    body_sent = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert status == 200, body_sent
    assert arrived_by < deadline < handler_starts < answered_at
    stored = Order.objects.get(army__code=move.code)
    assert stored.created_at <= arrived_by
    assert (waiting, waiting_after) == (1, 0)


def test_sl5r_http_picks_what_serves_http_in_the_asgi_application() -> None:
    """``threads``: the pool; ``django``: Django's ASGI handler behind the stamp."""
    env = {k: v for k, v in os.environ.items() if k not in {"SL5R_HTTP", "DATABASE_URL"}}
    probe = (
        "import sl5r.asgi as a; h = a.http; "
        "print(type(h).__name__, type(getattr(h, 'application', None)).__name__)"
    )
    served = {}
    for mode in ("threads", "django"):
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=BASE_DIR,
            env={**env, "DJANGO_SETTINGS_MODULE": "sl5r.settings", "SL5R_HTTP": mode},
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        served[mode] = done.stdout.split()

    assert served == {
        "threads": ["ThreadedWsgiHttp", "NoneType"],
        "django": ["ArrivalStamped", "ASGIHandler"],
    }
