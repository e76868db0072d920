"""Serving a venue's network: this machine's addresses, the base address and the kept key.

At a venue the judge's laptop serves 8-48 phones on the hall's Wi-Fi, often with no
internet. ``make venue`` (``SL5R_VENUE=1``) makes the settings listen to every address of
this machine, refuse any other host, and build every link that leaves the site (join links,
QR codes, the big screen, the printed addresses) on one base address that a phone on the
same network can open, whatever address the judge's own browser used.

``sl5r.settings`` calls these functions once at start-up; nothing here reads Django's
settings, so the module can be imported before they exist.
"""

from __future__ import annotations

import ipaddress
import os
import secrets
import socket
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

import psutil
from django.core.exceptions import ImproperlyConfigured

# A documentation address (RFC 5737, TEST-NET-2): a UDP socket "connected" to it asks the
# kernel which source address the default route uses. Connecting a UDP socket sends no
# packet, so nothing leaves the machine.
ROUTE_PROBE_ADDRESS = "198.51.100.1"

SECRET_KEY_FILE = "secret_key"
# The base address of the last start: a printed join sheet carries it, so a change is said
# (the venue command) and a backup keeps it (a restore on another laptop warns).
LAST_SITE_FILE = "site_url"


@dataclass(frozen=True)
class VenueNetwork:
    """What the settings need to serve a venue."""

    site_url: str
    """The base address of every link that leaves the site, without a trailing slash."""
    address: str
    """The machine's venue address (the host of ``site_url`` unless SITE_URL was given)."""
    hosts: list[str]
    """Every name and address a request may carry in its Host header."""
    csrf_origins: list[str]
    warning: str
    """Empty, or why phones may not reach this machine (no network address at all)."""
    candidates: list[str] = field(default_factory=list)
    """Every base address the links could carry: one per network address of this machine
    (loopback left out), ``site_url`` first; a judge picks another on the console when the
    picked one is not the venue's network (a laptop on two networks)."""


def interface_addresses() -> list[str]:
    """Every IPv4 and global IPv6 address of this machine's interfaces, loopback included."""
    found: list[str] = []
    for entries in psutil.net_if_addrs().values():
        for entry in entries:
            if entry.family not in (socket.AF_INET, socket.AF_INET6):
                continue
            # A link-local IPv6 address needs its zone ("%wlan0"), which no Host header
            # carries; phones use the IPv4 address anyway.
            text = entry.address.split("%", 1)[0]
            try:
                address = ipaddress.ip_address(text)
            except ValueError:
                continue
            if address.version == 6 and address.is_link_local:
                continue
            if text not in found:
                found.append(text)
    return found


def default_route_address() -> str | None:
    """The source address of this machine's default route (IPv4), or None without one."""
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((ROUTE_PROBE_ADDRESS, 9))
        address = str(probe.getsockname()[0])
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith(("0.", "127.")) else address


def venue_address_pick(*, addresses: Iterable[str], route_source: str | None) -> str | None:
    """The address phones should use: the default route's, else a private IPv4 one.

    Never loopback: a printed sheet must work on a phone. None when the machine has no
    address but loopback.
    """
    candidates = []
    for text in addresses:
        address = ipaddress.ip_address(text)
        if address.is_loopback or address.is_unspecified or address.is_link_local:
            continue
        candidates.append(address)
    if route_source is not None and any(str(a) == route_source for a in candidates):
        return route_source
    ipv4 = [a for a in candidates if a.version == 4]
    for group in ([a for a in ipv4 if a.is_private], ipv4, candidates):
        if group:
            return str(group[0])
    return None


def host_header(address: str) -> str:
    """An address as a Host header writes it: IPv6 in brackets."""
    return f"[{address}]" if ":" in address else address


def site_url_build(*, scheme: str, host: str, port: int) -> str:
    default_port = 443 if scheme == "https" else 80
    netloc = host_header(host) if port == default_port else f"{host_header(host)}:{port}"
    return f"{scheme}://{netloc}"


