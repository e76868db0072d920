"""Django settings for SL5R Referee.

The defaults give the embedded setup: one machine, SQLite in WAL mode, an in-memory channel
layer and the in-process turn clock; nothing else to install. Production is configured with
environment variables (see docs/deployment.md, "Configuration"):

- ``DATABASE_URL`` (``postgres://user:password@host:port/db``) switches to PostgreSQL;
- ``REDIS_URL`` switches the channel layer and the Celery broker/result backend to Redis;
- ``SECRET_KEY`` given turns ``DEBUG`` off unless ``DEBUG`` says otherwise, and with ``DEBUG``
  off the HTTPS and cookie protections are on.

Apps never read the environment themselves: they read ``django.conf.settings`` when they
need a value, never at import time.
"""

from __future__ import annotations

import os
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured
from django.utils.translation import gettext_lazy as _

from sl5r.env import (
    env_admin_path,
    env_bool,
    env_int,
    env_list,
    env_networks,
    env_rates,
    env_seconds,
    parse_database_url,
    sqlite_database,
)
from sl5r.venue import site_url_parse, tls_files, venue_network, venue_secret_key

BASE_DIR = Path(__file__).resolve().parent.parent
# Lower case: not a setting, so never shown on a debug page.
_env = os.environ

# --- Core --------------------------------------------------------------------------------

# `make venue` (SL5R_VENUE=1): the judge's laptop serving the phones on a venue's Wi-Fi
# (sl5r/venue.py). DEBUG off, a secret key kept in VENUE_DIR, every address of this machine
# allowed, plain HTTP unless TLS_CERT and TLS_KEY are given.
SL5R_VENUE = env_bool(_env, "SL5R_VENUE", default=False)
SL5R_VENUE_DIR = Path(_env.get("VENUE_DIR", "").strip() or BASE_DIR / "var" / "venue").resolve()
SL5R_TLS = tls_files(_env) if SL5R_VENUE else None
SL5R_VENUE_HOST = _env.get("HOST", "").strip() or "0.0.0.0"
SL5R_VENUE_PORT = env_int(_env, "PORT", default=8000)

_secret_key = _env.get("SECRET_KEY", "")
if SL5R_VENUE and not _secret_key:
    _secret_key = venue_secret_key(SL5R_VENUE_DIR)
DEBUG = env_bool(_env, "DEBUG", default=not _secret_key)
if not _secret_key and not DEBUG:
    raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off")
# The development key is only ever used with DEBUG on.
SECRET_KEY = _secret_key or "django-insecure-sl5r-development-key-never-use-in-production"

