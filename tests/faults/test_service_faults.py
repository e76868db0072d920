"""The services under the site failing mid-game: Redis, the ASGI server, the database.

Each test plays the whole scenario of ``tests.faults.scenario`` (six turns of eight
Generals) against real ``manage.py serve`` processes on this test's PostgreSQL database:
the Generals send their orders over HTTP with their join tokens, and pages follow the game
over websockets as ``static/js/live.js`` does (``tests.faults.served``). One service fails
in the middle of one turn. Each run must end as the scenario ends without the fault:

- no order lost: every order answered 2xx is stored in its turn and carried out;
- every turn resolved exactly once (one ``turn_resolved`` log line per turn);
- the same fingerprint (board, turns, orders, results, battle tables, log) as the
  scenario played in this process without servers (``scenario_reference``).

The faults:

1. Redis (the channel layer and Celery's broker; ``SL5R_CLOCK=celery`` with a real worker
   and beat) killed in the middle of a turn and started again empty, as a Redis without
   persistence restarts: orders keep being accepted at once while it is down (the
   broadcast is not waited for), the pages' sockets close and reconnect, and resync over
   HTTP; the turn's tick queued in Redis is gone, and once the worker and beat are back
   on the new Redis, the deadline the judge sets is met: the turn resolves once.
2. The server stopped (SIGTERM) before a deadline and started again after it: the first
   sweep resolves the turn with its orders, once, and the next turn gets its full length
   (docs/architecture.md, "The turn clock").
3. The database refusing connections for three seconds across a deadline (``ALLOW_CONNECTIONS
   false`` and the server's connections terminated): every request gets a clear 503, an
   order sent then is not stored, the in-process clock keeps sweeping without resolving
   anything twice, and the same server serves again once the database is back.

Every turn is held open until the Generals' orders are in (``Play``), then the judge sets
its time left: through the API as at his console, or, where no server could take his
request (stopped, or its database refusing connections), through the same service in this
process. So no order races the deadline (R4: all of them are acknowledged before it), and a
deadline the story needs passed while a service was down is a moment the test waits for.

Runs in the PostgreSQL pass (``DATABASE_URL`` at PostgreSQL); the Redis killed is a
``redis-server`` of the test's own on a free port, never the shared one.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from referees.kernel.access import judge_key_create
from referees.models import Player, Tournament
from referees.services import Actor, player_token
from strategic_map.models import Order, Turn
from tests.faults.scenario import (
    SCENARIO,
    TURNS,
    Progress,
    exactly_once_problems,
    fingerprint_differences,
    fingerprint_without_clock_settings,
    orders_problems,
    scenario_fingerprint,
    scenario_reference,
    scenario_start,
    turn_progress,
)
from tests.faults.served import (
    EventLoop,
    LivePage,
    Play,
    RedisServer,
    Reply,
    Site,
    call,
    moment_wait,
    pages_open,
)
from tests.judge_clock import HELD_TURN_SECONDS
from tests.referees import celery_processes
from tests.referees.celery_processes import Service, service_tails
from tests.referees.management import test_clock_serve

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
]

CELERY_REDIS_DB = 9  # this module's number; the broker is the test's own redis-server anyway
# The time left a turn is given once its orders are in (the turns are held open until then).
TIME_LEFT_SECONDS = 1
# An upper bound. A turn opens as the one before is resolved, and is resolved at the deadline
# the judge set by the in-process clock (sweeps every 0.2 s) or by Celery (the tick at the
# deadline, beat's sweep every 2 s when the tick is lost); allowing for a restart, a slow CI.
TURN_WAIT = 30.0
# An order sent while Redis is down is answered in milliseconds; a broadcast that waited
# for Redis would take redis-py's retries (about a second and more) or hang.
ORDER_WITHOUT_REDIS_SECONDS = 2.0
SOCKET_WAIT = 15.0  # a page notices a dead socket and reconnects (backoff 1, 2, 4 s)
OUTAGE_SECONDS = 3.0
RECOVERY_WAIT = 10.0

celery_start = celery_processes.celery_start


# --- Fixtures ------------------------------------------------------------------------------


@pytest.fixture
def reference(
    postgres_default_database: None, make_running_tournament: Callable[..., Tournament]
) -> dict[str, Any]:
    """The scenario without any fault, played first (no server is running yet)."""
    return scenario_reference(make_running_tournament)


server_env = test_clock_serve.server_env


@pytest.fixture
def site_env(server_env: dict[str, str]) -> dict[str, str]:
    """A server's environment (test_clock_serve's: this test's database, the in-process
    clock, DEBUG on, the worst case for an error page: a traceback would show), logging
    what it does."""
    return {**server_env, "LOG_LEVEL": "INFO"}


@pytest.fixture
def sites(tmp_path: Path) -> Iterator[Callable[[dict[str, str]], Site]]:
    """``sites(env)``: a server, started; every one is stopped at the end."""
    made: list[Site] = []

    def make(env: dict[str, str]) -> Site:
        site = Site(env, tmp_path, name=f"serve-{len(made)}")
        made.append(site)
        return site.start()

    yield make
    for site in made:
        site.close()


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    pages = EventLoop()
    yield pages
    pages.close()


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path).start()
    yield server
    server.kill()


@pytest.fixture
def celery_env(
    own_redis: RedisServer, postgres_default_database: None, subprocess_database_url: str
) -> dict[str, str]:
    """The worker's and beat's environment (``celery_processes.celery_start`` reads it):
    this test's database, the test's own Redis as the broker."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "sl5r.settings",
        "DATABASE_URL": subprocess_database_url,
        "REDIS_URL": own_redis.url(),
        "SL5R_CLOCK": "celery",
        "LOG_LEVEL": "INFO",
        "PYTHONUNBUFFERED": "1",
    }