def site_url_parse(value: str) -> str:
    """SITE_URL checked: ``http(s)://host[:port]``, returned without a trailing slash."""
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ImproperlyConfigured(
            f"SITE_URL: expected http://host[:port] or https://host[:port], got {value!r}"
        )
    if parts.path.strip("/") or parts.query or parts.fragment:
        raise ImproperlyConfigured(f"SITE_URL: give the site's root, without a path: {value!r}")
    try:
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise ImproperlyConfigured(f"SITE_URL: the port is not a number: {value!r}") from None
    return f"{parts.scheme}://{parts.netloc}"


def venue_network(
    *,
    environ: Mapping[str, str],
    port: int,
    tls: bool,
    addresses: Iterable[str] | None = None,
    route_source: str | None = None,
    hostname: str | None = None,
) -> VenueNetwork:
    """The hosts, origins and base address for serving this machine on a venue's network.

    ``addresses``, ``route_source`` and ``hostname`` default to this machine's own (tests
    pass their own). ``VENUE_HOSTS`` adds names the venue's router gives this machine;
    ``SITE_URL`` sets the base address instead of the picked one.
    """
    scheme = "https" if tls else "http"
    if addresses is None:
        addresses = interface_addresses()
        route_source = default_route_address()
    addresses = list(addresses)
    hostname = socket.gethostname() if hostname is None else hostname
    extra = [h.strip().lower() for h in environ.get("VENUE_HOSTS", "").split(",") if h.strip()]

    picked = venue_address_pick(addresses=addresses, route_source=route_source)
    warning = ""
    if picked is None:
        picked = "127.0.0.1"
        warning = (
            "this machine has no network address but loopback: phones cannot reach it. "
            "Join the venue's Wi-Fi and start again."
        )
    site_url = site_url_build(scheme=scheme, host=picked, port=port)
    if environ.get("SITE_URL", "").strip():
        site_url = site_url_parse(environ["SITE_URL"])

    names = ["localhost", *addresses, *extra]
    if hostname:
        names += [hostname.lower(), f"{hostname.lower()}.local"]
    site_host = urlsplit(site_url).hostname
    if site_host:
        names.append(site_host)
    hosts: list[str] = []
    for name in names:
        header = host_header(name)
        if header not in hosts:
            hosts.append(header)
    origins = [site_url_build(scheme=scheme, host=h.strip("[]"), port=port) for h in hosts]
    if site_url not in origins:
        origins.append(site_url)
    candidates = [site_url]
    for address in addresses:
        if ipaddress.ip_address(address.split("%")[0]).is_loopback:
            continue
        candidate = site_url_build(scheme=scheme, host=address, port=port)
        if candidate not in candidates:
            candidates.append(candidate)
    return VenueNetwork(
        site_url=site_url,
        address=picked,
        hosts=hosts,
        csrf_origins=origins,
        warning=warning,
        candidates=candidates,
    )


def venue_secret_key(directory: Path) -> str:
    """The venue's secret key, made once and kept in ``directory`` (which git ignores).

    Join links and the judges' sign-in are signed with it, so they survive a restart of
    the laptop. Written to a temporary file and renamed, so a crash never leaves half a key.
    """
    path = directory / SECRET_KEY_FILE
    try:
        key = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        key = ""
    if key:
        return key
    directory.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    temporary = path.with_name(f".{SECRET_KEY_FILE}.{os.getpid()}.tmp")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(key + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(temporary, path)
    return key


def tls_files(environ: Mapping[str, str]) -> tuple[Path, Path] | None:
    """``TLS_CERT`` and ``TLS_KEY`` (both or neither), checked to be readable files."""
    cert = environ.get("TLS_CERT", "").strip()
    key = environ.get("TLS_KEY", "").strip()
    if not cert and not key:
        return None
    if not cert or not key:
        missing = "TLS_KEY" if cert else "TLS_CERT"
        raise ImproperlyConfigured(f"{missing}: HTTPS needs both TLS_CERT and TLS_KEY")
    paths = (Path(cert).expanduser().resolve(), Path(key).expanduser().resolve())
    for name, path in zip(("TLS_CERT", "TLS_KEY"), paths, strict=True):
        if not path.is_file():
            raise ImproperlyConfigured(f"{name}: no such file: {path}")
    return paths
