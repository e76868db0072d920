from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import settings as hypothesis_settings

from tests.service_checks import (
    POSTGRES_URL,
    REDIS_URL,
    in_ci,
    postgres_problem,
    redis_problem,
    require_service,
)
from tests.venue_server import Venue, venue_environment, venue_starter

if TYPE_CHECKING:
    from referees.models import Tournament

# The tests' timing assumes that the clock resolves a turn at its deadline, as it did before
# the settle window (SL5R_ORDER_SETTLE_SECONDS, R4); tests of the window set it themselves.
# This variable reaches only subprocesses (servers, Celery workers, the cluster) that take
# os.environ: pytest-django has read the settings (django.setup) before it imports this file,
# so in this process the fixture below does it.
os.environ["SL5R_ORDER_SETTLE_SECONDS"] = "0"
# The venues, clusters and servers with DEBUG off that tests start run collectstatic; each
# pytest-xdist worker gives them its own folder (kept between runs, so it is incremental), so
# that two of them started at once on two workers never rewrite the same manifest.
BASE_DIR = Path(__file__).resolve().parents[1]
WORKER = os.environ.get("PYTEST_XDIST_WORKER", "main")
os.environ["STATIC_ROOT"] = str(BASE_DIR / "var" / "test-static" / WORKER)

# Hypothesis: in CI every run draws the same examples (derandomize) and replays nothing from a
# local example database, so two runs of one commit test the same cases in the same time; a
# developer's run keeps exploring new ones and remembers what failed. The number of examples
# is each test's own and the same in both. HYPOTHESIS_PROFILE chooses one by hand.
hypothesis_settings.register_profile(
    "ci", derandomize=True, database=None, print_blob=True, deadline=None
)
hypothesis_settings.register_profile("dev", deadline=None)
hypothesis_settings.load_profile(
    os.environ.get("HYPOTHESIS_PROFILE") or ("ci" if in_ci() else "dev")
)


# pytest-xdist (`make test` runs `--dist loadgroup`) sends each test to whichever worker is
# free, except the tests of one xdist_group, which go to one worker together:
# - Redis: a module in REDIS_DATABASES has Redis databases of its own (``redis_url`` and,
#   for the Celery tests, its ``CELERY_REDIS_DB``): its tests are one group, and run beside
#   the other modules'. Every other test on Redis (the cluster's, which share database 12)
#   is in the one group "redis", on database 15 (tests/service_checks.py).
# - the browser tests, one group: one served site and one Chromium for all of them (their
#   fixtures are package-scoped), not one per worker.
# - a module whose tests share a served site (tests/abuse's module-scoped ``served_site``).
SHARED_REDIS_FIXTURE = "redis_url"
# The ``redis_url`` database of each module that has its own. A database is never shared:
# the Celery modules' broker databases (``CELERY_REDIS_DB``) are 9, 11, 13 and 14, the
# cluster's 12, the shared group's 15; tests/test_test_groups.py checks the numbers apart.
REDIS_DATABASES = {
    "tests/battles/web/test_flow.py": 1,
    "tests/referees/live/test_consumers.py": 2,
    "tests/referees/services/test_waiting_orders.py": 3,
    "tests/referees/live/test_hubs.py": 4,
    "tests/referees/http/test_ratelimit.py": 5,
    "tests/test_backing_services.py": 6,
    "tests/referees/test_tasks_celery.py": 7,
    "tests/referees/test_tournament_e2e.py": 8,
    "tests/faults/test_service_faults.py": 9,  # its broker is the test's own redis-server
    "tests/faults/test_celery_faults.py": 10,
}
MODULE_SERVER_FIXTURES = frozenset({"served_site"})


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        one_database = item.get_closest_marker("one_database")
        if one_database is not None and not _reason(one_database):
            raise pytest.UsageError(
                f"{item.nodeid}: one_database needs a sentence saying why the database makes "
                'no difference to this test: @pytest.mark.one_database("...")'
            )
        names = getattr(item, "fixturenames", ())
        if item.get_closest_marker("xdist_group") is not None:
            continue
        if SHARED_REDIS_FIXTURE in names:
            module = item.nodeid.split("::", 1)[0]
            group = f"redis:{module}" if module in REDIS_DATABASES else "redis"
        elif item.nodeid.startswith("tests/browser/"):
            group = "browser"
        elif MODULE_SERVER_FIXTURES.intersection(names):
            group = item.nodeid.split("::", 1)[0]
        else:
            continue
        item.add_marker(pytest.mark.xdist_group(group))