# --- Helpers -------------------------------------------------------------------------------


def generals_tokens(tournament: Tournament) -> dict[str, str]:
    players = Player.objects.filter(tournament=tournament, role=Player.Role.GENERAL)
    return {p.army.code: player_token(p) for p in players.select_related("army") if p.army}


def play_start(make_running_tournament: Callable[..., Tournament], site: Site) -> Play:
    """The scenario's tournament, its turns held open, played through ``site``: the Generals
    with their join tokens, the judge with an API key of his own."""
    tournament = scenario_start(make_running_tournament, turn_seconds=HELD_TURN_SECONDS)
    judge = tournament.judges.get()
    return Play(
        tournament.pk,
        generals_tokens(tournament),
        port=site.port,
        judge=judge_key_create(user=judge, label="fault test").key,
        actor=Actor.of_user(judge),
    )


def wait_for(what: str, condition: Callable[[], bool], timeout: float, *logs: str) -> None:
    end = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > end:
            pytest.fail(f"waited {timeout:g} s for {what}\n" + "\n".join(logs), pytrace=False)
        time.sleep(0.05)


def assert_the_scenario_ended_as_without_the_fault(play: Play, reference: dict[str, Any]) -> None:
    """Once, every acknowledged order, the reference's fingerprint once the judge's clock
    settings (one a turn, none in the reference) are taken out."""
    tournament_id = play.tournament_id
    assert exactly_once_problems(tournament_id) == []
    assert orders_problems(tournament_id, play.acknowledged) == []
    assert sorted(play.acknowledged) == [t for t in SCENARIO if SCENARIO[t]]
    assert [len(ids) for _, ids in sorted(play.acknowledged.items())] == [
        len(SCENARIO[t]) for t in sorted(play.acknowledged)
    ]
    actual, settings = fingerprint_without_clock_settings(
        scenario_fingerprint(tournament_id, play.progress), by=play.actor.label
    )
    assert settings == play.clock_settings == TURNS
    assert fingerprint_differences(reference, actual) == []


def assert_pages_resynced(pages: list[LivePage], *, reconnected: bool) -> None:
    """Each page ends holding the final state, and (when the fault closed its socket) has
    a socket opened again that the server greeted.

    Whether the final state came by an event on the new socket or by the resync fetch that
    follows its hello depends on when the page reconnected, which load decides: both keep
    the promise (clients resync over HTTP when they miss an event), so neither is asserted.
    """
    final = turn_progress(pages[0].tournament_id).version

    def holds_final(page: LivePage) -> bool:
        return page.version == final

    for page in pages:
        wait_for(
            f"the page (token {bool(page.token)}) to hold version {final}",
            functools.partial(page.seen, holds_final),
            SOCKET_WAIT,
        )
        if reconnected:
            assert page.seen(lambda p: p.opened >= 2 and len(p.hellos) >= 2), page_story(page)


def page_story(page: LivePage) -> str:
    """What a page saw, short enough to read in a failure (its repr is cut off)."""
    with page._lock:
        return (
            f"page (token {bool(page.token)}): opened {page.opened}, hellos {page.hellos}, "
            f"closes at {[round(t, 2) for t in page.closes]} (now {time.monotonic():.2f}), "
            f"events {[e.get('version') for e in page.events]}, "
            f"{page.events_on_socket} on the last socket, fetched {page.fetched}, "
            f"{page.fetch_failures} failed fetches"
        )


