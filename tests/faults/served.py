"""The site as users meet it, for the service fault tests: servers, a Redis, pages, requests.

- ``Site``: one ``manage.py serve`` (Daphne, and the in-process clock unless the clock is
  Celery's) as a subprocess on this test's database, stopped with SIGTERM as a service
  manager stops it, behind HAProxy with the cluster's configuration
  (``deploy/haproxy/haproxy.cfg``), which stays up while the server restarts: the phones
  and pages talk to the balancer, as in production;
- ``RedisServer``: a ``redis-server`` of the test's own on a free port, without persistence
  (``--save ""``), that the test may kill and start again; never the shared one;
- ``call``: one HTTP request as a phone sends it (a bearer join token, a JSON body), timed;
- ``LivePage``: what ``static/js/live.js`` does for a page, on a background event loop: a
  websocket that is reopened after 1, 2, 4, 8, then every 15 s when it closes, and the
  state fetched over HTTP after every ``hello`` that differs from it (or follows a
  reconnect) and after every event newer than it;
- ``Play``: the scenario of ``tests.faults.scenario`` given over HTTP by the Generals,
  recording which orders were acknowledged and each turn's progress as the reference does;
  each turn held open until its orders are in, then its time left set by the judge;
- ``moment_wait``: until a moment of the scenario (a deadline passed by so much), which no
  event announces.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import resource
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from django.utils import timezone

from referees.services import Actor
from sl5r.cluster import BALANCER_SOURCE, HAPROXY_CONF, balancer_maxconn
from strategic_map.models import Order
from tests.faults.scenario import (
    OrderStep,
    Progress,
    turn_progress,
)
from tests.judge_clock import time_left_seconds, time_left_set
from tests.live_clients import WebSocket, http_client
from tests.referees.celery_processes import Service
from tests.referees.management.test_clock_serve import free_port, wait_until
from tests.service_checks import require_service

HOST = "127.0.0.1"
SERVE_READY = "Serving SL5R Referee"
# live.js: the delays before reopening a closed socket, the last one repeated.
BACKOFF_SECONDS = (1.0, 2.0, 4.0, 8.0, 15.0)
REQUEST_TIMEOUT = 30.0
BALANCER_READY_SECONDS = 30.0
BALANCER_RETRIES, BALANCER_RETRY_SECONDS = 20, 0.5
POLL_SECONDS = 0.05


class Balancer:
    """HAProxy with the cluster's configuration in front of one server port.

    Both of the configuration's servers are that one process (a fault test runs one), so
    a request that finds it gone is retried against it and then answered 503 by HAProxy;
    its health checks take it out and put it back, as they would one of two.
    """

    def __init__(self, server_port: int, folder: Path, *, name: str) -> None:
        require_service("haproxy", None if shutil.which("haproxy") else "haproxy is not installed")
        self.port = free_port()
        server = f"{HOST}:{server_port}"
        env = {
            **os.environ,
            "SL5R_BALANCER_BIND": f"{HOST}:{self.port}",
            "SL5R_ASGI_1": server,
            "SL5R_ASGI_2": server,
            "SL5R_BALANCER_SOURCE": BALANCER_SOURCE,
            # What make cluster gives it: the file's 16,000 may be more than this machine's
            # file limit lets HAProxy open (it then refuses to start).
            "SL5R_BALANCER_MAXCONN": str(
                balancer_maxconn(resource.getrlimit(resource.RLIMIT_NOFILE)[1])
            ),
        }
        argv = ["haproxy", "-db", "-f", str(HAPROXY_CONF)]
        self.service = Service(f"{name} balancer", argv, env, folder / f"{name}-balancer.log")
        if not wait_until(self._serving, BALANCER_READY_SECONDS):
            pytest.fail(f"HAProxy did not serve:\n{self.service.tail()}", pytrace=False)

    def _serving(self) -> bool:
        try:
            return call(self.port, "GET", "/healthz", timeout=5).status == 200
        except OSError:
            return False

    def close(self) -> None:
        self.service.stop()


class Site:
    """``manage.py serve`` on a port of its own behind a ``Balancer`` on ``port``;
    ``start`` again after ``stop`` restarts the server (the balancer stays up)."""

    def __init__(self, env: dict[str, str], folder: Path, *, name: str = "serve") -> None:
        # The client's address is taken from the balancer's X-Forwarded-For, as in the
        # cluster (sl5r/cluster.py): rate limits count per client.
        self.env = {**env, "SL5R_TRUSTED_PROXIES": BALANCER_SOURCE}
        self.folder = folder
        self.name = name
        self.server_port = free_port()
        self.runs = 0
        self.service: Service | None = None
        self.balancer: Balancer | None = None

    @property
    def port(self) -> int:
        """Where the phones and pages connect: the balancer."""
        assert self.balancer is not None, "not started"
        return self.balancer.port

    def start(self) -> Site:
        self.runs += 1
        argv = [sys.executable, "manage.py", "serve", "--host", HOST]
        argv += ["--port", str(self.server_port)]
        log = self.folder / f"{self.name}-{self.runs}.log"
        self.service = Service(f"{self.name} (run {self.runs})", argv, self.env, log)
        self.service.wait_for(SERVE_READY)
        if self.balancer is None:
            self.balancer = Balancer(self.server_port, self.folder, name=self.name)
        return self

    def stop(self) -> int:
        """SIGTERM, as systemd or a container runtime stops it; the exit status."""
        service = self.service
        assert service is not None and service.process.poll() is None, "not running"
        service.stop()
        return service.process.returncode

    def output(self) -> str:
        """What every run printed so far."""
        logs = sorted(self.folder.glob(f"{self.name}-*.log"))
        return "\n".join(log.read_text(encoding="utf-8", errors="replace") for log in logs)

    def tail(self) -> str:
        return self.service.tail() if self.service is not None else ""

    def close(self) -> None:
        if self.service is not None:
            self.service.stop()
        if self.balancer is not None:
            self.balancer.close()


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str]
    seconds: float

    def json(self) -> Any:
        return json.loads(self.body)


def call(
    port: int,
    method: str,
    path: str,
    *,
    token: str | None = None,
    body: Any = None,
    headers: dict[str, str] | None = None,
    timeout: float = REQUEST_TIMEOUT,
) -> Reply:
    """One request on a connection of its own, timed from sending to the whole answer."""
    sent_headers = {"Accept": "application/json", **(headers or {})}
    if token is not None:
        sent_headers["Authorization"] = f"Bearer {token}"
    payload = None
    if body is not None:
        payload = json.dumps(body).encode()
        sent_headers["Content-Type"] = "application/json"
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    started = time.perf_counter()
    try:
        connection.request(method, path, body=payload, headers=sent_headers)
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    return Reply(
        response.status,
        data,
        {k.lower(): v for k, v in response.getheaders()},
        time.perf_counter() - started,
    )


class RedisServer:
    """A ``redis-server`` of the test's own: no snapshot, no append-only file."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def url(self, db: int = 0) -> str:
        return f"redis://{HOST}:{self.port}/{db}"

    def start(self) -> RedisServer:
        self.starts += 1
        log = (self.folder / f"redis-{self.starts}.log").open("wb")
        self.process = subprocess.Popen(
            [
                "/usr/bin/redis-server",
                "--port",
                str(self.port),
                "--bind",
                HOST,
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.folder),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        if not wait_until(self.answers, timeout=15):
            pytest.fail(f"redis-server on port {self.port} did not answer", pytrace=False)
        return self

    def answers(self) -> bool:
        client = redis.Redis(host=HOST, port=self.port, socket_connect_timeout=1)
        try:
            return bool(client.ping())
        except redis.RedisError:
            return False
        finally:
            client.close()

    def kill(self) -> None:
        """SIGKILL: gone at once, with everything it held (queued tasks, group members)."""
        process = self.process
        if process is not None and process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=15)
        self.process = None


