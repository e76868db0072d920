"""``make venue`` as a test runs it: the real command on a scratch database and venue folder.

``start_venue`` (a fixture in tests/conftest.py) runs ``make venue PORT=…`` as the README
says and waits for its ready line; ``Venue.request`` talks to it over loopback while naming
it by any host (its venue address by default, as a phone on the Wi-Fi would), so no traffic
leaves the machine.
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import socket
import ssl
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlencode

BASE_DIR = Path(__file__).resolve().parents[1]
# migrate, collectstatic and the demo's first turn before the server listens; generous for
# a busy machine, and only ever waited out when something is broken.
START_SECONDS = 180.0
# Variables of the caller's shell that would change what the venue serves.
CLEARED = (
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "DEBUG",
    "HOST",
    "SITE_URL",
    "TLS_CERT",
    "TLS_KEY",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "SL5R_CLOCK",
    "VENUE_BACKUP_DIR",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass(frozen=True)
class Answer:
    status: int
    headers: http.client.HTTPMessage
    body: bytes

    @property
    def cookies(self) -> list[str]:
        return self.headers.get_all("Set-Cookie") or []


@dataclass
class Venue:
    """A running ``make venue`` and what it printed."""

    port: int
    process: subprocess.Popen[bytes]
    log: Path
    tls: bool = False
    cookies: dict[str, str] = field(default_factory=dict)

    @property
    def output(self) -> str:
        return self.log.read_text(errors="replace")

    @property
    def site(self) -> str:
        found = re.search(r"serving the venue at (\S+)/ ", self.output)
        assert found, self.output
        return found.group(1)

    @property
    def judge_password(self) -> str:
        found = re.search(r"Judge login at \S+: judge / (\S+)", self.output)
        assert found, self.output
        return found.group(1)

    def request(
        self,
        method: str,
        path: str,
        *,
        host: str | None = None,
        body: dict[str, str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> Answer:
        """A request to the server on loopback that names it ``host`` (default: its venue
        address, as a phone would), keeping cookies like a browser."""
        if self.tls:
            context = ssl.create_default_context()
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE  # the venue's self-signed certificate
            connection: http.client.HTTPConnection = http.client.HTTPSConnection(
                "127.0.0.1", self.port, timeout=30, context=context
            )
        else:
            connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        sent = {"Host": host or self.site.split("://", 1)[1], **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        data = None
        if body is not None:
            data = urlencode(body)
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        connection.request(method, path, body=data, headers=sent)
        response = connection.getresponse()
        answer = Answer(response.status, response.headers, response.read())
        connection.close()
        for header in answer.cookies:
            name, value = header.split(";", 1)[0].split("=", 1)
            self.cookies[name] = value
        return answer

    def stop(self) -> None:
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)


def ctrl_c_heard() -> None:
    """In the child, before exec: SIGINT back to its default. A shell runs a background job
    (CI started with ``&``) with SIGINT ignored, an ignored signal stays ignored across exec,
    and then neither Python nor Twisted installs its handler: ``make venue`` never heard the
    Ctrl-C ``Venue.stop`` sends, and each teardown waited 30 s for the SIGKILL."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def venue_environment(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        VENUE_DIR=str(tmp_path / "venue"),
        VENUE_HOSTS="referee.lan",
        PYTHONUNBUFFERED="1",
    )
    return env


def venue_starter(venue_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Venue]]:
    """A function that starts ``make venue`` (again, with ``port=`` the same port), and stops
    every venue it started when the generator is closed."""
    started: list[Venue] = []

    def start(*, port: int | None = None, extra: dict[str, str] | None = None) -> Venue:
        port = port or free_port()
        log = tmp_path / f"venue-{len(started)}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                ["make", "--no-print-directory", "venue", f"PORT={port}"],
                cwd=BASE_DIR,
                env={**venue_env, **(extra or {})},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # make and manage.py stop together
                preexec_fn=ctrl_c_heard,
            )
        venue = Venue(port=port, process=process, log=log, tls=bool(extra and "TLS_CERT" in extra))
        started.append(venue)
        deadline = time.monotonic() + START_SECONDS
        while "Quit with CONTROL-C." not in venue.output:
            assert process.poll() is None, venue.output
            assert time.monotonic() < deadline, venue.output
            time.sleep(0.2)
        return venue

    try:
        yield start
    finally:
        for venue in started:
            venue.stop()


def venue_sign_in(venue: Venue, *, host: str, password: str | None = None) -> None:
    venue.request("GET", "/admin/login/", host=host)
    response = venue.request(
        "POST",
        "/admin/login/?next=/",
        host=host,
        body={
            "username": "judge",
            "password": password or venue.judge_password,
            "csrfmiddlewaretoken": venue.cookies["csrftoken"],
            "next": "/",
        },
        headers={"Origin": f"{'https' if venue.tls else 'http'}://{host}"},
    )
    assert response.status == 302, response.body