def turn_row(tournament: Tournament, number: int) -> Turn:
    row: Turn = Turn.objects.get(campaign=tournament.campaign_id, number=number)
    return row


# --- 1. Redis restarted in the middle of a turn ----------------------------------------------

REDIS_FAULT_TURN = 3  # eight orders, two meetings: half are sent before, half while down
SWEEP_RECEIVED = "Task referees.clock_sweep["  # … received: a worker's log line
CLOCKS_BACK_WAIT = 60.0  # an upper bound: Celery's reconnection backs off up to 10 s a try


def give_across_a_redis_restart(
    play: Play, turn: int, pages: list[LivePage], own_redis: RedisServer, site: Site
) -> tuple[list[Reply], Reply]:
    """Half of ``turn``'s orders, Redis killed, the other half and a page's state fetch
    while it is down, the pages' sockets closed, Redis started again (empty). The turn is
    held open throughout: its tick (for the held deadline) went with Redis.

    The replies sent while Redis was down: the orders' and the state's.
    """
    general = pages[0]
    steps = SCENARIO[turn]
    events_before = len(general.events)
    play.give(turn, steps[:4])
    wait_for(
        "the General's page to hear of the orders",
        lambda: general.seen(lambda p: len(p.events) > events_before),
        SOCKET_WAIT,
    )
    killed = time.monotonic()
    own_redis.kill()
    down = play.give(turn, steps[4:])
    state = call(site.port, "GET", f"/api/tournaments/{play.tournament_id}/state")
    wait_for(
        "every page's socket to close when Redis died",
        lambda: all(p.seen(lambda p: any(t > killed for t in p.closes)) for p in pages),
        SOCKET_WAIT,
        site.tail(),
    )
    assert not own_redis.answers()
    own_redis.start()
    return down, state


def wait_clocks_back(worker: Service, beat: Service, since: int) -> None:
    """Until the worker, reconnected to the restarted Redis, has received a sweep beat sent
    there (its log from ``since`` on): both clocks run again. Their reconnection backs off
    (2, 4, 6… s); a deadline set before it would be met late, the more so on a slow machine.
    """

    def back() -> bool:
        output = worker.output()[since:]
        connected = output.find("Connected to redis://")
        return connected >= 0 and SWEEP_RECEIVED in output[connected:]

    wait_for(
        "the worker and beat back on the new Redis",
        back,
        CLOCKS_BACK_WAIT,
        service_tails(worker, beat),
    )


