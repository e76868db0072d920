"""Settings come from the environment: embedded defaults, production switches."""

from __future__ import annotations

import asyncio
import os
import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from channels_redis.core import RedisChannelLayer
from django.core.exceptions import ImproperlyConfigured
from django.db.utils import ConnectionHandler

from sl5r.env import env_bool, env_list, parse_database_url, sqlite_database
from tests.faults.served import RedisServer

BASE_DIR = Path(__file__).resolve().parents[1]
SETTINGS_FILE = BASE_DIR / "sl5r" / "settings.py"
CONFIG_VARIABLES = (
    "DATABASE_URL",
    "REDIS_URL",
    "SECRET_KEY",
    "DEBUG",
    "ALLOWED_HOSTS",
    "CSRF_TRUSTED_ORIGINS",
    "TIME_ZONE",
    "SL5R_CLOCK",
    "SL5R_ORDER_SETTLE_SECONDS",
    "SL5R_HTTP",
    "SECURE_SSL_REDIRECT",
    "SECURE_HSTS_SECONDS",
    "SECURE_PROXY_SSL_HEADER",
    "SL5R_TRUSTED_PROXIES",
    "SL5R_RATE_LIMITS",
)
PRODUCTION_KEY = "k3y-" + "x7Qp9Lm2Vz" * 6


def load_settings(monkeypatch: pytest.MonkeyPatch, **env: str) -> dict[str, Any]:
    """Evaluate sl5r/settings.py afresh with exactly these configuration variables."""
    for name in CONFIG_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


# --- parse_database_url ----------------------------------------------------------------


def test_parse_postgres_url_with_everything() -> None:
    """User, password (URL-decoded), host, port, name and query options are all read."""
    config = parse_database_url(
        "postgres://ref%40ree:p%3Ass@db.example.com:6543/sl5r?sslmode=require",
        base_dir=BASE_DIR,
    )

    assert config == {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": "sl5r",
        "USER": "ref@ree",
        "PASSWORD": "p:ss",
        "HOST": "db.example.com",
        "PORT": "6543",
        "OPTIONS": {"sslmode": "require"},
    }


def test_parse_postgresql_url_with_defaults() -> None:
    """postgresql:// works too; a missing password or port stays empty."""
    config = parse_database_url("postgresql://postgres@127.0.0.1/test", base_dir=BASE_DIR)

    assert config["ENGINE"] == "django.db.backends.postgresql"
    assert (config["USER"], config["PASSWORD"], config["HOST"], config["PORT"]) == (
        "postgres",
        "",
        "127.0.0.1",
        "",
    )
    assert config["NAME"] == "test"


def test_parse_sqlite_urls(tmp_path: Path) -> None:
    """sqlite:///name is relative to the project, sqlite:////path is absolute."""
    relative = parse_database_url("sqlite:///data/db.sqlite3", base_dir=tmp_path)
    absolute = parse_database_url("sqlite:////var/lib/sl5r/db.sqlite3", base_dir=tmp_path)

    assert relative["ENGINE"] == "sl5r.serving.sqlite"
    assert relative["NAME"] == tmp_path / "data" / "db.sqlite3"
    assert absolute["NAME"] == Path("/var/lib/sl5r/db.sqlite3")
    assert absolute["OPTIONS"]["transaction_mode"] == "IMMEDIATE"


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("mysql://root@localhost/test", "unsupported scheme"),
        ("postgres://postgres@localhost/", "database name is missing"),
        ("postgres://postgres@localhost:port/test", "port is not a number"),
        ("sqlite://", "file name is missing"),
    ],
)
def test_parse_database_url_refuses_bad_urls(url: str, problem: str) -> None:
    """A URL that cannot be used is a configuration error naming DATABASE_URL."""
    with pytest.raises(ImproperlyConfigured, match=f"DATABASE_URL: .*{problem}"):
        parse_database_url(url, base_dir=BASE_DIR)