ALLOWED_HOSTS = env_list(_env, "ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list(_env, "CSRF_TRUSTED_ORIGINS", default=[])
# The base address of every link that leaves the site (join links, QR codes, the big
# screen, printed addresses); empty: the address of the request that builds the link.
SL5R_SITE_URL = site_url_parse(_env["SITE_URL"]) if _env.get("SITE_URL", "").strip() else ""
SL5R_VENUE_WARNING = ""
# Under `make venue`: every base address the links could carry (one per network address of
# the laptop); a judge may choose another than SL5R_SITE_URL on the console.
SL5R_SITE_CANDIDATES: list[str] = []
if SL5R_VENUE:
    _venue = venue_network(environ=_env, port=SL5R_VENUE_PORT, tls=SL5R_TLS is not None)
    ALLOWED_HOSTS = _venue.hosts + env_list(_env, "ALLOWED_HOSTS", default=[])
    CSRF_TRUSTED_ORIGINS = _venue.csrf_origins + CSRF_TRUSTED_ORIGINS
    SL5R_SITE_URL = _venue.site_url
    SL5R_VENUE_WARNING = _venue.warning
    SL5R_SITE_CANDIDATES = _venue.candidates

INSTALLED_APPS = [
    # daphne first: its runserver replaces Django's with an ASGI one.
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "channels",
    # ninja's own static files: /api/docs works at a venue without internet.
    "ninja",
    "strategic_map",
    "referees",
    "battles",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # Outside everything that answers early (503, 400, 404, static files), so that every
    # response carries them; see "Security headers" below.
    "csp.middleware.CSPMiddleware",
    "sl5r.serving.permissions_policy.PermissionsPolicyMiddleware",
    "sl5r.serving.database_outage.DatabaseOutageMiddleware",  # a refused connection: 503, not 500
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",
    "sl5r.serving.nul_characters.NulCharacterMiddleware",  # U+0000 anywhere: 400, not a 500
    "sl5r.serving.admin_reach.AdminReachMiddleware",  # the admin: only from SL5R_ADMIN_NETWORKS
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, not second as WhiteNoise suggests: it is sync-only, and placed early it makes
    # every request hop between the event loop and a thread many times under ASGI. Static
    # files still reach it (the middleware above does little for them).
    "whitenoise.middleware.WhiteNoiseMiddleware",
]

ROOT_URLCONF = "sl5r.urls"
WSGI_APPLICATION = "sl5r.wsgi.application"
ASGI_APPLICATION = "sl5r.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- Database ----------------------------------------------------------------------------

_database_url = _env.get("DATABASE_URL", "").strip()
DATABASES = {
    "default": (
        parse_database_url(_database_url, base_dir=BASE_DIR)
        if _database_url
        else sqlite_database(BASE_DIR / "db.sqlite3")
    ),
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # PostgreSQL on another machine that drops off the network answers nothing: without
    # these a connection waits for the kernel's retransmissions (about 15 minutes) and a
    # new one for its SYNs (2 minutes), so requests hang until the balancer gives up. With
    # them a request gets its clear 503 within about 5 s (tests/hosts), and the connection
    # is made again once the machine is back. libpq's names; DATABASE_URL's query wins.
    for _name, _value in {
        "connect_timeout": 3,  # seconds
        "tcp_user_timeout": 5000,  # ms a sent query may go unacknowledged
        "keepalives": 1,  # and an idle one, waiting for a result, is probed
        "keepalives_idle": 10,
        "keepalives_interval": 2,
        "keepalives_count": 3,
    }.items():
        DATABASES["default"]["OPTIONS"].setdefault(_name, _value)

# What serves HTTP (sl5r/asgi.py): "threads", Django's WSGI handler on a fixed pool of
# long-lived threads (sl5r/serving/threaded_http.py), or "django", Django's own ASGI handler, which
# runs each request in a thread of its own. Threads on both databases: under bursts of 48
# orders the stock handler took ×1.5-2 as long at the median and ×1.15-2.4 at p99
# (benchmarks/README.md, "Django's ASGI handler beside the kept threads").
SL5R_HTTP_CHOICES = ("threads", "django")
SL5R_HTTP = _env.get("SL5R_HTTP", "").strip().lower() or "threads"
if SL5R_HTTP not in SL5R_HTTP_CHOICES:
    raise ImproperlyConfigured(
        f"SL5R_HTTP: expected one of {', '.join(SL5R_HTTP_CHOICES)}, got {SL5R_HTTP!r}"
    )
if SL5R_HTTP == "threads":
    # The threads live as long as the process, so connections are kept for its life.
    DATABASES["default"]["CONN_MAX_AGE"] = None
else:
    # A thread made per request cannot keep a connection (Django's ASGI handler wants
    # CONN_MAX_AGE 0); on PostgreSQL each request borrows one from psycopg's pool instead,
    # 4 kept open, up to 16 in a burst. A request waits at most 5 s for one, so that a
    # database refusing connections gets its 503 after 5 s (threads: at once), not 30.
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["OPTIONS"]["pool"] = {"min_size": 4, "max_size": 16, "timeout": 5}
# Connections are checked before each request's first query, or when taken from the pool
# (a database that restarted is reconnected to instead of failing the request).
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
# Enough threads that the orders of a burst are in hand together: they are then stored
# together, one transaction for those waiting (referees/services/orders.py, group commit),
# which measured ×1.7 faster on SQLite with 8 threads than with 1, and ×2.5 on PostgreSQL
# with 16 than with 4 (benchmarks/README.md, order_burst.py of 2026-12-02). On SQLite one
# thread for each of the 48 Generals R1 allows: with 8, all 8 waited on one batch while
# the rest of the burst queued for a thread, and a burst's p99 was ×1.2-1.4 longer
# (2026-12-03); the 40 more threads cost 24 MB. On PostgreSQL each thread keeps a
# connection, and two processes of 48 would use up the server's default 100.
SL5R_HTTP_THREADS = env_int(
    _env,
    "SL5R_HTTP_THREADS",
    default=48 if DATABASES["default"]["ENGINE"] == "sl5r.serving.sqlite" else 16,
)
if SL5R_HTTP_THREADS < 1:
    raise ImproperlyConfigured(f"SL5R_HTTP_THREADS: at least 1, got {SL5R_HTTP_THREADS}")

# --- Live updates and background work ----------------------------------------------------

REDIS_URL = _env.get("REDIS_URL", "").strip()

if REDIS_URL:
    from redis.asyncio.retry import Retry
    from redis.backoff import NoBackoff

    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                "hosts": [
                    {
                        "address": REDIS_URL,
                        # redis-py 8 times reads out after 5 s by default, which kills every
                        # idle websocket's wait on Redis (django/channels_redis#422): wait as
                        # long as needed.
                        "socket_timeout": None,
                        # A pool handed to redis-py gets no retries, so after Redis restarts
                        # every idle pooled connection fails its next command once ("closed
                        # by server"): pages then failed to rejoin their group for ~10 s of
                        # backoff. One immediate retry reconnects; with Redis still down it
                        # fails as fast as before.
                        "retry": Retry(NoBackoff(), 1),
                    }
                ],
                # channels_redis keeps every channel of a process in one Redis list, and
                # ``capacity`` bounds that list: at 100 (the default) a league's deadline
                # overflowed it and events were dropped (issue 33). A process now takes one
                # message per event per tournament it serves (referees.live.hubs), small
                # (no state), so thousands fit in a few MB; an overflow is still logged by
                # channels_redis ("... channels over capacity in group ...").
                "capacity": 5000,
            },
        },
    }