class EventLoop:
    """An asyncio loop in a daemon thread, for the pages' sockets beside a synchronous test."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="pages", daemon=True)
        self.thread.start()

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float = REQUEST_TIMEOUT) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        async def cancel_all() -> None:
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        self.run(cancel_all())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout=15)
        self.loop.close()


@dataclass
class LivePage:
    """One page kept live as ``static/js/live.js`` keeps it; everything it saw is recorded."""

    port: int
    tournament_id: int
    token: str | None = None
    version: int = -1  # of the state last fetched or received
    heard: int = 0  # the newest version announced
    opened: int = 0  # sockets that said hello
    closes: list[float] = field(default_factory=list)  # when a socket closed (monotonic)
    hellos: list[int] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)
    events_on_socket: int = 0  # events that came on the socket opened last
    fetched: list[int] = field(default_factory=list)  # versions of the states fetched
    fetch_failures: int = 0
    task: Future[None] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def path(self) -> str:
        query = f"?token={self.token}" if self.token else ""
        return f"/ws/tournaments/{self.tournament_id}/{query}"

    async def run(self) -> None:
        """Until cancelled: connect, follow the events, reconnect with live.js's backoff."""
        async with http_client(self.port) as http:
            await self._follow(http)

    async def _follow(self, http: httpx.AsyncClient) -> None:
        failures = 0
        connected_before = False
        while True:
            try:
                socket = await WebSocket.connect(self.port, self.path)
            except OSError:  # refused, or the handshake answered otherwise (ConnectionError)
                socket = None
            if socket is not None:
                try:
                    while (message := await socket.receive()) is not None:
                        if message.get("type") == "hello":
                            failures = 0
                            with self._lock:
                                self.opened += 1
                                self.events_on_socket = 0
                                self.hellos.append(message["version"])
                            self.heard = message["version"]
                            if message["version"] != self.version or connected_before:
                                await self.refresh(http)
                            connected_before = True
                        elif message.get("type") == "event":
                            with self._lock:
                                self.events.append(message)
                                self.events_on_socket += 1
                            if message["version"] > self.version:
                                self.heard = max(self.heard, message["version"])
                                await self.refresh(http)
                finally:
                    # No await here: this also runs when the page is cancelled.
                    socket.drop()
                with self._lock:
                    self.closes.append(time.monotonic())
            await asyncio.sleep(BACKOFF_SECONDS[min(failures, len(BACKOFF_SECONDS) - 1)])
            failures += 1

    async def refresh(self, http: httpx.AsyncClient) -> None:
        """GET the state as the page does (its token, if any); a failure waits for later."""
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        try:
            response = await http.get(
                f"/api/tournaments/{self.tournament_id}/state", headers=headers
            )
            status, body = response.status_code, response.content
        except httpx.TransportError:  # httpx opens a new connection for the next one
            status, body = 0, b""
        if status != 200:
            with self._lock:
                self.fetch_failures += 1
            return
        version = int(json.loads(body)["tournament"]["version"])
        with self._lock:
            self.fetched.append(version)
            self.version = max(self.version, version)

    def seen(self, condition: Callable[[LivePage], bool]) -> bool:
        with self._lock:
            return condition(self)


