"""Reading configuration from environment variables.

Only ``sl5r.settings`` calls these helpers; apps read ``django.conf.settings`` instead.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlsplit

from django.core.exceptions import ImproperlyConfigured

TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})

POSTGRES_SCHEMES = frozenset({"postgres", "postgresql", "pgsql"})
SQLITE_SCHEMES = frozenset({"sqlite", "sqlite3"})


def env_bool(environ: Mapping[str, str], name: str, *, default: bool) -> bool:
    """Return the boolean value of ``name``; ``default`` when it is not set."""
    if name not in environ:
        return default
    value = environ[name].strip().lower()
    if value in TRUE_WORDS:
        return True
    if value in FALSE_WORDS:
        return False
    raise ImproperlyConfigured(f"{name}: expected a boolean (1/0, true/false), got {value!r}")


def env_int(environ: Mapping[str, str], name: str, *, default: int) -> int:
    """Return the integer value of ``name``; ``default`` when it is not set or empty."""
    value = environ.get(name, "").strip()
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}: expected an integer, got {value!r}") from None


def env_seconds(environ: Mapping[str, str], name: str, *, default: float) -> float:
    """Return the number of seconds in ``name``; ``default`` when it is not set or empty."""
    value = environ.get(name, "").strip()
    if not value:
        return default
    try:
        return float(value)
    except ValueError:
        raise ImproperlyConfigured(f"{name}: expected a number of seconds, got {value!r}") from None


def env_list(environ: Mapping[str, str], name: str, *, default: list[str]) -> list[str]:
    """Return the comma-separated list in ``name``; ``default`` when it is not set."""
    if name not in environ:
        return list(default)
    return [item.strip() for item in environ[name].split(",") if item.strip()]


# The rate grammar of referees/http/ratelimit.py's Rate.parse, checked here so that a typo stops
# the start with its name instead of failing the first request it limits.
_RATE = re.compile(r"\d+/\d*(s|sec|second|m|min|minute|h|hour)")
OFF_WORDS = frozenset({"off", "none"})


def env_rates(environ: Mapping[str, str], name: str) -> dict[str, str | None]:
    """``"joins=20/min,orders=off"`` as ``{"joins": "20/min", "orders": None}``."""
    rates: dict[str, str | None] = {}
    for item in env_list(environ, name, default=[]):
        scope, equals, rate = (part.strip() for part in item.partition("="))
        if not equals or not scope:
            raise ImproperlyConfigured(f"{name}: expected scope=rate (joins=20/min), got {item!r}")
        if rate.lower() in OFF_WORDS:
            rates[scope] = None
        elif _RATE.fullmatch(rate.replace(" ", "").lower()):
            rates[scope] = rate
        else:
            raise ImproperlyConfigured(
                f'{name}: rate {rate!r} for {scope}: write it as "30/min", "5/10s", '
                f'"100/hour" or "off"'
            )
    return rates


_ADMIN_PATH = re.compile(r"([A-Za-z0-9._~-]+/)+")


def env_admin_path(environ: Mapping[str, str], name: str, *, default: str) -> str:
    """The admin's place under the site (``"admin/"``); ``""`` when ``name`` says ``off``."""
    value = environ.get(name, default).strip()
    if value.lower() in OFF_WORDS:
        return ""
    path = value.strip("/") + "/"
    if not _ADMIN_PATH.fullmatch(path) or {".", ".."} & set(path.split("/")):
        raise ImproperlyConfigured(
            f"{name}: expected a path such as admin/ or staff/desk/ (letters, digits, - . _ ~), "
            f'or "off"; got {value!r}'
        )
    return path


def env_networks(environ: Mapping[str, str], name: str, *, default: list[str]) -> list[str]:
    """Comma-separated addresses or networks (``127.0.0.1``, ``10.0.0.0/8``, ``::1``), checked."""
    networks = env_list(environ, name, default=default)
    for network in networks:
        try:
            ipaddress.ip_network(network, strict=False)
        except ValueError:
            raise ImproperlyConfigured(
                f"{name}: {network!r} is not an address or a network (10.0.0.0/8, ::1)"
            ) from None
    return networks


def parse_database_url(url: str, *, base_dir: Path) -> dict[str, Any]:
    """Turn a database URL into a Django ``DATABASES`` entry.

    Supported forms:

    - ``postgres://user:password@host:port/dbname?sslmode=require`` (also ``postgresql://``);
      query parameters become connection ``OPTIONS``;
    - ``sqlite:///relative/path.sqlite3``, ``sqlite:////absolute/path.sqlite3``.
    """
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in POSTGRES_SCHEMES:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise ImproperlyConfigured("DATABASE_URL: the database name is missing")
        try:
            port = parts.port
        except ValueError:
            raise ImproperlyConfigured("DATABASE_URL: the port is not a number") from None
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(port) if port is not None else "",
            "OPTIONS": dict(parse_qsl(parts.query)),
        }
    if scheme in SQLITE_SCHEMES:
        path = unquote(parts.path)
        # sqlite:///db.sqlite3 is relative to the project, sqlite:////tmp/x is absolute.
        relative = path[1:] if path.startswith("/") else path
        if not relative:
            raise ImproperlyConfigured("DATABASE_URL: the SQLite file name is missing")
        file = Path(relative) if relative.startswith("/") else base_dir / relative
        return sqlite_database(file)
    raise ImproperlyConfigured(
        f"DATABASE_URL: unsupported scheme {parts.scheme!r} (use postgres:// or sqlite:///)"
    )


def sqlite_database(name: Path | str) -> dict[str, Any]:
    """A SQLite ``DATABASES`` entry tuned for a web server with a few writers.

    WAL lets readers work while a turn is being resolved; ``IMMEDIATE`` transactions take
    the write lock at ``BEGIN`` so two writers queue on ``timeout`` instead of failing with
    "database is locked" when one of them upgrades a read lock.
    """
    return {
        # Django's backend with the process's writers queued on a lock (sl5r/serving/sqlite).
        "ENGINE": "sl5r.serving.sqlite",
        "NAME": name,
        "OPTIONS": {
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
        },
    }
