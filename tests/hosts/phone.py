"""The phones of the several-machines stories: run on the phones' host, told what to do.

``python -m tests.hosts.phone URL CA`` reads one JSON command a line on standard input and
answers each with one JSON line (``{"id": …, …}``) on standard output, while the pages it
opened stay live in the background. ``URL`` is the site (``https://referee.example.org``,
its name resolved by the host's own /etc/hosts), ``CA`` the certificate to trust.

A page behaves as ``static/js/live.js``: a websocket to ``/ws/tournaments/<id>/``, a ping
(at most every ``PING`` seconds) once the server's own pongs (every ``HEARTBEAT`` seconds)
are a second late, the socket dropped when nothing came for ``STALE`` seconds, reopened
after 1, 2, 4, 8 then 15 s, the state taken from an event or fetched over HTTP
(after a ``hello``, an event without it, a pong naming a newer version), a fetch given up
after 10 s. Every frame is read through the table of the server's messages
(``static/js/live_messages.json``, ``tests.hosts.live_messages``), as live.js reads it: a
pong's ``version`` is null while the database does not answer. A phone sends an order as the
page does, and sends it again while the answer is "the site is restarting" (503) or the
connection failed, as its General would.

Nothing a page does fails in silence: a page's task that dies (an exception in it, a frame
that is not one of the table's messages) is recorded, and from then on every command is
answered with the failure (``{"error": …}``), so that the story stops there and says why.

Commands: ``pages_open`` (open one page per token and wait for their hellos), ``orders`` (each
order sent at its own time, the answers), ``request`` (one request), ``wait_version`` (until
every page has a state at least that new), ``wait_event`` (until some pages had one),
``pages_report`` (what each page went through).
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import httpx
from websockets.asyncio.client import connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake
from websockets.typing import Origin

from tests.hosts.live_messages import UnfitMessage, message_read

BACKOFF = (1.0, 2.0, 4.0, 8.0, 15.0)
PING = 4.0
HEARTBEAT = 4.0  # live.js HEARTBEAT_MS: the server's own pongs
STALE = 12.0
CHECK = 1.0
CATCH_UP = 1.0
FETCH_TIMEOUT = 10.0
RESEND = 0.5  # a General taps "send" again about this often while the site is restarting


class PageFailed(Exception):
    """What killed a page's task, reported to every command."""


def phase_of(tournament: dict[str, Any]) -> str | None:
    """The tournament's phase as a state says it (its clock's)."""
    phase = (tournament.get("clock") or {}).get("phase")
    return str(phase) if phase else None


@dataclass
class Page:
    tournament: int
    token: str
    version: int = -1
    hellos: list[float] = field(default_factory=list)
    closes: list[float] = field(default_factory=list)
    versions: list[tuple[float, int]] = field(default_factory=list)  # (when, state version)
    events: list[tuple[float, int, str]] = field(default_factory=list)  # (when, version, kind)
    fetch_failures: int = 0
    pongs_without_version: int = 0  # the server could not read its version (database away)
    heard: int = -1  # the newest version the server named
    phase: str = ""  # the tournament's, in the state last shown
    fetching: bool = False

    def show(self, version: int, phase: str | None = None) -> None:
        if phase:
            self.phase = phase
        if version > self.version:
            self.version = version
            self.versions.append((time.time(), version))

    def report(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "phase": self.phase,
            "hellos": self.hellos,
            "closes": self.closes,
            "versions": self.versions,
            "events": self.events,
            "fetch_failures": self.fetch_failures,
            "pongs_without_version": self.pongs_without_version,
        }