def _reason(mark: pytest.Mark) -> str:
    reason = mark.args[0] if mark.args else mark.kwargs.get("reason", "")
    return reason.strip() if isinstance(reason, str) else ""


@pytest.fixture(autouse=True)
def _no_order_settle(settings: Any) -> None:
    """In-process clocks resolve at the deadline itself, as the tests' timing expects."""
    settings.SL5R_ORDER_SETTLE_SECONDS = 0.0


@pytest.fixture(autouse=True)
def _order_frames_forgotten() -> Iterator[None]:
    """Each test starts without the order frames a process keeps (order_frame.py).

    A test's rows are rolled back after it, so the next test's tournament may get the same
    id and frame version with other players: the site never reuses either (ids come from
    AUTOINCREMENT or a sequence, and a venue restore needs the server stopped).
    """
    from referees.services.order_frame import order_frames_forget

    order_frames_forget()
    yield
    order_frames_forget()


@pytest.fixture(autouse=True)
def _default_language() -> Iterator[None]:
    """Every test starts and ends in the default language (English).

    A request in Russian (LocaleMiddleware) leaves Russian active in the test's thread, and
    the services translate what they refuse: a later test calling a service directly would
    read its refusal in Russian.
    """
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(scope="session")
def django_db_setup(django_db_setup: None) -> Iterator[None]:
    """pytest-django's test database, with the connections of long-lived threads closed first.

    Connections are kept for the life of a thread (``CONN_MAX_AGE=None``), and asgiref's
    thread for ``sync_to_async`` (the consumers' database calls) outlives every test; left
    open, its connection keeps PostgreSQL from dropping the test database.
    """
    yield
    from asgiref.sync import SyncToAsync
    from django.db import connections

    executor = SyncToAsync.single_thread_executor
    if executor is not None:
        executor.submit(connections.close_all).result(timeout=30)


@pytest.fixture(scope="module")
def redis_url(request: pytest.FixtureRequest) -> str:
    """URL of a Redis server that answers (skipped without one, a failure in CI), on the
    module's own database where it has one (``REDIS_DATABASES``)."""
    from urllib.parse import urlsplit, urlunsplit

    require_service("Redis", redis_problem(REDIS_URL))
    module = request.node.nodeid.split("::", 1)[0]
    number = REDIS_DATABASES.get(module)
    if number is None:
        return REDIS_URL
    parts = urlsplit(REDIS_URL)
    return urlunsplit((parts.scheme, parts.netloc, f"/{number}", parts.query, ""))


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of a PostgreSQL database that answers; skipped without one, a failure in CI."""
    require_service("PostgreSQL", postgres_problem(POSTGRES_URL))
    return POSTGRES_URL


@pytest.fixture
def make_running_tournament(django_user_model: Any) -> Callable[..., Tournament]:
    """Build a tournament through the services, up to turn 1 open; call it inside a DB test.

    ``tests.building.running_tournament_build`` says what it builds; each call's tournament
    is named "Fixture tournament N" unless ``name`` is given.
    """
    from tests.building import running_tournament_build

    made = 0

    def make(*, name: str = "", **options: Any) -> Tournament:
        nonlocal made
        made += 1
        return running_tournament_build(
            user_model=django_user_model, name=name or f"Fixture tournament {made}", **options
        )

    return make


@pytest.fixture(scope="session")
def django_db_modify_db_settings(
    django_db_modify_db_settings_parallel_suffix: None,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Test on a SQLite file in WAL mode, as the embedded setup runs, not in memory.

    pytest-django's default in-memory SQLite shares one cache between threads, and there two
    writers fail at once with "database table is locked" instead of queueing on the busy
    timeout as they do in a file. Tests in which threads write (the clock, racing callers,
    consumers) need the real behaviour. PostgreSQL is left as it is.
    """
    from django.conf import settings

    database = settings.DATABASES["default"]
    if database["ENGINE"] in ("django.db.backends.sqlite3", "sl5r.serving.sqlite"):
        folder = tmp_path_factory.mktemp("sqlite")
        database.setdefault("TEST", {})["NAME"] = str(folder / "test.sqlite3")


