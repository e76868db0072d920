"""``make venue`` (referees/management/commands/venue.py), run as the README says.

Each test starts the real command on a scratch database and venue folder (tests/venue_server.py)
and talks to it as phones on the venue's Wi-Fi would.
"""

from __future__ import annotations

import datetime
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from sl5r.public_url import qr_svg
from tests.venue_server import Answer, Venue, venue_sign_in

pytestmark = [
    pytest.mark.one_database(
        "the venue always runs on its own SQLite database, whatever DATABASE_URL the suite has"
    ),
    pytest.mark.slow,  # nine starts of `make venue`, 4-10 s each
]


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
    venue_sign_in(venue, host=loopback)

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
    venue_sign_in(first, host=f"127.0.0.1:{first.port}")
    key = (Path(venue_env["VENUE_DIR"]) / "secret_key").read_text()
    cookies = dict(first.cookies)
    first.stop()

    # when: the laptop restarts and the organiser types `make venue` again
    second = start_venue(port=first.port)
    second.cookies.update(cookies)

    # then: the same key, and the judge is still signed in
    assert "venue address was" not in second.output  # the same address: no warning
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
    venue_sign_in(secure, host=secure.site.split("://", 1)[1], password=password)


def test_a_changed_venue_address_is_said_because_printed_sheets_carry_the_old_one(
    start_venue: Callable[..., Venue],
) -> None:
    # given: a first start on one address
    first = start_venue(extra={"SITE_URL": "http://192.168.1.20:8000"})
    first.stop()

    # when: the laptop comes back on another
    second = start_venue(extra={"SITE_URL": "http://10.0.0.7:8000"})

    # then
    assert "the venue address was http://192.168.1.20:8000 at the last start" in second.output
    # and the consoles say it too (issue 31): a judge who never reads the terminal prints again
    venue_sign_in(second, host="10.0.0.7:8000", password=first.judge_password)
    log = json.loads(second.request("GET", "/api/tournaments/1/log", host="10.0.0.7:8000").body)
    changed = [e for e in log["entries"] if e["action"] == "site_changed"]
    assert [(e["data"]["before"], e["data"]["after"]) for e in changed] == [
        ("http://192.168.1.20:8000", "http://10.0.0.7:8000")
    ]
    assert "Print the join sheet again." in changed[0]["text"]
