"""deploy/haproxy/haproxy.cfg run by a real HAProxy in front of stub processes on loopback.

Each stub stands for an ASGI process: it answers ``/healthz`` (as slowly, or with the status,
a test says), holds ``/slow`` until the test lets it go, accepts websockets and keeps them
open, and records what reached it. The balancer's view (each server up or down, its last
check, the queue) is read from its stats socket, added by a second configuration file, and
polled until a deadline: the tests wait for what HAProxy reports, not for a time.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import http.client
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from sl5r.cluster import HAPROXY_CONF
from tests.referees.management.test_clock_serve import wait_until
from tests.service_checks import require_service

pytestmark = [pytest.mark.slow]

HOST = "127.0.0.1"
# Far beyond each wait's expected time (HAProxy's checks: every 3 s, then every second),
# so that a busy machine does not fail a test that would pass.
WAIT_SECONDS = 30.0
WEBSOCKET_GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def stats_command(path: Path, line: str) -> str:
    """One command on HAProxy's stats socket at ``path``, and its whole answer."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(5)
        sock.connect(str(path))
        sock.sendall(line.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def stats_info(path: Path) -> dict[str, str]:
    """``show info``: Maxconn, Ulimit-n…; empty while HAProxy does not answer."""
    try:
        lines = stats_command(path, "show info").splitlines()
    except OSError:
        return {}
    return dict(line.split(": ", 1) for line in lines if ": " in line)


class Stub(ThreadingHTTPServer):
    """An ASGI process as the balancer sees it."""

    daemon_threads = True

    def __init__(self, name: str, *, health_delay: float = 0.0, health_status: int = 200):
        self.name = name
        self.health_delay = health_delay
        self.health_status = health_status
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.changed = threading.Condition()
        self.slow_release = threading.Event()
        self.stopping = threading.Event()
        super().__init__((HOST, 0), StubHandler)
        self.port = int(self.server_address[1])
        self.thread = threading.Thread(target=self.serve_forever, daemon=True)
        self.thread.start()

    @property
    def address(self) -> str:
        return f"{HOST}:{self.port}"

    def record(self, method: str, path: str, headers: dict[str, str]) -> None:
        # HAProxy sends header names in lower case.
        with self.changed:
            self.requests.append((method, path, {k.lower(): v for k, v in headers.items()}))
            self.changed.notify_all()

    def seen(self, method: str, path: str) -> list[dict[str, str]]:
        with self.changed:
            return [h for m, p, h in self.requests if m == method and p.startswith(path)]

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a check or a socket the balancer closed as the test ended

    def stop(self) -> None:
        self.stopping.set()
        self.slow_release.set()
        self.shutdown()
        self.server_close()


class StubHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: Stub

    def log_message(self, format: str, *args: object) -> None:
        pass  # the balancer's log says what a failing test needs

    def _answer(self, status: int, body: dict[str, object]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        stub = self.server
        if self.path == "/healthz":
            # A busy process: the answer comes, late.
            stub.stopping.wait(stub.health_delay)
            self._answer(stub.health_status, {"status": "ok"})
            return
        stub.record("GET", self.path, dict(self.headers))
        if self.headers.get("Upgrade", "").lower() == "websocket":
            key = self.headers.get("Sec-WebSocket-Key", "")
            accept = base64.b64encode(hashlib.sha1((key + WEBSOCKET_GUID).encode()).digest())
            self.send_response(101)
            self.send_header("Upgrade", "websocket")
            self.send_header("Connection", "Upgrade")
            self.send_header("Sec-WebSocket-Accept", accept.decode())
            self.end_headers()
            self.wfile.flush()
            # Open for the whole tournament, as the live page's socket is.
            stub.stopping.wait()
            self.close_connection = True
            return
        if self.path.startswith("/slow"):
            stub.slow_release.wait(WAIT_SECONDS)
        self._answer(200, {"process": stub.name})

    def do_POST(self) -> None:
        self._write("POST")

    def do_PUT(self) -> None:
        self._write("PUT")

    def _write(self, method: str) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.server.record(method, self.path, dict(self.headers))
        self._answer(200, {"process": self.server.name})


class Balancer:
    """HAProxy with deploy/haproxy/haproxy.cfg, and a stats socket of the test's."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        haproxy = shutil.which("haproxy")
        require_service("haproxy", None if haproxy else "haproxy is not installed")
        assert haproxy is not None
        self.port = free_port()
        # A short folder: a unix socket's path has at most 107 bytes.
        self.folder = Path(tempfile.mkdtemp(prefix="sl5r-hx-"))
        self.stats_socket = self.folder / "stats"
        extra = self.folder / "stats.cfg"
        extra.write_text(f"global\n    stats socket {self.stats_socket} mode 600 level admin\n")
        base = {k: v for k, v in os.environ.items() if not k.startswith("SL5R_")}
        self.log = log
        self._out = log.open("ab")
        self.process = subprocess.Popen(
            [haproxy, "-db", "-f", str(HAPROXY_CONF), "-f", str(extra)],
            env={**base, "SL5R_BALANCER_BIND": f"{HOST}:{self.port}", **env},
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
        )
        if not wait_until(lambda: bool(stats_info(self.stats_socket)), 15):
            self.stop()
            pytest.fail(f"HAProxy did not start:\n{self.output()}", pytrace=False)

    def stats(self) -> dict[tuple[str, str], dict[str, str]]:
        """``show stat``: per (backend, server) its fields (status, check_status, qcur…)."""
        lines = stats_command(self.stats_socket, "show stat").splitlines()
        header, *rows = (line for line in lines if line)
        names = header.lstrip("# ").split(",")
        table = [dict(zip(names, row.split(","), strict=False)) for row in rows]
        return {(row["pxname"], row["svname"]): row for row in table}

    def server(self, backend: str, name: str) -> dict[str, str]:
        return self.stats()[(backend, name)]

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=15)
        self._out.close()
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def balancer_start(tmp_path: Path) -> Iterator[Callable[..., Balancer]]:
    """Start HAProxy in front of two addresses; each stopped at the end."""
    started: list[Balancer] = []

    def start(first: str, second: str, **env: str) -> Balancer:
        balancer = Balancer(
            {
                "SL5R_ASGI_1": first,
                "SL5R_ASGI_2": second,
                # Far below the file's 16,000, which this machine's file limit may not
                # allow (the last test checks the sizing make cluster does).
                "SL5R_BALANCER_MAXCONN": "1000",
                **env,
            },
            tmp_path / f"haproxy-{len(started)}.log",
        )
        started.append(balancer)
        return balancer

    yield start
    for balancer in started:
        balancer.stop()


@pytest.fixture
def stubs() -> Iterator[Callable[..., Stub]]:
    made: list[Stub] = []

    def make(name: str, *, health_delay: float = 0.0, health_status: int = 200) -> Stub:
        stub = Stub(name, health_delay=health_delay, health_status=health_status)
        made.append(stub)
        return stub

    yield make
    for stub in made:
        stub.stop()


def request(
    port: int, method: str, path: str, *, body: bytes | None = None, timeout: float = 10
) -> tuple[int, dict[str, object]]:
    connection = http.client.HTTPConnection(HOST, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        return response.status, json.loads(data) if data.startswith(b"{") else {}
    finally:
        connection.close()


@contextlib.contextmanager
def websocket(port: int, path: str = "/ws/tournaments/1/") -> Iterator[str]:
    """Open a websocket through the balancer; yields the status line of the answer."""
    sock = socket.create_connection((HOST, port), timeout=10)
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        sock.sendall(
            (
                f"GET {path} HTTP/1.1\r\nHost: {HOST}:{port}\r\nUpgrade: websocket\r\n"
                f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\n"
                "Sec-WebSocket-Version: 13\r\n\r\n"
            ).encode()
        )
        answer = b""
        with contextlib.suppress(TimeoutError):
            while b"\r\n\r\n" not in answer and (chunk := sock.recv(4096)):
                answer += chunk
        yield answer.split(b"\r\n", 1)[0].decode()
    finally:
        sock.close()


def test_a_process_slow_to_answer_its_checks_stays_in_and_one_that_died_goes_out(
    balancer_start: Callable[..., Balancer], stubs: Callable[..., Stub]
) -> None:
    """A process answering /healthz in 2.5 s is busy, not gone: it stays in (before, a check
    gave up after 2 s and two failures took a process out, so a deadline's burst took
    both out and the whole site answered 503). A process that dies (its port refuses
    connections) is out within a few seconds, and the site serves through the other."""
    busy, doomed = stubs("asgi-1", health_delay=2.5), stubs("asgi-2")
    balancer = balancer_start(busy.address, doomed.address)

    def busy_check_passed() -> bool:
        server = balancer.server("asgi", "asgi-1")
        return server["check_status"] == "L7OK" and int(server["check_duration"] or 0) >= 2500

    slow_check_passed = wait_until(busy_check_passed)
    doomed_checked = wait_until(lambda: balancer.server("asgi", "asgi-2")["check_status"] == "L7OK")
    doomed.stop()
    # Its checks: the next within 3 s, then two more a second apart.
    gone_out = wait_until(lambda: balancer.server("asgi", "asgi-2")["status"] == "DOWN", 15)
    answers = [request(balancer.port, "GET", "/api/tournaments") for _ in range(4)]

    assert slow_check_passed, (balancer.server("asgi", "asgi-1"), balancer.output())
    assert doomed_checked
    assert gone_out, (balancer.server("asgi", "asgi-2"), balancer.output())
    busy_now = balancer.server("asgi", "asgi-1")
    assert (busy_now["status"], busy_now["chkfail"]) == ("UP", "0")
    assert answers == [(200, {"process": "asgi-1"})] * 4
    # The websockets and the writes follow the reads' checks.
    assert balancer.server("asgi_ws", "asgi-2")["status"] == "DOWN"
    assert balancer.server("asgi_writes", "asgi-1")["status"] == "UP"


def test_a_process_that_dies_under_traffic_is_taken_out_by_the_refusals_and_no_request_fails(
    balancer_start: Callable[..., Balancer], stubs: Callable[..., Stub]
) -> None:
    """Ten connections in a row refused take a process out at once, well before its health
    checks would (three failures, a second apart); each request that picked it meanwhile is
    sent to the other."""
    alive, doomed = stubs("asgi-1"), stubs("asgi-2")
    balancer = balancer_start(alive.address, doomed.address)
    checked = wait_until(lambda: balancer.server("asgi", "asgi-2")["check_status"] == "L7OK")

    doomed.stop()
    answers = [request(balancer.port, "GET", "/api/tournaments") for _ in range(25)]
    right_after = balancer.server("asgi", "asgi-2")

    assert checked
    assert answers == [(200, {"process": "asgi-1"})] * 25
    assert right_after["status"] == "DOWN", (right_after, balancer.output())


def test_websockets_do_not_take_the_reads_slots_of_a_process(
    balancer_start: Callable[..., Balancer], stubs: Callable[..., Stub]
) -> None:
    """With one read at a time per process, three websockets still open at once and a page
    is still served beside them: a socket, open all day, would otherwise hold a slot for
    the whole tournament. They carry the client's address and the arrival stamp (R4)."""
    first, second = stubs("asgi-1"), stubs("asgi-2")
    balancer = balancer_start(first.address, second.address, SL5R_ASGI_MAXCONN="1")

    with (
        websocket(balancer.port) as one,
        websocket(balancer.port) as two,
        websocket(balancer.port) as three,
    ):
        page = request(balancer.port, "GET", "/api/tournaments", timeout=5)
        sockets = [one, two, three]
    upgrades = first.seen("GET", "/ws/") + second.seen("GET", "/ws/")

    assert [line.split(" ", 2)[1] for line in sockets] == ["101"] * 3, sockets
    assert page[0] == 200
    # leastconn: the three are spread, not all on one process.
    assert {len(first.seen("GET", "/ws/")), len(second.seen("GET", "/ws/"))} == {1, 2}
    assert all(h["x-forwarded-for"] == HOST and h["x-sl5r-received-at"] for h in upgrades)


def test_reads_beyond_a_process_slots_wait_at_the_balancer_and_writes_go_straight_through(
    balancer_start: Callable[..., Balancer], stubs: Callable[..., Stub]
) -> None:
    """Both processes busy with a read each (one slot each): the next read waits in the
    balancer's queue until a slot frees, and is then served. A write (an order) is not
    queued: R4's clock waits only for orders a process has seen arrive, so an order must
    reach one even when every read slot is taken."""
    first, second = stubs("asgi-1"), stubs("asgi-2")
    balancer = balancer_start(first.address, second.address, SL5R_ASGI_MAXCONN="1")
    answers: dict[str, tuple[int, dict[str, object]]] = {}

    def get(name: str, path: str) -> threading.Thread:
        def run() -> None:
            answers[name] = request(balancer.port, "GET", path, timeout=WAIT_SECONDS)

        thread = threading.Thread(target=run)
        thread.start()
        return thread

    def slow_ones() -> int:
        return len(first.seen("GET", "/slow") + second.seen("GET", "/slow"))

    try:
        held = [get("slow-1", "/slow/1"), get("slow-2", "/slow/2")]
        both_busy = wait_until(lambda: slow_ones() == 2)
        held.append(get("queued", "/slow/3"))
        queued = wait_until(lambda: balancer.server("asgi", "BACKEND")["qcur"] == "1")
        order = request(
            balancer.port, "POST", "/api/tournaments/1/orders/mine", body=b"{}", timeout=5
        )
        still_queued = balancer.server("asgi", "BACKEND")["qcur"]
    finally:
        first.slow_release.set()
        second.slow_release.set()
        for thread in held:
            thread.join(WAIT_SECONDS)
    writes = first.seen("POST", "/api/") + second.seen("POST", "/api/")

    assert both_busy and queued, balancer.output()
    assert order[0] == 200
    assert still_queued == "1"
    assert answers["queued"][0] == 200
    assert len(writes) == 1
    assert writes[0]["x-forwarded-for"] == HOST and writes[0]["x-sl5r-received-at"]


def test_with_every_process_failing_its_checks_those_accepting_connections_still_serve(
    balancer_start: Callable[..., Balancer], stubs: Callable[..., Stub]
) -> None:
    """Both processes out by their health checks, but both still accept connections (a
    burst slowing every answer): requests and websockets still reach them, rather than
    the whole site getting the balancer's 503."""
    first = stubs("asgi-1", health_status=500)
    second = stubs("asgi-2", health_status=500)
    balancer = balancer_start(first.address, second.address)

    both_out = wait_until(
        lambda: {balancer.server("asgi", n)["status"] for n in ("asgi-1", "asgi-2")} == {"DOWN"}
    )
    page = request(balancer.port, "GET", "/api/tournaments")
    order = request(balancer.port, "PUT", "/api/tournaments/1/orders/mine", body=b"{}")
    with websocket(balancer.port) as socket_answer:
        pass

    assert both_out, balancer.output()
    assert page[0] == 200 and order[0] == 200
    assert socket_answer.split(" ", 2)[1] == "101"


def test_with_no_process_accepting_connections_the_balancer_answers_the_sites_503(
    balancer_start: Callable[..., Balancer],
) -> None:
    balancer = balancer_start(f"{HOST}:{free_port()}", f"{HOST}:{free_port()}")

    both_out = wait_until(
        lambda: (
            {balancer.server("asgi_reachable", n)["status"] for n in ("asgi-1", "asgi-2")}
            == {"DOWN"}
        )
    )
    status, body = request(balancer.port, "GET", "/api/tournaments")

    assert both_out, balancer.output()
    assert (status, body["code"]) == (503, "unavailable")


def test_the_balancer_starts_with_the_maxconn_make_cluster_gives_it_here(tmp_path: Path) -> None:
    """``python -m sl5r.cluster`` raises the file limit as far as this machine allows and
    sizes maxconn to fit: HAProxy starts with it, and with its two files a connection (it
    refuses to start when it cannot have them)."""
    haproxy = shutil.which("haproxy")
    require_service("haproxy", None if haproxy else "haproxy is not installed")
    assert haproxy is not None
    folder = Path(tempfile.mkdtemp(prefix="sl5r-hx-"))
    extra = folder / "stats.cfg"
    extra.write_text(f"global\n    stats socket {folder / 'stats'} mode 600 level admin\n")
    # In a process of its own, as the cluster does it: HAProxy inherits the limit.
    script = (
        "import os, sys\n"
        "from sl5r.cluster import balancer_maxconn, files_limit_raise\n"
        "os.environ['SL5R_BALANCER_MAXCONN'] = str(balancer_maxconn(files_limit_raise()))\n"
        "print(os.environ['SL5R_BALANCER_MAXCONN'], flush=True)\n"
        "os.execv(sys.argv[1], sys.argv[1:])\n"
    )
    base = {k: v for k, v in os.environ.items() if not k.startswith("SL5R_")}
    argv = [haproxy, "-db", "-f", str(HAPROXY_CONF), "-f", str(extra)]
    log = tmp_path / "haproxy.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-c", script, *argv],
            cwd=HAPROXY_CONF.parents[2],
            env={**base, "SL5R_BALANCER_BIND": f"{HOST}:{free_port()}"},
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until(lambda: bool(stats_info(folder / "stats")) or process.poll() is not None, 15)
        info = stats_info(folder / "stats")
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(timeout=15)
        shutil.rmtree(folder, ignore_errors=True)
    printed = log.read_text(errors="replace")

    assert info, printed
    maxconn = int(printed.split()[0])
    assert int(info["Maxconn"]) == maxconn
    assert int(info["Ulimit-n"]) >= 2 * maxconn