def test_redis_restarted_mid_turn_loses_no_order_and_the_turn_resolves_once(
    reference: dict[str, Any],
    own_redis: RedisServer,
    celery_start: Callable[..., Service],
    sites: Callable[[dict[str, str]], Site],
    site_env: dict[str, str],
    loop: EventLoop,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    # given: a server on the test's own Redis, a Celery worker and beat running the clock
    worker, beat = celery_start("worker"), celery_start("beat")
    site = sites({**site_env, "REDIS_URL": own_redis.url(), "SL5R_CLOCK": "celery"})
    worker.wait_for(" ready.")
    beat.wait_for("Sending due task")
    logs = (worker, beat)
    play = play_start(make_running_tournament, site)
    pages = pages_open(loop, site.port, play.tournament_id, [play.tokens["lion-1"], None])
    wait_for("the pages' hello", lambda: all(p.seen(lambda p: p.opened > 0) for p in pages), 15)

    # when: Redis dies after half of a turn's orders and comes back empty
    for turn in range(1, TURNS + 1):
        play.wait_open(turn, TURN_WAIT)
        if turn == REDIS_FAULT_TURN:
            since = len(worker.output())
            down, state = give_across_a_redis_restart(play, turn, pages, own_redis, site)
            wait_clocks_back(worker, beat, since)
        else:
            play.give(turn, SCENARIO[turn])
        play.time_left_set(turn, TIME_LEFT_SECONDS)
        play.wait_resolved(turn, TURN_WAIT)

    # then: while it was down, orders were answered at once and the state was served
    assert all(r.seconds < ORDER_WITHOUT_REDIS_SECONDS for r in down), [
        round(r.seconds, 3) for r in down
    ]
    assert state.status == 200, state.body
    # the pages reconnected and resynced; everything ended as without the fault
    assert_pages_resynced(pages, reconnected=True)
    assert_the_scenario_ended_as_without_the_fault(play, reference)
    # and events reach the reopened sockets again (through the restarted Redis): one more
    # change, made once every page is back, whenever load let each of them reconnect
    posted = call(
        site.port,
        "POST",
        f"/api/tournaments/{play.tournament_id}/announcements",
        token=play.judge,
        body={"text": "Redis is back"},
    )
    assert posted.status == 201, posted.body
    for page in pages:
        wait_for(
            "the announcement's event on the reopened socket",
            functools.partial(
                page.seen, lambda p: any(e["kind"] == "announcement" for e in p.events)
            ),
            SOCKET_WAIT,
            f"{page_story(page)}\n{service_tails(*logs)}",
        )
    # celery 5.7.0's worker died here ("Unrecoverable error"), holding the next eta tick
    assert worker.process.poll() is None and beat.process.poll() is None, service_tails(*logs)


# --- 2. The ASGI server restarted over a deadline -------------------------------------------

RESTART_FAULT_TURN = 5  # seven orders, a meeting and a dispersal; turn 6 follows
DOWN_AFTER_DEADLINE = timedelta(seconds=1)


def test_a_server_restarted_over_a_deadline_resolves_the_turn_once_at_its_first_sweep(
    reference: dict[str, Any],
    sites: Callable[[dict[str, str]], Site],
    site_env: dict[str, str],
    loop: EventLoop,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    # given: a server with its in-process clock
    site = sites(site_env)
    play = play_start(make_running_tournament, site)
    tournament = Tournament.objects.get(pk=play.tournament_id)
    pages = pages_open(loop, site.port, tournament.pk, [play.tokens["crane-1"], None])

    # when: the orders are in, the server stops before the deadline, starts after it
    opened: dict[int, Progress] = {}
    for turn in range(1, TURNS + 1):
        opened[turn] = play.wait_open(turn, TURN_WAIT)
        play.give(turn, SCENARIO[turn])
        if turn == RESTART_FAULT_TURN:
            exit_code = site.stop()
            stopped_at = timezone.now()
            # The turn was held open: the judge's deadline is set once the server is down.
            deadline = play.time_left_set_directly(turn, TIME_LEFT_SECONDS)
            moment_wait(deadline + DOWN_AFTER_DEADLINE)
            untouched = turn_progress(tournament.pk)
            site.start()
        else:
            play.time_left_set(turn, TIME_LEFT_SECONDS)
        play.wait_resolved(turn, TURN_WAIT)

    # then: stopped cleanly before the deadline; nothing resolved while it was down
    assert deadline is not None
    assert exit_code == 0, site.output()
    assert "turn clock stopped" in site.output()
    assert stopped_at < deadline
    assert (untouched.resolved, untouched.open_turn) == (RESTART_FAULT_TURN - 1, RESTART_FAULT_TURN)
    # the turn resolved late, by the restarted server, and the next got its full length
    late = turn_row(tournament, RESTART_FAULT_TURN)
    following = turn_row(tournament, RESTART_FAULT_TURN + 1)
    assert late.resolved_at is not None and late.resolved_at >= deadline + DOWN_AFTER_DEADLINE
    assert following.opened_at == late.resolved_at
    # (as it opened: the judge set its time left once its orders were in)
    assert opened[RESTART_FAULT_TURN + 1].deadline == late.resolved_at + timedelta(
        seconds=HELD_TURN_SECONDS
    )
    assert_pages_resynced(pages, reconnected=True)
    assert_the_scenario_ended_as_without_the_fault(play, reference)


# --- 3. The database refusing connections -----------------------------------------------------

OUTAGE_FAULT_TURN = 4
# Sent during the outage: it must be refused with 503 and never stored (the Lion would hold
# instead of leaving beiden-pass, and the fingerprint would show it).
ORDER_DURING_OUTAGE = {"kind": "hold", "claim": True, "turn": OUTAGE_FAULT_TURN}


@contextmanager
def database_refusing_connections() -> Iterator[None]:
    """The test database refuses new connections, and the servers' ones are cut.

    On a connection of our own to the ``postgres`` database. This test's own connection
    (it reads the progress) is spared; ``ALLOW_CONNECTIONS`` is restored whatever happens.
    """
    settings = connection.settings_dict
    name = settings["NAME"]
    connection.ensure_connection()
    own_backend = connection.connection.info.backend_pid
    admin = psycopg.connect(
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        user=settings["USER"] or None,
        password=settings["PASSWORD"] or None,
        dbname="postgres",
        autocommit=True,
    )
    try:
        admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS false')
        try:
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                "WHERE datname = %s AND pid <> %s",
                [name, own_backend],
            )
            yield
        finally:
            admin.execute(f'ALTER DATABASE "{name}" WITH ALLOW_CONNECTIONS true')
    finally:
        admin.close()


def outage_round(port: int, tournament_id: int, token: str) -> dict[str, Any]:
    """What the phones, the big screen and a load balancer get during the outage."""
    state = call(port, "GET", f"/api/tournaments/{tournament_id}/state")
    order = call(
        port,
        "PUT",
        f"/api/tournaments/{tournament_id}/orders/mine",
        token=token,
        body=ORDER_DURING_OUTAGE,
    )
    health = call(port, "GET", "/healthz")
    screen = call(
        port, "GET", f"/referees/tournaments/{tournament_id}/screen/", headers={"Accept": "*/*"}
    )
    return {"state": state, "order": order, "healthz": health, "screen": screen}


def test_a_database_refusing_connections_gets_clear_503s_and_the_turn_resolves_once_after(
    reference: dict[str, Any],
    sites: Callable[[dict[str, str]], Site],
    site_env: dict[str, str],
    loop: EventLoop,
    make_running_tournament: Callable[..., Tournament],
) -> None:
    # given: a server with its in-process clock
    site = sites(site_env)
    play = play_start(make_running_tournament, site)
    tournament = Tournament.objects.get(pk=play.tournament_id)
    pages = pages_open(loop, site.port, tournament.pk, [play.tokens["lion-1"]])
    server = site.service
    assert server is not None
    rounds: list[dict[str, Any]] = []

    # when: the database refuses connections across the turn's deadline
    for turn in range(1, TURNS + 1):
        play.wait_open(turn, TURN_WAIT)
        play.give(turn, SCENARIO[turn])
        if turn == OUTAGE_FAULT_TURN:
            started = time.monotonic()
            with database_refusing_connections():
                # The turn was held open: the judge's deadline is set once the database
                # refuses the server (this process's connection is spared).
                deadline = play.time_left_set_directly(turn, TIME_LEFT_SECONDS)
                until = max(
                    started + OUTAGE_SECONDS,
                    time.monotonic() + (deadline - timezone.now()).total_seconds() + 1.0,
                )
                while not rounds or time.monotonic() < until:
                    rounds.append(outage_round(site.port, tournament.pk, play.tokens["lion-1"]))
                    time.sleep(0.2)
                alive_in_outage = server.process.poll() is None
                unresolved = turn_progress(tournament.pk)
                outage_ended = timezone.now()
            wait_for(
                "the same server to serve again",
                lambda: (
                    call(site.port, "GET", f"/api/tournaments/{tournament.pk}/state").status == 200
                ),
                RECOVERY_WAIT,
                site.tail(),
            )
        else:
            play.time_left_set(turn, TIME_LEFT_SECONDS)
        play.wait_resolved(turn, TURN_WAIT)

    # then: every request during the outage got a clear 503, nothing else
    assert alive_in_outage
    statuses = {(what, r.status) for one in rounds for what, r in one.items()}
    assert statuses == {("state", 503), ("order", 503), ("healthz", 503), ("screen", 503)}
    for one in rounds:
        for what in ("state", "order"):
            assert one[what].json()["code"] == "database_unavailable", one[what].body
            assert one[what].headers["retry-after"] == "5"
        assert one["healthz"].json() == {"status": "error", "database": "unavailable"}
        page = one["screen"].body.decode()
        assert "The database is not answering" in page and "Traceback" not in page
    # the outage spanned the deadline; the turn waited for the database, then resolved once
    assert deadline < outage_ended
    assert (unresolved.resolved, unresolved.open_turn) == (
        OUTAGE_FAULT_TURN - 1,
        OUTAGE_FAULT_TURN,
    )
    assert server.process.poll() is None, "the server was restarted or died"
    output = site.output()
    # the clock said once, in a line, that it could not reach the database, and when it could
    assert output.count("the turn clock cannot reach the database (OperationalError") == 1
    assert "the turn clock reaches the database again" in output
    assert "sweep failed" not in output and "turn clock stopped" not in output
    lion_orders = Order.objects.filter(
        turn__campaign=tournament.campaign_id, turn__number=OUTAGE_FAULT_TURN, army__code="lion-1"
    )
    assert list(lion_orders.values_list("kind", flat=True)) == ["move"]
    assert_pages_resynced(pages, reconnected=False)
    assert_the_scenario_ended_as_without_the_fault(play, reference)