else:
    # One process only: the embedded setup runs a single Daphne.
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}

# The cache holds the rate limits' counts (referees/http/ratelimit.py). With Redis every ASGI
# process counts into the same keys, so two processes allow the limit once, not twice.
# Short timeouts: a Redis that hangs must not hold up an order (the limiter lets requests
# through while its cache does not answer).
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "sl5r",
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Limits per scope (referees/http/ratelimit.py), e.g. "joins=20/min,orders=30/min,sign_ins=10/min";
# a scope not named keeps its default, "joins=off" switches one off.
SL5R_RATE_LIMITS = env_rates(_env, "SL5R_RATE_LIMITS")

# Celery reads the CELERY_* names (sl5r/celery.py). Without Redis nothing is sent to a
# worker: the in-process clock calls the services directly, so the in-memory transport is
# only a harmless placeholder.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or "cache+memory://"
CELERY_TASK_SERIALIZER = "json"
CELERY_RESULT_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# Which clock resolves due turns: "inprocess" (a task inside the web server, the embedded
# default) or "celery" (Celery beat + worker, needs REDIS_URL).
SL5R_CLOCK_CHOICES = ("inprocess", "celery")
SL5R_CLOCK = _env.get("SL5R_CLOCK", "inprocess").strip().lower() or "inprocess"
if SL5R_CLOCK not in SL5R_CLOCK_CHOICES:
    raise ImproperlyConfigured(
        f"SL5R_CLOCK: expected one of {', '.join(SL5R_CLOCK_CHOICES)}, got {SL5R_CLOCK!r}"
    )
if SL5R_CLOCK == "celery" and not REDIS_URL:
    raise ImproperlyConfigured("SL5R_CLOCK=celery needs REDIS_URL for the broker")

# Venue backups (referees/venue/backups.py): a consistent copy of the SQLite database and the
# secret key after every resolved turn and judge board change, the newest kept.
_backup_dir = _env.get("VENUE_BACKUP_DIR", "").strip()
SL5R_BACKUP_DIR: Path | None = (
    (Path(_backup_dir).expanduser().resolve() if _backup_dir else SL5R_VENUE_DIR / "backups")
    if SL5R_VENUE
    else None
)
SL5R_BACKUP_KEEP = env_int(_env, "VENUE_BACKUP_KEEP", default=20)
if SL5R_BACKUP_KEEP < 1:
    raise ImproperlyConfigured(f"VENUE_BACKUP_KEEP: at least 1, got {SL5R_BACKUP_KEEP}")

