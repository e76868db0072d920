"""sl5r/venue.py: the hosts, the base address and the kept secret key of a venue server."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest
from django.core.exceptions import ImproperlyConfigured

from sl5r.venue import (
    site_url_parse,
    tls_files,
    venue_address_pick,
    venue_network,
    venue_secret_key,
)

LAPTOP = ["127.0.0.1", "::1", "192.168.1.20", "10.8.0.3", "2001:db8::20"]


def test_the_venue_address_is_the_default_routes_source() -> None:
    assert venue_address_pick(addresses=LAPTOP, route_source="10.8.0.3") == "10.8.0.3"


def test_without_a_default_route_a_private_ipv4_address_is_picked_never_loopback() -> None:
    picked = venue_address_pick(
        addresses=["127.0.0.1", "2001:db8::20", "192.168.1.20"], route_source=None
    )
    assert picked == "192.168.1.20"


def test_a_machine_with_only_loopback_has_no_venue_address() -> None:
    assert venue_address_pick(addresses=["127.0.0.1", "::1"], route_source="127.0.0.1") is None


def test_the_venue_network_allows_every_address_the_host_name_and_venue_hosts() -> None:
    network = venue_network(
        environ={"VENUE_HOSTS": "Referee.lan, judge-laptop"},
        port=8000,
        tls=False,
        addresses=LAPTOP,
        route_source="192.168.1.20",
        hostname="Dojo",
    )
    assert network.site_url == "http://192.168.1.20:8000"
    assert network.address == "192.168.1.20"
    for host in ("192.168.1.20", "10.8.0.3", "[2001:db8::20]", "127.0.0.1", "[::1]"):
        assert host in network.hosts
    for name in ("localhost", "referee.lan", "judge-laptop", "dojo", "dojo.local"):
        assert name in network.hosts
    assert "http://192.168.1.20:8000" in network.csrf_origins
    assert "http://referee.lan:8000" in network.csrf_origins
    assert network.warning == ""


def test_site_url_replaces_the_picked_address_and_is_allowed() -> None:
    network = venue_network(
        environ={"SITE_URL": "https://tournament.example:8443/"},
        port=8443,
        tls=True,
        addresses=LAPTOP,
        route_source="192.168.1.20",
        hostname="dojo",
    )
    assert network.site_url == "https://tournament.example:8443"
    assert "tournament.example" in network.hosts


def test_with_tls_on_the_default_port_the_address_has_no_port() -> None:
    network = venue_network(
        environ={}, port=443, tls=True, addresses=LAPTOP, route_source=None, hostname=""
    )
    assert network.site_url == "https://192.168.1.20"


def test_a_machine_with_no_network_is_served_with_a_warning() -> None:
    network = venue_network(
        environ={}, port=8000, tls=False, addresses=["127.0.0.1"], route_source=None, hostname="x"
    )
    assert network.site_url == "http://127.0.0.1:8000"
    assert "phones cannot reach it" in network.warning


@pytest.mark.parametrize(
    "value", ["192.168.1.20:8000", "ftp://x", "http://x/referees/", "http://x:port", "http://"]
)
def test_a_site_url_that_is_not_a_site_root_is_refused(value: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="SITE_URL"):
        site_url_parse(value)


def test_the_secret_key_is_made_once_and_kept_private(tmp_path: Path) -> None:
    first = venue_secret_key(tmp_path / "venue")
    second = venue_secret_key(tmp_path / "venue")
    assert first == second
    assert len(first) >= 50
    mode = stat.S_IMODE((tmp_path / "venue" / "secret_key").stat().st_mode)
    assert mode == 0o600
    assert list((tmp_path / "venue").iterdir()) == [tmp_path / "venue" / "secret_key"]


def test_https_needs_both_the_certificate_and_the_key(tmp_path: Path) -> None:
    cert = tmp_path / "cert.pem"
    cert.write_text("x")
    assert tls_files({}) is None
    with pytest.raises(ImproperlyConfigured, match="TLS_KEY"):
        tls_files({"TLS_CERT": str(cert)})
    with pytest.raises(ImproperlyConfigured, match="no such file"):
        tls_files({"TLS_CERT": str(cert), "TLS_KEY": str(tmp_path / "missing.pem")})
    assert tls_files({"TLS_CERT": str(cert), "TLS_KEY": str(cert)}) == (cert, cert)
