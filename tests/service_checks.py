"""Is a real service there? Used by the fixtures in ``tests/conftest.py``.

Tests that need PostgreSQL or Redis run against the real servers. On a developer's machine
without them those tests are skipped; in CI (``CI`` set) a missing server is a failure, so a
green CI always means the tests ran.
"""

from __future__ import annotations

import os
import socket
from urllib.parse import urlsplit

import pytest

REDIS_URL = os.environ.get("SL5R_TEST_REDIS_URL", "redis://127.0.0.1:6379/15")
POSTGRES_URL = os.environ.get("SL5R_TEST_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/test")

TIMEOUT_SECONDS = 3.0


def in_ci() -> bool:
    """True when the ``CI`` environment variable is set to anything but a false word."""
    return os.environ.get("CI", "").strip().lower() not in {"", "0", "false", "no", "off"}


def require_service(name: str, problem: str | None) -> None:
    """Skip the test (or fail it, in CI) when ``problem`` says the service is missing."""
    if problem is None:
        return
    message = f"{name} is not available: {problem}"
    if in_ci():
        pytest.fail(f"{message} (CI is set, so this service is required)", pytrace=False)
    pytest.skip(message)


def redis_problem(url: str = REDIS_URL) -> str | None:
    """``None`` when Redis at ``url`` answers PING with PONG, else what went wrong."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 6379
    try:
        with socket.create_connection((host, port), timeout=TIMEOUT_SECONDS) as sock:
            sock.settimeout(TIMEOUT_SECONDS)
            sock.sendall(b"PING\r\n")
            reply = sock.recv(64)
    except OSError as exc:
        return f"{host}:{port}: {exc}"
    if not reply.startswith(b"+PONG"):
        return f"{host}:{port}: unexpected reply to PING: {reply!r}"
    return None


def postgres_problem(url: str = POSTGRES_URL) -> str | None:
    """``None`` when PostgreSQL at ``url`` accepts a connection, else what went wrong."""
    import psycopg

    try:
        with psycopg.connect(url, connect_timeout=int(TIMEOUT_SECONDS)) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        lines = str(exc).strip().splitlines()
        return f"{_redacted(url)}: {lines[0] if lines else type(exc).__name__}"
    return None


def _redacted(url: str) -> str:
    parts = urlsplit(url)
    if parts.password:
        return url.replace(f":{parts.password}@", ":***@")
    return url