# Every this many seconds each live-update socket is sent a pong of its own, the server's
# heartbeat (referees/live/hubs.py; live.js's HEARTBEAT_MS says the same).
SL5R_LIVE_HEARTBEAT_SECONDS = 4.0

# The in-process clock sweeps for due tournaments every this many seconds
# (referees/clock_thread.py).
SL5R_CLOCK_INTERVAL = env_seconds(_env, "SL5R_CLOCK_INTERVAL", default=1.0)
if not 0 < SL5R_CLOCK_INTERVAL <= 60:
    raise ImproperlyConfigured("SL5R_CLOCK_INTERVAL: between 0 and 60 seconds")

# R4: an order that reached the server before the deadline is carried out, even while it
# still waits for an HTTP thread. So the clocks resolve a turn this many seconds after its
# deadline, and lateness is judged by the request's arrival (sl5r/serving/threaded_http.py).
SL5R_ORDER_SETTLE_SECONDS = env_seconds(_env, "SL5R_ORDER_SETTLE_SECONDS", default=2.0)
if not 0 <= SL5R_ORDER_SETTLE_SECONDS <= 30:
    raise ImproperlyConfigured("SL5R_ORDER_SETTLE_SECONDS: between 0 and 30 seconds")
# The window above is a floor: while an order request that arrived before the deadline
# still waits to be answered, the clocks wait on, up to this long after the deadline
# (sl5r/serving/waiting_orders.py).
SL5R_ORDER_SETTLE_MAX_SECONDS = env_seconds(
    _env, "SL5R_ORDER_SETTLE_MAX_SECONDS", default=max(15.0, SL5R_ORDER_SETTLE_SECONDS)
)
if not SL5R_ORDER_SETTLE_SECONDS <= SL5R_ORDER_SETTLE_MAX_SECONDS <= 300:
    raise ImproperlyConfigured(
        "SL5R_ORDER_SETTLE_MAX_SECONDS: between SL5R_ORDER_SETTLE_SECONDS and 300 seconds"
    )

# With SL5R_CLOCK=celery, each deadline gets its own task (eta = the deadline); beat's sweep
# catches any that was lost (worker or Redis restarted). A sweep still queued after a few
# seconds is dropped: the next one does the same work, and a stopped worker does not come
# back to a pile of them.
CELERY_BEAT_SCHEDULE = {
    "clock-sweep": {
        "task": "referees.clock_sweep",
        "schedule": 2.0,
        "options": {"expires": 5.0},
    },
}

# --- Internationalisation ----------------------------------------------------------------

LANGUAGE_CODE = "en"
LANGUAGES = [
    ("en", _("English")),
    ("ru", _("Russian")),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
USE_I18N = True
TIME_ZONE = _env.get("TIME_ZONE", "UTC").strip() or "UTC"
USE_TZ = True
CELERY_TIMEZONE = TIME_ZONE

# --- Static files ------------------------------------------------------------------------

STATIC_URL = "static/"
# Where collectstatic writes the hashed, compressed files a server with DEBUG off serves: an
# operator may put them on another disk; each test worker has its own, so that two venues
# started at once never rewrite each other's manifest.
STATIC_ROOT = Path(_env.get("STATIC_ROOT", "").strip() or BASE_DIR / "staticfiles").resolve()
STATICFILES_DIRS = [BASE_DIR / "static"]
# With DEBUG on, serve the source files through the finders and pick up edits at once.
WHITENOISE_USE_FINDERS = DEBUG
WHITENOISE_AUTOREFRESH = DEBUG
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        # Hashed, compressed files need `collectstatic`; with DEBUG on, WhiteNoise serves the
        # source files straight from the finders instead.
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        ),
    },
}

# --- Authentication ----------------------------------------------------------------------

# Judges sign in on the site's own page (referees/pages/home.py), not the admin's, and land
# on the list of the tournaments they judge.
LOGIN_URL = "sign_in"
LOGIN_REDIRECT_URL = "referees:judge_home"
LOGOUT_REDIRECT_URL = "home"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# --- Security headers (every response, DEBUG or not, venue or not) -----------------------