def test_env_helpers() -> None:
    """Booleans accept the usual words; lists are comma-separated and trimmed."""
    env = {"A": "Yes", "B": "off", "C": "maybe", "L": " a.example, b.example ,,"}

    assert env_bool(env, "A", default=False) is True
    assert env_bool(env, "B", default=True) is False
    assert env_bool(env, "MISSING", default=True) is True
    with pytest.raises(ImproperlyConfigured, match="C: expected a boolean"):
        env_bool(env, "C", default=False)
    assert env_list(env, "L", default=[]) == ["a.example", "b.example"]
    assert env_list(env, "MISSING", default=["x"]) == ["x"]


def test_sqlite_connections_use_wal(tmp_path: Path, django_db_blocker: Any) -> None:
    """A SQLite connection made from the settings runs in WAL mode with IMMEDIATE writes."""
    handler = ConnectionHandler({"default": sqlite_database(tmp_path / "wal.sqlite3")})
    connection = handler["default"]
    # A private connection to a throw-away file, not the test database.
    with django_db_blocker.unblock():
        try:
            with connection.cursor() as cursor:
                cursor.execute("PRAGMA journal_mode")
                journal_mode = cursor.fetchone()[0]
        finally:
            connection.close()

    assert journal_mode == "wal"
    assert connection.transaction_mode == "IMMEDIATE"


# --- The settings module ---------------------------------------------------------------


def test_embedded_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    """No environment: SQLite in WAL mode, in-memory channels, in-process clock, DEBUG on."""
    settings = load_settings(monkeypatch)

    database = settings["DATABASES"]["default"]
    assert database["ENGINE"] == "sl5r.serving.sqlite"
    assert database["NAME"] == BASE_DIR / "db.sqlite3"
    assert "journal_mode=WAL" in database["OPTIONS"]["init_command"]
    assert database["OPTIONS"]["transaction_mode"] == "IMMEDIATE"
    layer = settings["CHANNEL_LAYERS"]["default"]["BACKEND"]
    assert layer == "channels.layers.InMemoryChannelLayer"
    assert settings["SL5R_CLOCK"] == "inprocess"
    assert settings["SL5R_ORDER_SETTLE_SECONDS"] == 2.0
    assert settings["DEBUG"] is True
    assert settings["TIME_ZONE"] == "UTC"
    assert "CELERY_TASK_ALWAYS_EAGER" not in settings
    assert [code for code, _name in settings["LANGUAGES"]] == ["en", "ru"]
    assert settings["LOCALE_PATHS"] == [BASE_DIR / "locale"]
    assert settings["INSTALLED_APPS"][0] == "daphne"
    assert "django.middleware.locale.LocaleMiddleware" in settings["MIDDLEWARE"]


def test_database_url_switches_to_postgresql(monkeypatch: pytest.MonkeyPatch) -> None:
    """DATABASE_URL=postgres://… makes PostgreSQL the default database."""
    settings = load_settings(monkeypatch, DATABASE_URL="postgres://root@127.0.0.1:5432/test")

    database = settings["DATABASES"]["default"]
    assert database["ENGINE"] == "django.db.backends.postgresql"
    assert (database["USER"], database["HOST"], database["PORT"], database["NAME"]) == (
        "root",
        "127.0.0.1",
        "5432",
        "test",
    )


