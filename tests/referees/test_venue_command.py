"""``make venue`` (referees/management/commands/venue.py), run as the README says.

Each test starts the real command, ``make venue``, on a scratch database and venue folder
and talks to it over HTTP as phones on the venue's Wi-Fi would: a request may name the
laptop by any of its addresses (or a name in VENUE_HOSTS), while the connection itself goes
to loopback, so no traffic leaves the machine.
"""

from __future__ import annotations

import datetime
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

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sl5r.public_url import qr_svg

BASE_DIR = Path(__file__).resolve().parents[2]
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


@pytest.fixture
def venue_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in CLEARED}
    env.update(
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        VENUE_DIR=str(tmp_path / "venue"),
        VENUE_HOSTS="referee.lan",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def start_venue(venue_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Venue]]:
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
            )
        venue = Venue(port=port, process=process, log=log, tls=bool(extra and "TLS_CERT" in extra))
        started.append(venue)
        deadline = time.monotonic() + START_SECONDS
        while "Quit with CONTROL-C." not in venue.output:
            assert process.poll() is None, venue.output
            assert time.monotonic() < deadline, venue.output
            time.sleep(0.2)
        return venue

    yield start
    for venue in started:
        venue.stop()


def _sign_in(venue: Venue, *, host: str, password: str | None = None) -> None:
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


def test_make_venue_serves_the_machines_addresses_and_refuses_other_hosts(
    start_venue: Callable[..., Venue],
) -> None:
    # when
    venue = start_venue()

    # then: a phone naming the laptop by its venue address, or by a VENUE_HOSTS name
    address = venue.site.split("://", 1)[1].rsplit(":", 1)[0]
    assert address not in ("127.0.0.1", "localhost", "0.0.0.0"), venue.output
    assert venue.request("GET", "/").status == 200
    assert venue.request("GET", "/", host=f"referee.lan:{venue.port}").status == 200
    # any other host is refused, with the site's page and not Django's debug page
    refused = venue.request("GET", "/", host=f"evil.example:{venue.port}")
    assert refused.status == 400
    assert b"does not answer to the address" in refused.body
    missing = venue.request("GET", "/no-such-page/")
    assert missing.status == 404
    assert b"Page not found" in missing.body
    assert b"DEBUG = True" not in missing.body
    assert b"URLconf" not in missing.body
    # it printed what the judge needs, on the venue address, with a QR code
    for label in ("Judge console:", "Big screen:", "Join sheet:", "Public address:"):
        line = next(x for x in venue.output.splitlines() if x.strip().startswith(label))
        assert f"{venue.site}/" in line, line
    assert "█" in venue.output


def test_the_join_sheet_carries_the_venue_address_when_the_judge_browses_loopback(
    start_venue: Callable[..., Venue],
) -> None:
    # given: the judge's own browser on the laptop, through 127.0.0.1
    venue = start_venue()
    loopback = f"127.0.0.1:{venue.port}"
    _sign_in(venue, host=loopback)

    # when
    sheet = venue.request("GET", "/referees/tournaments/1/join-sheet", host=loopback)

    # then: every link and every QR code is the venue address, which a phone can open
    assert sheet.status == 200
    text = sheet.body.decode()
    links = re.findall(r'<p class="url">([^<]+)</p>', text)
    assert len(links) == 16
    for link in links:
        assert link.startswith(f"{venue.site}/join/"), link
        assert str(qr_svg(link)) in text
    assert "127.0.0.1" not in text
    # and the big screen shows its own address for spectators, as text and QR code
    screen = venue.request("GET", "/referees/tournaments/1/screen/", host=loopback)
    screen_url = f"{venue.site}/referees/tournaments/1/screen/"
    assert screen_url in screen.body.decode()
    assert str(qr_svg(screen_url)) in screen.body.decode()
    # and a phone's join link works on the venue address
    joined = venue.request("GET", links[0].split(venue.site, 1)[1])
    assert joined.status == 302


def test_a_restarted_venue_keeps_its_secret_key_so_sign_ins_survive(
    start_venue: Callable[..., Venue], venue_env: dict[str, str]
) -> None:
    # given: a judge signed in on the first run
    first = start_venue()
    _sign_in(first, host=f"127.0.0.1:{first.port}")
    key = (Path(venue_env["VENUE_DIR"]) / "secret_key").read_text()
    cookies = dict(first.cookies)
    first.stop()

    # when: the laptop restarts and the organiser types `make venue` again
    second = start_venue(port=first.port)
    second.cookies.update(cookies)

    # then: the same key, and the judge is still signed in
    assert (Path(venue_env["VENUE_DIR"]) / "secret_key").read_text() == key
    console = second.request("GET", "/referees/tournaments/1/judge/")
    assert console.status == 200, console.status


def _self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "referee.lan")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=30))
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


def _csrf_cookie(response: Answer) -> str:
    return next(c for c in response.cookies if c.startswith("csrftoken="))


def test_cookies_are_secure_only_over_https_and_there_is_no_hsts(
    start_venue: Callable[..., Venue], tmp_path: Path
) -> None:
    # given: plain HTTP, the default
    plain = start_venue()
    password = plain.judge_password  # printed on the first run only
    response = plain.request("GET", "/admin/login/")
    assert "secure" not in _csrf_cookie(response).lower()
    assert response.headers.get("Strict-Transport-Security") is None
    plain.stop()

    # when: the organiser gives a certificate
    cert, key = _self_signed(tmp_path)
    secure = start_venue(extra={"TLS_CERT": str(cert), "TLS_KEY": str(key)})

    # then: HTTPS on the same command, Secure cookies, and still no HSTS (self-signed)
    assert secure.site.startswith("https://"), secure.output
    response = secure.request("GET", "/admin/login/")
    assert response.status == 200
    assert "secure" in _csrf_cookie(response).lower()
    assert response.headers.get("Strict-Transport-Security") is None
    _sign_in(secure, host=secure.site.split("://", 1)[1], password=password)