class Phones:
    def __init__(self, url: str, ca: str) -> None:
        self.url = url.rstrip("/")
        self.context = ssl.create_default_context(cafile=ca)
        self.pages: list[Page] = []
        self.tasks: set[asyncio.Task[Any]] = set()
        self.news = asyncio.Event()  # set whenever a page records something (``until``)
        self.failures: list[str] = []  # what killed a page's task, or a frame it could not read

    def failed(self, what: str) -> None:
        self.failures.append(what)
        self.news.set()

    def failure_raise(self) -> None:
        """A page's task has died: every command fails with it from then on."""
        if self.failures:
            raise PageFailed("\n".join(self.failures))

    def client(self, source: str | None = None) -> httpx.AsyncClient:
        """A phone's connection; ``source``: the phone's address, when the host has several."""
        transport = httpx.AsyncHTTPTransport(verify=self.context, local_address=source)
        return httpx.AsyncClient(base_url=self.url, transport=transport, timeout=30.0)

    # --- pages ---------------------------------------------------------------------------

    async def page_run(self, page: Page) -> None:
        host = urlsplit(self.url).netloc
        address = f"wss://{host}/ws/tournaments/{page.tournament}/?token={page.token}"
        failures = 0
        async with self.client() as http:
            while True:
                try:
                    async with connect(
                        address, origin=Origin(self.url), ssl=self.context, ping_interval=None,
                        open_timeout=10, max_size=None, proxy=None,
                    ) as socket:  # fmt: skip
                        failures = 0
                        await self.follow(page, socket, http)
                except (OSError, InvalidHandshake, ConnectionClosed, TimeoutError):
                    pass
                page.closes.append(time.time())
                self.news.set()
                await asyncio.sleep(BACKOFF[min(failures, len(BACKOFF) - 1)])
                failures += 1

    async def follow(self, page: Page, socket: Any, http: httpx.AsyncClient) -> None:
        heard = time.monotonic()

        async def pinger() -> None:
            pinged = time.monotonic()
            while True:
                await asyncio.sleep(CHECK)
                if time.monotonic() - heard > STALE:
                    # live.js's watchdog: the socket is dropped at once (no closing
                    # handshake to wait for) and another opened.
                    socket.transport.abort()
                    return
                # live.js pings only when the server's own pongs (every HEARTBEAT) stop.
                silent = time.monotonic() - heard >= HEARTBEAT + 1.0
                if silent and time.monotonic() - pinged >= PING:
                    pinged = time.monotonic()
                    try:
                        await socket.send('{"type":"ping"}')
                    except ConnectionClosed:
                        return  # the reading loop ends too

        ping_task = self.spawn(pinger(), f"the pinger of page {page.token[:8]}")
        try:
            async for raw in socket:
                heard = time.monotonic()
                try:
                    message = message_read(raw)
                except UnfitMessage as error:
                    # live.js warns and goes on; here it is the story's failure.
                    self.failed(f"page {page.token[:8]} got a frame it cannot read: {error}")
                    continue
                self.on_message(page, message, http)
                self.news.set()
        finally:
            ping_task.cancel()

    def on_message(self, page: Page, message: dict[str, Any], http: httpx.AsyncClient) -> None:
        """live.js's onMessage, given a message of the table (``message_read``): the state
        an event carries is taken as it is, a pong vouching for the state it holds
        (``since``) moves the version on, a pong naming a newer version without it is given a
        second to be followed by its event (one without a version says nothing), anything
        else fetches."""
        kind = message["type"]
        version = message["version"]
        if kind == "hello":
            page.hellos.append(time.time())
            page.heard = version
            self.refresh(page, http)
        elif kind == "pong":
            if version is None:
                page.pongs_without_version += 1
            elif message["since"] is not None and message["since"] <= page.version:
                if version > page.version and not page.fetching:
                    page.show(version)
            elif version > page.version:
                page.heard = max(page.heard, version)
                self.later(CATCH_UP, page, http)
        elif kind == "event" and version > page.version:
            page.events.append((time.time(), version, message["kind"]))
            page.heard = max(page.heard, version)
            state = message["state"] or {}
            if state.get("tournament", {}).get("version", -1) >= page.version:
                page.show(int(state["tournament"]["version"]), phase_of(state["tournament"]))
                if page.version >= page.heard:
                    return
            self.refresh(page, http)
        elif kind == "event":
            page.events.append((time.time(), version, message["kind"]))

    def later(self, seconds: float, page: Page, http: httpx.AsyncClient) -> None:
        async def run() -> None:
            await asyncio.sleep(seconds)
            if page.version < page.heard:
                self.refresh(page, http)

        self.spawn(run(), f"the catch-up of page {page.token[:8]}")

    def spawn(self, coroutine: Any, what: str) -> asyncio.Task[Any]:
        """``coroutine`` run for a page; if it dies of an exception, that is recorded."""
        task = asyncio.create_task(coroutine)
        self.tasks.add(task)

        def ended(task: asyncio.Task[Any]) -> None:
            self.tasks.discard(task)
            if not task.cancelled() and task.exception() is not None:
                error = task.exception()
                told = "".join(traceback.format_exception(error)).rstrip()
                self.failed(f"{what} died: {told}")

        task.add_done_callback(ended)
        return task

    def refresh(self, page: Page, http: httpx.AsyncClient) -> None:
        """One fetch in flight at most, given up after ``FETCH_TIMEOUT`` (live.js)."""
        if not page.fetching:
            page.fetching = True
            self.spawn(self.fetch(page, http), f"a state fetch of page {page.token[:8]}")

    async def fetch(self, page: Page, http: httpx.AsyncClient) -> None:
        try:
            response = await http.get(
                f"/api/tournaments/{page.tournament}/state",
                headers={"Authorization": f"Bearer {page.token}", "Accept": "application/json"},
                timeout=FETCH_TIMEOUT,
            )
            if response.status_code == 200:
                shown = response.json()["tournament"]
                page.show(int(shown["version"]), phase_of(shown))
            else:
                page.fetch_failures += 1
        except httpx.TransportError:  # a timeout too
            page.fetch_failures += 1
        finally:
            page.fetching = False
            self.news.set()

    async def pages_open(
        self, *, tournament: int, tokens: list[str], within: float
    ) -> dict[str, Any]:
        new = [Page(tournament, token) for token in tokens]
        self.pages += new
        for page in new:
            self.spawn(self.page_run(page), f"page {page.token[:8]}")
        await self.until(lambda: all(page.hellos and page.version >= 0 for page in new), within)
        return {"opened": sum(1 for page in new if page.hellos and page.version >= 0)}

    async def wait_version(self, *, version: int, within: float) -> dict[str, Any]:
        await self.until(lambda: all(page.version >= version for page in self.pages), within)
        return self.pages_report()

    async def wait_phase(self, *, phase: str, within: float) -> dict[str, Any]:
        """Until every page shows the tournament in ``phase`` (a one-turn game's "finished":
        its turn is resolved)."""
        await self.until(lambda: all(page.phase == phase for page in self.pages), within)
        return self.pages_report()

    async def wait_event(self, *, tokens: list[str], kind: str, within: float) -> dict[str, Any]:
        """Until the pages of ``tokens`` have each had an event of ``kind``."""
        await self.until(
            lambda: all(
                any(k == kind for _, _, k in page.events)
                for page in self.pages
                if page.token in tokens
            ),
            within,
        )
        return self.pages_report()

    async def until(self, done: Callable[[], bool], within: float) -> None:
        """Until ``done()`` or ``within`` seconds, or a page's task failed: woken by each
        thing a page records."""
        end = time.monotonic() + within
        while not done() and not self.failures:
            self.news.clear()
            left = end - time.monotonic()
            if left <= 0:
                return
            try:
                await asyncio.wait_for(self.news.wait(), left)
            except asyncio.TimeoutError:
                return

    def pages_report(self) -> dict[str, Any]:
        return {"pages": [page.report() for page in self.pages]}

    # --- requests ------------------------------------------------------------------------

    async def request(
        self, *, method: str, path: str, token: str | None = None, body: Any = None,
        headers: dict[str, str] | None = None, repeat: int = 1, source: str | None = None,
    ) -> dict[str, Any]:  # fmt: skip
        sent = {"Accept": "application/json", **(headers or {})}
        if token:
            sent["Authorization"] = f"Bearer {token}"
        answers = []
        async with self.client(source) as http:
            for _ in range(repeat):
                response = await http.request(method, path, headers=sent, json=body)
                try:
                    content: Any = response.json()
                except ValueError:
                    content = response.text[:300]
                answers.append({"status": response.status_code, "body": content})
        return {"answers": answers}

    async def order_send(self, order: dict[str, Any], until: float) -> dict[str, Any]:
        """One General's order at its time, sent again while the site cannot take it."""
        await asyncio.sleep(max(0.0, order["at"] - time.time()))
        attempts: list[Any] = []
        async with self.client() as http:
            while True:
                sent_at = time.time()
                try:
                    response = await http.put(
                        f"/api/tournaments/{order['tournament']}/orders/mine",
                        json=order["body"],
                        headers={"Authorization": f"Bearer {order['token']}",
                                 "Accept": "application/json"},
                    )  # fmt: skip
                    status, answer = response.status_code, response.json()
                except (httpx.TransportError, ValueError) as error:
                    status, answer = 0, repr(error)
                attempts.append([sent_at, time.time(), status])
                retry = status == 0 or (status == 503 and isinstance(answer, dict))
                if not retry or time.time() + RESEND > until:
                    return {"army": order["army"], "status": status, "answer": answer,
                            "attempts": attempts}  # fmt: skip
                await asyncio.sleep(RESEND)

    async def orders(self, *, orders: list[dict[str, Any]], until: float) -> dict[str, Any]:
        sent = await asyncio.gather(*(self.order_send(order, until) for order in orders))
        return {"orders": list(sent)}


async def serve(phones: Phones) -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    running: set[asyncio.Task[None]] = set()

    async def answer(command: dict[str, Any]) -> None:
        ident = command.pop("id")
        op = command.pop("op")
        try:
            phones.failure_raise()
            if op == "pages_report":
                result: dict[str, Any] = phones.pages_report()
            else:
                result = await getattr(phones, op)(**command)
            phones.failure_raise()
        except PageFailed as error:
            result = {"error": f"a page of the phones failed:\n{error}"}
        except Exception as error:  # the test reads the failure, the phone goes on
            result = {"error": repr(error)}
        sys.stdout.write(json.dumps({"id": ident, **result}) + "\n")
        sys.stdout.flush()

    while line := await reader.readline():
        task = asyncio.create_task(answer(json.loads(line)))
        running.add(task)
        task.add_done_callback(running.discard)


def main(argv: list[str]) -> int:
    asyncio.run(serve(Phones(argv[0], argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