def test_postgresql_connections_give_up_on_a_machine_that_stopped_answering(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PostgreSQL on a machine gone from the network: a connection is given up after 3 s, a
    query unacknowledged for 5 s fails (a 503, tests/hosts), and the URL can say otherwise."""
    settings = load_settings(monkeypatch, DATABASE_URL="postgres://root@10.0.0.20:5432/sl5r")
    options = settings["DATABASES"]["default"]["OPTIONS"]
    assert (options["connect_timeout"], options["tcp_user_timeout"], options["keepalives"]) == (
        3,
        5000,
        1,
    )

    settings = load_settings(
        monkeypatch, DATABASE_URL="postgres://root@10.0.0.20:5432/sl5r?connect_timeout=10"
    )
    assert settings["DATABASES"]["default"]["OPTIONS"]["connect_timeout"] == "10"


def test_sqlite_has_no_network_timeouts(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings(monkeypatch)
    assert "connect_timeout" not in settings["DATABASES"]["default"].get("OPTIONS", {})


def test_redis_url_switches_channels_and_celery(monkeypatch: pytest.MonkeyPatch) -> None:
    """REDIS_URL moves the channel layer and the Celery broker and results to Redis."""
    url = "redis://127.0.0.1:6379/2"
    settings = load_settings(monkeypatch, REDIS_URL=url, SL5R_CLOCK="celery")

    layer = settings["CHANNEL_LAYERS"]["default"]
    assert layer["BACKEND"] == "channels_redis.core.RedisChannelLayer"
    (host,) = layer["CONFIG"]["hosts"]
    assert host["address"] == url
    # No read timeout: redis-py's default of 5 s closes idle websockets.
    assert host["socket_timeout"] is None
    assert host["retry"].get_retries() == 1
    assert settings["CELERY_BROKER_URL"] == url
    assert settings["CELERY_RESULT_BACKEND"] == url
    assert settings["SL5R_CLOCK"] == "celery"


def test_redis_url_puts_the_cache_on_redis_so_every_process_shares_the_rate_limits(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "redis://127.0.0.1:6379/2"
    cache = load_settings(monkeypatch, REDIS_URL=url)["CACHES"]["default"]

    assert cache["BACKEND"] == "django.core.cache.backends.redis.RedisCache"
    assert cache["LOCATION"] == url
    # A Redis that hangs holds an order up for a second at most (the limiter then lets it by).
    assert cache["OPTIONS"] == {"socket_connect_timeout": 1, "socket_timeout": 1}


def test_without_redis_the_cache_is_the_process_own_memory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cache = load_settings(monkeypatch)["CACHES"]["default"]

    assert cache["BACKEND"] == "django.core.cache.backends.locmem.LocMemCache"


def test_no_proxy_is_trusted_unless_named(monkeypatch: pytest.MonkeyPatch) -> None:
    assert load_settings(monkeypatch)["SL5R_TRUSTED_PROXIES"] == []
    named = load_settings(monkeypatch, SL5R_TRUSTED_PROXIES="10.0.0.10, 10.0.1.0/24")
    assert named["SL5R_TRUSTED_PROXIES"] == ["10.0.0.10", "10.0.1.0/24"]


def test_rate_limits_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    settings = load_settings(monkeypatch, SL5R_RATE_LIMITS="joins=3/hour, orders=off")

    assert settings["SL5R_RATE_LIMITS"] == {"joins": "3/hour", "orders": None}
    assert load_settings(monkeypatch)["SL5R_RATE_LIMITS"] == {}


def test_the_channel_layer_serves_at_once_after_redis_restarts(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Connections the layer pooled before Redis died are stale once it is back; the
    layer's first group change must still succeed (a page rejoining its group after the
    restart was refused for ~10 s of its backoff when each stale connection failed once)."""
    redis_server = RedisServer(tmp_path).start()
    settings = load_settings(monkeypatch, REDIS_URL=redis_server.url())
    config = settings["CHANNEL_LAYERS"]["default"]["CONFIG"]

    async def scenario() -> list[str]:
        layer = RedisChannelLayer(**config)
        channels = [await layer.new_channel() for _ in range(6)]
        # given: several connections pooled, then Redis killed and started again empty
        await asyncio.gather(*(layer.group_add("g", channel) for channel in channels))
        redis_server.kill()
        redis_server.start()
        # when: the layer is used again, as a reconnecting page and a broadcast use it
        failures = []
        for channel in channels:
            try:
                await layer.group_add("g", channel)
            except Exception as error:  # the very failure this test is about
                failures.append(f"{type(error).__name__}: {error}")
        await layer.group_send("g", {"type": "hello"})
        for channel in channels:
            try:
                await asyncio.wait_for(layer.receive(channel), 5)
            except asyncio.TimeoutError:
                failures.append(f"{channel} heard nothing")
        await layer.flush()
        return failures

    try:
        # then: nothing failed and the group works
        assert asyncio.run(scenario()) == []
    finally:
        redis_server.kill()


def test_secret_key_turns_on_production_security(monkeypatch: pytest.MonkeyPatch) -> None:
    """With SECRET_KEY and no DEBUG, DEBUG is off and HTTPS and secure cookies are on."""
    settings = load_settings(
        monkeypatch,
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="referee.example.com",
        CSRF_TRUSTED_ORIGINS="https://referee.example.com",
        TIME_ZONE="Europe/Moscow",
    )

    assert settings["DEBUG"] is False
    assert settings["SECRET_KEY"] == PRODUCTION_KEY
    assert settings["ALLOWED_HOSTS"] == ["referee.example.com"]
    assert settings["CSRF_TRUSTED_ORIGINS"] == ["https://referee.example.com"]
    assert settings["TIME_ZONE"] == "Europe/Moscow"
    assert settings["SECURE_SSL_REDIRECT"] is True
    assert settings["SESSION_COOKIE_SECURE"] is True
    assert settings["CSRF_COOKIE_SECURE"] is True
    assert settings["SECURE_HSTS_SECONDS"] > 0
    assert "SECURE_PROXY_SSL_HEADER" not in settings


def test_debug_can_be_forced_on_with_a_secret_key(monkeypatch: pytest.MonkeyPatch) -> None:
    """DEBUG=1 wins over the SECRET_KEY default; the production switches stay off."""
    settings = load_settings(monkeypatch, SECRET_KEY=PRODUCTION_KEY, DEBUG="1")

    assert settings["DEBUG"] is True
    assert "SECURE_SSL_REDIRECT" not in settings


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"DEBUG": "0"}, "SECRET_KEY must be set"),
        ({"SL5R_CLOCK": "sundial"}, "SL5R_CLOCK: expected one of inprocess, celery"),
        ({"SL5R_CLOCK": "celery"}, "needs REDIS_URL"),
        ({"SL5R_HTTP": "gunicorn"}, "SL5R_HTTP: expected one of threads, django, got 'gunicorn'"),
        ({"DATABASE_URL": "mysql://x/y"}, "DATABASE_URL"),
        ({"SL5R_ORDER_SETTLE_SECONDS": "soon"}, "SL5R_ORDER_SETTLE_SECONDS: expected a number"),
        ({"SL5R_ORDER_SETTLE_SECONDS": "-1"}, "SL5R_ORDER_SETTLE_SECONDS: between 0 and 30"),
        ({"SL5R_ORDER_SETTLE_SECONDS": "31"}, "SL5R_ORDER_SETTLE_SECONDS: between 0 and 30"),
        ({"SL5R_ORDER_SETTLE_SECONDS": "nan"}, "SL5R_ORDER_SETTLE_SECONDS: between 0 and 30"),
        ({"SL5R_RATE_LIMITS": "joins"}, "SL5R_RATE_LIMITS: expected scope=rate"),
        ({"SL5R_RATE_LIMITS": "joins=3/fortnight"}, "rate '3/fortnight' for joins"),
    ],
)
def test_bad_configuration_is_refused(
    monkeypatch: pytest.MonkeyPatch, env: dict[str, str], problem: str
) -> None:
    """A configuration that cannot work stops the start with a clear message."""
    with pytest.raises(ImproperlyConfigured, match=problem):
        load_settings(monkeypatch, **env)


