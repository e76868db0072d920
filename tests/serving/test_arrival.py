"""An order's arrival is the kernel's or the balancer's stamp, not a busy loop's (R4, issue 31).

The whole path (a frozen server, an order 150 ms before the deadline) is
tests/venue/test_arrival.py; here, the pieces: the kernel's stamp read from a socket, which
stamp a request gets, and who may hand in a balancer's stamp.
"""

from __future__ import annotations

import asyncio
import socket
import time
from datetime import datetime, timedelta, timezone
from typing import Any

from sl5r.serving.arrival import (
    BALANCER_RECEIVED_AT,
    BalancerStamped,
    ancillary_stamp,
    arrival_forget,
    arrival_note,
    request_arrival,
    stamps_enable,
)

NOW = datetime(2026, 12, 6, 12, 0, 0, tzinfo=timezone.utc)


def test_the_kernel_stamps_the_bytes_when_they_arrive_not_when_they_are_read() -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        connection, _ = server.accept()
        with client, connection:
            assert stamps_enable(connection)
            before = time.time()
            client.sendall(b"PUT /api/tournaments/1/orders/mine")
            # The bytes wait while the "loop" is elsewhere: the stamp is still their arrival.
            connection.settimeout(5)
            data, ancillary, _, _ = connection.recvmsg(4096, socket.CMSG_SPACE(16))
            read = time.time()

    stamp = ancillary_stamp(ancillary)
    assert data.startswith(b"PUT")
    assert stamp is not None
    assert before - 0.01 <= stamp <= read


def test_a_request_gets_the_kernel_stamp_of_its_clients_last_read() -> None:
    client = ("192.0.2.7", 50123)
    arrival_note(client, NOW.timestamp() - 0.24)
    try:
        arrived = request_arrival({"client": list(client)}, now=NOW)
    finally:
        arrival_forget(client)

    assert arrived == NOW - timedelta(seconds=0.24)


def test_without_a_stamp_or_with_an_untrustworthy_one_the_loops_moment_stands() -> None:
    client = ("192.0.2.7", 50124)
    assert request_arrival({"client": list(client)}, now=NOW) == NOW
    for stamp in (NOW.timestamp() + 5, NOW.timestamp() - 3600):  # the future; another request
        arrival_note(client, stamp)
        assert request_arrival({"client": list(client)}, now=NOW) == NOW
    arrival_forget(client)


def passed_on(middleware: BalancerStamped, scope: dict[str, Any]) -> dict[str, Any]:
    seen: dict[str, Any] = {}

    async def application(scope: dict[str, Any], receive: Any, send: Any) -> None:
        seen.update(scope)

    middleware.application = application
    asyncio.run(middleware(scope, None, None))
    return seen


def order_scope(peer: str, stamp: str) -> dict[str, Any]:
    return {
        "type": "http",
        "client": [peer, 40000],
        "headers": [(b"x-sl5r-received-at", stamp.encode()), (b"accept", b"*/*")],
    }


def test_the_balancers_stamp_is_taken_from_a_trusted_proxy_only() -> None:
    stamp = NOW - timedelta(seconds=0.2)
    micros = str(int(stamp.timestamp() * 1_000_000))
    middleware = BalancerStamped(None, trusted=["10.0.0.0/24"])

    trusted = passed_on(middleware, order_scope("10.0.0.10", micros))
    forged = passed_on(middleware, order_scope("198.51.100.9", micros))

    assert request_arrival(trusted, now=NOW) == stamp
    assert BALANCER_RECEIVED_AT not in forged
    assert request_arrival(forged, now=NOW) == NOW
    # Nobody behind the middleware sees the header, trusted or not.
    for scope in (trusted, forged):
        assert [name for name, _ in scope["headers"]] == [b"accept"]


def test_a_balancer_stamp_that_is_not_a_number_is_ignored() -> None:
    middleware = BalancerStamped(None, trusted=["*"])

    scope = passed_on(middleware, order_scope("10.0.0.10", "soon"))

    assert request_arrival(scope, now=NOW) == NOW