# Content-Security-Policy (django-csp): scripts, styles, images and connections from this
# site only. The pages have no inline script (data goes in json_script blocks, which are
# application/json and never run) and no inline style; QR codes and maps are inline SVG,
# the favicon a data: URL. 'self' in connect-src also covers ws:/wss: on the same host and
# port (CSP 3; tests/browser/test_csp.py checks it in Chromium). /api/docs (ninja's Swagger
# UI from its own static files) needs nothing more. Django's debug 404/500 pages (DEBUG
# only) get no policy, so that their inline styles work.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
    },
}
# The join token is in the path of /join/<token>: never sent to another site.
SECURE_REFERRER_POLICY = "same-origin"
# sl5r/serving/permissions_policy.py: no page uses any of these.
SL5R_PERMISSIONS_POLICY = {
    feature: "()"
    for feature in (
        "accelerometer",
        "camera",
        "display-capture",
        "geolocation",
        "gyroscope",
        "magnetometer",
        "microphone",
        "midi",
        "payment",
        "usb",
    )
}

# --- Security (production) ---------------------------------------------------------------

if SL5R_VENUE:
    # Phones on a venue's Wi-Fi reach the laptop over plain HTTP unless TLS_CERT and
    # TLS_KEY are given; then Daphne serves HTTPS itself on the same port, so there is no
    # plain HTTP to redirect. No HSTS: a venue's certificate is often self-signed, and HSTS
    # would leave a phone no way past a browser warning the next time.
    SECURE_SSL_REDIRECT = False
    SECURE_HSTS_SECONDS = 0
    SESSION_COOKIE_SECURE = SL5R_TLS is not None
    CSRF_COOKIE_SECURE = SL5R_TLS is not None
elif not DEBUG:
    SECURE_SSL_REDIRECT = env_bool(_env, "SECURE_SSL_REDIRECT", default=True)
    # Load balancers probe over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SECURE_HSTS_SECONDS = env_int(_env, "SECURE_HSTS_SECONDS", default=31_536_000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool(_env, "SECURE_HSTS_INCLUDE_SUBDOMAINS", default=True)
    SECURE_HSTS_PRELOAD = env_bool(_env, "SECURE_HSTS_PRELOAD", default=True)
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # Only behind a proxy that sets X-Forwarded-Proto itself; otherwise a client could
    # claim HTTPS.
    if env_bool(_env, "SECURE_PROXY_SSL_HEADER", default=False):
        SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# --- Behind a load balancer -------------------------------------------------------------

# The addresses (or networks, "10.0.0.0/24") of the load balancers in front of the ASGI
# processes. A request from one of them is taken to come from the client its
# X-Forwarded-For names (sl5r/asgi.py, uvicorn's ProxyHeadersMiddleware), so rate limits
# count per real client; from anyone else the header is ignored, so a client cannot pick
# its own address. Empty (the default): no proxy is trusted, as for `make run` and a venue.
SL5R_TRUSTED_PROXIES = env_list(_env, "SL5R_TRUSTED_PROXIES", default=[])

# --- Django's admin --------------------------------------------------------------------

# Where the admin is served ("admin/"; "off": nowhere) and from which addresses or networks
# it answers (elsewhere it is a 404, as if it were not there). Judges never need it (every
# tournament task has its own page); the operator uses it for accounts. At a venue the
# phones share the laptop's network, so `make venue` keeps it to the laptop itself unless
# SL5R_ADMIN_NETWORKS says otherwise. Its sign-in counts wrong passwords with the site's.
SL5R_ADMIN_PATH = env_admin_path(_env, "SL5R_ADMIN_PATH", default="admin/")
SL5R_ADMIN_NETWORKS = env_networks(
    _env,
    "SL5R_ADMIN_NETWORKS",
    default=["127.0.0.0/8", "::1"] if SL5R_VENUE else ["0.0.0.0/0", "::/0"],
)

# --- Logging -----------------------------------------------------------------------------

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": _env.get("LOG_LEVEL", "INFO").upper()},
    "loggers": {
        "django": {"level": _env.get("DJANGO_LOG_LEVEL", "INFO").upper(), "propagate": True},
    },
}