@pytest.mark.parametrize("database_url", ["", "postgres://root@127.0.0.1:5432/test"])
def test_http_is_served_on_threads_that_keep_their_connections_by_default(
    monkeypatch: pytest.MonkeyPatch, database_url: str
) -> None:
    """On both databases the pool of threads measured faster than Django's ASGI handler
    (benchmarks/README.md): it is the default, and its threads keep their connections."""
    settings = load_settings(monkeypatch, DATABASE_URL=database_url)

    database = settings["DATABASES"]["default"]
    assert settings["SL5R_HTTP"] == "threads"
    assert (database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"]) == (None, True)
    assert "pool" not in database["OPTIONS"]


def test_djangos_asgi_handler_borrows_postgresql_connections_from_a_pool(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SL5R_HTTP=django: a thread per request cannot keep a connection; on PostgreSQL it
    takes one from psycopg's pool, checked, and waits a bounded time for it."""
    settings = load_settings(
        monkeypatch, SL5R_HTTP=" Django ", DATABASE_URL="postgres://root@127.0.0.1:5432/test"
    )

    database = settings["DATABASES"]["default"]
    assert settings["SL5R_HTTP"] == "django"
    assert (database["CONN_MAX_AGE"], database["CONN_HEALTH_CHECKS"]) == (0, True)
    assert database["OPTIONS"]["pool"] == {"min_size": 4, "max_size": 16, "timeout": 5}


def test_djangos_asgi_handler_on_sqlite_opens_a_connection_per_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    settings = load_settings(monkeypatch, SL5R_HTTP="django")

    database = settings["DATABASES"]["default"]
    assert database["CONN_MAX_AGE"] == 0
    assert "pool" not in database["OPTIONS"]


@pytest.mark.parametrize(("value", "seconds"), [("0", 0.0), ("0.5", 0.5), ("30", 30.0), (" ", 2.0)])
def test_the_order_settle_window_comes_from_the_environment(
    monkeypatch: pytest.MonkeyPatch, value: str, seconds: float
) -> None:
    """How long the clocks wait after a deadline for orders that arrived in time (R4)."""
    settings = load_settings(monkeypatch, SL5R_ORDER_SETTLE_SECONDS=value)
    assert settings["SL5R_ORDER_SETTLE_SECONDS"] == seconds


@pytest.mark.slow
def test_deploy_check_is_clean_with_production_environment(tmp_path: Path) -> None:
    """`manage.py check --deploy` reports nothing with a production environment."""
    env = {name: value for name, value in os.environ.items() if name not in CONFIG_VARIABLES}
    env.update(
        SECRET_KEY=PRODUCTION_KEY,
        ALLOWED_HOSTS="referee.example.com",
        CSRF_TRUSTED_ORIGINS="https://referee.example.com",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
    )

    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
    )

    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


def _deploy_check(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
    )


@pytest.mark.slow
def test_deploy_check_is_clean_with_the_cluster_settings_behind_tls() -> None:
    """The cluster's environment (sl5r/cluster.py) on several machines, TLS ending at the
    load balancer: `check --deploy` reports nothing (docs/deployment.md, "Production
    deployment")."""
    from sl5r.cluster import cluster_environment

    base = {name: value for name, value in os.environ.items() if name not in CONFIG_VARIABLES}
    env = cluster_environment(
        {
            **base,
            "ALLOWED_HOSTS": "referee.example.com",
            "CSRF_TRUSTED_ORIGINS": "https://referee.example.com",
            "SECURE_SSL_REDIRECT": "1",
            "SECURE_PROXY_SSL_HEADER": "1",
        },
        secret_key=PRODUCTION_KEY,
    )

    result = _deploy_check(env)

    assert result.returncode == 0, result.stderr + result.stdout
    assert "no issues" in result.stdout


@pytest.mark.slow
def test_deploy_check_of_the_local_cluster_only_notes_its_plain_http() -> None:
    """`make cluster` on one machine serves plain HTTP on 127.0.0.1, so it turns the HTTPS
    redirect off; that is the one thing `check --deploy` reports about it."""
    from sl5r.cluster import cluster_environment

    base = {name: value for name, value in os.environ.items() if name not in CONFIG_VARIABLES}
    env = cluster_environment(base, secret_key=PRODUCTION_KEY)

    result = _deploy_check(env)

    assert result.returncode == 1
    assert "(security.W008)" in result.stderr
    assert "System check identified 1 issue" in result.stderr