def pages_open(
    loop: EventLoop, port: int, tournament_id: int, tokens: list[str | None]
) -> list[LivePage]:
    """One page per token (None: the public), running on ``loop`` until it closes."""
    pages = [LivePage(port, tournament_id, token) for token in tokens]
    for page in pages:
        # The loop keeps only a weak reference to a task: the page holds it.
        page.task = asyncio.run_coroutine_threadsafe(page.run(), loop.loop)
    return pages


class Play:
    """The scenario of ``tests.faults.scenario`` played over HTTP by the Generals' phones.

    Orders are sent with each General's bearer join token (``DELETE`` for a withdrawal);
    each one answered 2xx is recorded as acknowledged, with the id of the order row whose
    ``given_at`` the answer names. The turns are followed in the database, one snapshot per
    read (``turn_progress``), as the scenario's reference records them.

    The tournament's turns are held open (``scenario.HELD_TURN_SECONDS``): once a turn's
    orders are in, ``time_left_set`` has the judge (``judge``: his API key; ``actor``: how the
    log names him) set its time left, and the clock resolves it at that deadline.
    """

    def __init__(
        self,
        tournament_id: int,
        tokens: dict[str, str],
        *,
        port: int,
        judge: str,
        actor: Actor,
    ) -> None:
        self.tournament_id = tournament_id
        self.tokens = tokens
        self.port = port
        self.judge = judge
        self.actor = actor
        self.acknowledged: dict[int, list[int]] = {}
        self.progress: dict[int, Progress] = {}
        self.clock_settings = 0  # the judge's, one a turn

    def _sent(self, method: str, path: str, token: str, body: Any = None) -> Reply:
        reply = call(self.port, method, path, token=token, body=body)
        # Just after a restart the balancer may not have put the server back in yet (its
        # next health check, at most half a second later): it answers 503 "unavailable"
        # and the request is sent again, as the page tells its user to.
        for _ in range(BALANCER_RETRIES):
            if reply.status != 503 or b'"unavailable"' not in reply.body:
                break
            time.sleep(BALANCER_RETRY_SECONDS)
            reply = call(self.port, method, path, token=token, body=body)
        return reply

    def send(self, turn: int, step: OrderStep) -> Reply:
        """One General's order for ``turn``, as his phone sends it; the answer, unchecked."""
        path = f"/api/tournaments/{self.tournament_id}/orders/mine"
        body = step.api_body(turn)
        method = "DELETE" if body is None else "PUT"
        return self._sent(method, path, self.tokens[step.army], body)

    def time_left_set(self, turn: int, seconds: float) -> Reply:
        """The judge gives the open turn ``turn`` about ``seconds`` left, as at his console
        (``POST …/clock/extend`` by the difference); the answer, 200."""
        progress = turn_progress(self.tournament_id)
        assert (progress.resolved, progress.open_turn) == (turn - 1, turn), progress
        assert progress.deadline is not None, progress
        asked = time_left_seconds(progress.deadline, seconds, timezone.now())
        path = f"/api/tournaments/{self.tournament_id}/clock/extend"
        reply = self._sent("POST", path, self.judge, {"seconds": asked})
        assert reply.status == 200, f"turn {turn}: time left: {reply.status} {reply.body!r}"
        self.clock_settings += 1
        return reply

    def time_left_set_directly(self, turn: int, seconds: float) -> datetime:
        """``time_left_set`` through the judge's service in this process, for when no server
        could take the judge's request (stopped, or its database refusing it); the deadline."""
        deadline = time_left_set(self.tournament_id, turn=turn, seconds=seconds, actor=self.actor)
        self.clock_settings += 1
        return deadline

    def give(self, turn: int, steps: Sequence[OrderStep]) -> list[Reply]:
        """Send ``steps`` one after the other; each must be acknowledged (2xx)."""
        replies = []
        for step in steps:
            reply = self.send(turn, step)
            assert 200 <= reply.status < 300, f"turn {turn}: {step}: {reply.status} {reply.body!r}"
            self.acknowledged.setdefault(turn, []).append(self._stored_id(turn, step, reply))
            replies.append(reply)
        return replies

    def _stored_id(self, turn: int, step: OrderStep, reply: Reply) -> int:
        answer = reply.json()
        assert (answer["army"], answer["turn"]) == (step.army, turn), answer
        # The API's JSON gives the time to the millisecond.
        given_at = datetime.fromisoformat(answer["given_at"].replace("Z", "+00:00"))
        ids = list(
            Order.objects.filter(
                turn__campaign__tournament=self.tournament_id,
                turn__number=turn,
                army__code=step.army,
                created_at__gte=given_at,
                created_at__lt=given_at + timedelta(milliseconds=1),
            ).values_list("pk", flat=True)
        )
        assert len(ids) == 1, f"turn {turn}: {step} acknowledged, stored as {ids}"
        return int(ids[0])

    def wait(self, what: str, done: Callable[[Progress], bool], timeout: float) -> Progress:
        end = time.monotonic() + timeout
        while True:
            progress = turn_progress(self.tournament_id)
            if done(progress):
                return progress
            if time.monotonic() > end:
                pytest.fail(f"waited {timeout:g} s for {what}: {progress}", pytrace=False)
            time.sleep(POLL_SECONDS)

    def wait_open(self, turn: int, timeout: float) -> Progress:
        """Wait until ``turn`` is open; it is held open, so it cannot end unseen."""
        progress = self.wait(
            f"turn {turn} to open",
            lambda p: p.resolved >= turn or (p.open_turn or 0) >= turn,
            timeout,
        )
        assert (progress.resolved, progress.open_turn) == (turn - 1, turn), (
            f"turn {turn} was not seen open: {progress}"
        )
        return progress

    def wait_resolved(self, turn: int, timeout: float) -> Progress:
        """Wait until ``turn`` is resolved; the snapshot then is the turn's recorded progress.

        Read before the next turn's orders are given, as the reference reads it.
        """
        progress = self.wait(f"turn {turn} to be resolved", lambda p: p.resolved >= turn, timeout)
        assert progress.resolved == turn, f"turn {turn}: more turns resolved: {progress}"
        self.progress[turn] = progress
        return progress


def moment_wait(moment: datetime) -> None:
    """Until the wall clock reads ``moment``: a deadline passed by so much is a moment, not
    an event, so there is nothing to await; one sleep to it (the loop only guards an early
    wake)."""
    while (left := (moment - timezone.now()).total_seconds()) > 0:
        time.sleep(left)