@pytest.fixture
def postgres_default_database(postgres_url: str, transactional_db: None) -> None:
    """A committed-transaction test on PostgreSQL as Django's default database.

    The first ``make test`` pass runs on SQLite, where this skips; the second pass sets
    ``DATABASE_URL`` to the PostgreSQL server and runs these tests there.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip(
            "the default database is not PostgreSQL; `make test` runs this in its "
            "PostgreSQL pass (DATABASE_URL=postgres://…)"
        )


@pytest.fixture
def subprocess_database_url(transactional_db: None) -> str:
    """``DATABASE_URL`` for a subprocess (server, worker) to open this test's database.

    The test commits its data (``transactional_db``) so that the subprocess sees it. Works
    with the SQLite test file and with PostgreSQL; an in-memory database cannot be shared.
    """
    return shared_test_database_url()


def shared_test_database_url() -> str:
    """``DATABASE_URL`` of the test database (set up already); skips when it cannot be shared.

    For fixtures wider than one test (a module's cluster) that cannot use
    ``subprocess_database_url``; they commit their data themselves.
    """
    from urllib.parse import quote, urlencode, urlunsplit

    from django.db import connection

    db = connection.settings_dict
    if connection.vendor == "sqlite":
        name = str(db["NAME"])
        if name.startswith("file:") or name == ":memory:":
            pytest.skip("the SQLite test database is in memory: a subprocess cannot open it")
        return f"sqlite:///{Path(name).resolve()}"  # four slashes: an absolute path
    if connection.vendor != "postgresql":
        pytest.skip(f"no database URL for a {connection.vendor} database")
    user = quote(db["USER"] or "", safe="")
    password = quote(db["PASSWORD"] or "", safe="")
    credentials = f"{user}:{password}@" if password else (f"{user}@" if user else "")
    port = f":{db['PORT']}" if db["PORT"] else ""
    query = urlencode(db.get("OPTIONS") or {})
    return urlunsplit(
        ("postgres", f"{credentials}{db['HOST']}{port}", f"/{quote(db['NAME'])}", query, "")
    )


@pytest.fixture
def rate_window_still(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hold the rate limiter's clock 30 s into a window for the test.

    Its windows are fixed (referees/http/ratelimit.py): a test whose requests straddled a
    window's edge would see the count start again and fail now and then.
    """
    from types import SimpleNamespace

    from referees.http import ratelimit

    monkeypatch.setattr(ratelimit, "time", SimpleNamespace(time=lambda: 1_800_000_030.0))


@pytest.fixture
def venue_env(tmp_path: Path) -> dict[str, str]:
    """The environment ``make venue`` runs in for a test: a scratch database and folder."""
    return venue_environment(tmp_path)


@pytest.fixture
def start_venue(venue_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[..., Venue]]:
    """``start_venue(port=None, extra=None)``: ``make venue`` running (tests/venue_server.py)."""
    starter = venue_starter(venue_env, tmp_path)
    yield next(starter)
    starter.close()
