"""``python -m sl5r.cluster`` (``make cluster``): the production shape, driven from outside.

One cluster serves the whole module (starting one takes a while): two ASGI processes
behind HAProxy, a Celery worker and beat, kept by supervisord, on the test database and
Redis database 12.
The tests build their tournaments through the services and talk to the cluster over HTTP
and websockets, as phones and pages do. At the end ``python -m sl5r.cluster stop`` stops it.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import signal
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from referees.kernel.access import judge_key_create
from referees.models import LogEntry, Player, Tournament
from referees.services import Actor, clock_resolve_now, player_token
from sl5r.cluster import BALANCER_SOURCE as BALANCER
from sl5r.cluster import process_alive
from strategic_map.models import Turn
from tests.cluster.conftest import Cluster, port_of, wait_until
from tests.live_clients import WebSocket
from tests.referees.celery_processes import LATENESS_MOST

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
]

HOST = "127.0.0.1"
EVENT_SECONDS = 10.0  # for a live event to arrive: generous, this checks arrival, not speed
TURN_SECONDS = 3
TURNS = 3
# Turn 1's deadline is set by this test's process, which sends no Celery tick: beat's sweep
# (every 2 s) finds it. The worker sets the later deadlines and sends a tick for each, run at
# the deadline. How late each may be is the upper bound LATENESS_MOST (a stalled clock), not
# what an idle machine does (well under 2 s; printed), which a loaded one exceeds.
GAME_SECONDS = 60.0  # for the three turns to be resolved, at most
RESTART_SECONDS = 60.0  # for a killed ASGI process to be back


@pytest.fixture(scope="module")
def cluster(cluster_start: Callable[[], Cluster]) -> Iterator[Cluster]:
    """One cluster for the module; stopped at the end with ``python -m sl5r.cluster stop``."""
    running = cluster_start()
    yield running
    pids = running.info()["pids"]
    result = running.stop_command()
    assert result.returncode == 0, result.stdout + result.stderr + running.tails()
    assert running.process.wait(timeout=10) == 0, running.tails()
    assert not [name for name, pid in pids.items() if process_alive(pid)]


def put_order(port: int, tournament_id: int, token: str, *, claim: bool) -> tuple[int, bytes]:
    """A General's ``PUT …/orders/mine`` (hold) sent to ``port``.

    ``claim`` makes two orders differ: the same order again is a replay, stored once.
    """
    connection = http.client.HTTPConnection(HOST, port, timeout=EVENT_SECONDS)
    try:
        connection.request(
            "PUT",
            f"/api/tournaments/{tournament_id}/orders/mine",
            body=json.dumps({"kind": "hold", "claim": claim}),
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def healthz(url: str) -> int | str:
    """``GET /healthz``: its status, or what went wrong."""
    try:
        with urllib.request.urlopen(f"{url}/healthz", timeout=5) as response:
            return int(response.status)
    except OSError as error:
        return repr(error)


async def next_event(ws: WebSocket, kind: str) -> int | None:
    """The version of the next event of ``kind`` on ``ws``; None if none in EVENT_SECONDS."""

    async def wait() -> int | None:
        while True:
            message = await ws.receive()
            if message is None:
                return None  # the server closed the socket
            if message.get("type") == "event" and message.get("kind") == kind:
                return int(message["version"])

    try:
        return await asyncio.wait_for(wait(), EVENT_SECONDS)
    except asyncio.TimeoutError:
        return None


async def connect(port: int, path: str) -> tuple[WebSocket, int]:
    """A websocket to ``port`` and the version its ``hello`` carried."""
    ws = await asyncio.wait_for(WebSocket.connect(port, path), EVENT_SECONDS)
    hello = await asyncio.wait_for(ws.receive(), EVENT_SECONDS)
    assert hello is not None and hello["type"] == "hello", hello
    return ws, int(hello["version"])


def test_an_order_sent_to_one_asgi_process_reaches_sockets_on_the_other_and_the_balancer(
    cluster: Cluster, make_running_tournament: Callable[..., Tournament]
) -> None:
    """A General's order PUT to ASGI process A is announced, live, to a judge's websocket
    on process B; and an order PUT through the balancer to sockets opened through it."""
    # given: a running tournament (long turns: nothing resolves meanwhile), a judge's key
    tournament = make_running_tournament(turn_seconds=600)
    general = Player.objects.filter(tournament=tournament, role="general").order_by("pk")[0]
    token = player_token(general)
    key = judge_key_create(user=tournament.judges.get(), label="cluster test").key
    info = cluster.info()
    port_a, port_b = (port_of(url) for url in info["asgi"])
    balancer = port_of(info["balancer"])
    path = f"/ws/tournaments/{tournament.pk}/?token={key}"

    async def scenario() -> dict[str, Any]:
        # when: an order to A, watched from B
        ws_b, seen_b = await connect(port_b, path)
        sent_to_a = await asyncio.to_thread(put_order, port_a, tournament.pk, token, claim=False)
        event_b = await next_event(ws_b, "order")
        # and: an order through the balancer, watched by two sockets opened through it (the
        # balancer gives them one ASGI process each)
        sockets = [await connect(balancer, path) for _ in range(2)]
        sent_to_balancer = await asyncio.to_thread(
            put_order, balancer, tournament.pk, token, claim=True
        )
        events = [await next_event(ws, "order") for ws, _ in sockets]
        for ws in [ws_b, *(ws for ws, _ in sockets)]:
            await ws.close()
        return {
            "sent to A": sent_to_a[0],
            "sent through the balancer": sent_to_balancer[0],
            "B saw a newer version": event_b is not None and event_b > seen_b,
            "balancer sockets saw newer versions": [
                event is not None and event > seen
                for event, (_ws, seen) in zip(events, sockets, strict=True)
            ],
        }

    outcome = asyncio.run(scenario())

    # then: both orders stored, and each socket told of them
    assert outcome == {
        "sent to A": 200,
        "sent through the balancer": 200,
        "B saw a newer version": True,
        "balancer sockets saw newer versions": [True, True],
    }, cluster.tails()
    assert LogEntry.objects.filter(tournament=tournament, action="order_given").count() == 2


def test_turns_resolve_on_time_through_celery_exactly_once(
    cluster: Cluster, make_running_tournament: Callable[..., Tournament]
) -> None:
    """Three 3-second turns are resolved by the cluster's worker and beat, each once, none
    before its deadline and none as late as a stalled clock; then the game ends."""
    # given
    tournament = make_running_tournament(turn_seconds=TURN_SECONDS, turns_total=TURNS)

    # when: nothing but the cluster runs the clock
    finished = wait_until(
        lambda: Tournament.objects.get(pk=tournament.pk).phase == "finished", GAME_SECONDS
    )

    # then
    assert finished, cluster.tails()
    turns = list(Turn.objects.filter(campaign__tournament=tournament).order_by("number"))
    assert [(t.number, t.status) for t in turns] == [(n, "resolved") for n in (1, 2, 3)]
    lateness = []
    for turn in turns:
        assert turn.deadline is not None and turn.resolved_at is not None
        late = turn.resolved_at - turn.deadline
        assert timedelta(0) <= late <= LATENESS_MOST, (turn.number, late, cluster.tails())
        assert turn.resolved_by == "clock"
        lateness.append(round(late.total_seconds(), 3))
    log = LogEntry.objects.filter(tournament=tournament)
    resolved = Counter(log.filter(action="turn_resolved").values_list("turn", flat=True))
    assert resolved == {1: 1, 2: 1, 3: 1}
    assert log.filter(action="game_ended").count() == 1
    print(f"\nturns resolved after their deadlines (s): {lateness}")


# Issue 12: the orders wait behind the tournament's row lock until this long after the
# deadline, past the 2-second window and past beat's first sweep after it (every 2 s).
HELD_PAST_WINDOW = timedelta(seconds=6)


def test_a_burst_that_outlasts_the_settle_window_is_all_carried_out_by_the_cluster(
    cluster: Cluster, make_running_tournament: Callable[..., Tournament]
) -> None:
    """16 orders sent through the balancer a second before the deadline wait on a locked
    tournament row (more than the two processes' HTTP threads) until 6 s after it: the
    worker waits for the ones both ASGI processes published as waiting, then resolves the
    turn once, with every one of them carried out; one sent after the deadline is late."""
    from tests.referees.services.test_order_arrival import burst, moves_of

    # given
    tournament = make_running_tournament(player_count=16, turn_seconds=600)
    *on_time, late = moves_of(tournament)
    balancer = port_of(cluster.info()["balancer"])

    # when
    deadline, released_at = asyncio.run(
        burst(balancer, tournament.pk, on_time, late, held_after=HELD_PAST_WINDOW)
    )
    resolved = wait_until(
        lambda: LogEntry.objects.filter(tournament=tournament, action="turn_resolved").exists(),
        30,
    )

    # then
    assert released_at > deadline + timedelta(seconds=2)
    assert [m.status for m in on_time] == [200] * len(on_time), (
        [(m.code, m.status, m.body) for m in on_time if m.status != 200],
        cluster.tails(),
    )
    assert late.status == 409 and b'"late"' in late.body, late.body
    assert resolved, cluster.tails()
    turn1 = Turn.objects.get(campaign=tournament.campaign, number=1)
    board = Tournament.objects.get(pk=tournament.pk).campaign.board["armies"]
    assert {m.code: board[m.code]["province"] for m in on_time} == {
        m.code: m.target for m in on_time
    }
    assert board[late.code]["province"] == late.start
    assert turn1.resolved_by == "clock"
    assert LogEntry.objects.filter(tournament=tournament, action="turn_resolved").count() == 1


def test_a_killed_asgi_process_is_restarted_and_serves_again(cluster: Cluster) -> None:
    """SIGKILL one ASGI process: the balancer goes on serving through the other (a request
    that finds it gone is sent to the other), and supervisord starts it again on its
    port."""
    # given
    info = cluster.info()
    url = info["asgi"][0]
    killed = cluster.pid("asgi-1")
    assert healthz(url) == 200

    # when
    os.kill(killed, signal.SIGKILL)
    assert wait_until(
        lambda: "exited: asgi-1 (terminated by SIGKILL" in cluster.supervisord_log(), 10
    )
    through_balancer = [healthz(info["balancer"]) for _ in range(4)]

    # then
    assert through_balancer == [200] * 4, cluster.tails()

    def back() -> bool:
        pid = cluster.pid("asgi-1")
        return bool(pid and pid != killed and process_alive(pid) and healthz(url) == 200)

    assert wait_until(back, RESTART_SECONDS), cluster.tails()
    assert cluster.supervisord_log().count("spawned: 'asgi-1'") == 2


def put_stamped(
    port: int, tournament_id: int, token: str, *, stamp: str, source: str | None = None
) -> tuple[int, bytes]:
    """A General's hold for turn 2 carrying ``X-SL5R-Received-At: stamp``, sent to ``port``
    from ``source`` (the balancer's own address, to play the balancer)."""
    connection = http.client.HTTPConnection(
        HOST, port, timeout=EVENT_SECONDS, source_address=(source, 0) if source else None
    )
    try:
        connection.request(
            "PUT",
            f"/api/tournaments/{tournament_id}/orders/mine",
            body=json.dumps({"kind": "hold", "turn": 2}),
            headers={
                "Authorization": f"Bearer {token}",
                "Content-Type": "application/json",
                "X-SL5R-Received-At": stamp,
            },
        )
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


def test_the_balancers_stamp_is_an_orders_arrival_and_nobody_elses_is_believed(
    cluster: Cluster, make_running_tournament: Callable[..., Tournament]
) -> None:
    """R4, issue 31: behind HAProxy an order is on time by when it reached the balancer, which
    stamps it (X-SL5R-Received-At), not by when a busy process got to it. The stamp is taken
    from the balancer's own address only: a client who writes one through the balancer has it
    replaced, and one who goes straight to a process is not believed.

    Turn 1 is resolved, so turn 2 opens now; each order claims it arrived 2 s before that, when
    it would have belonged to turn 1 and be late. Only the balancer's claim is believed."""
    tournament = make_running_tournament(turn_seconds=600)
    judge = Actor(label="judge cluster-test", judge=True)
    clock_resolve_now(tournament_id=tournament.pk, actor=judge, now=timezone.now(), turn=1)
    opened = Turn.objects.get(campaign=tournament.campaign, number=2).opened_at
    before_turn_2 = str(int((opened.timestamp() - 2) * 1_000_000))
    generals = Player.objects.filter(tournament=tournament, army__isnull=False).order_by("id")
    as_balancer, through_balancer, straight = (player_token(p) for p in generals[:3])
    info = cluster.info()
    asgi, balancer = port_of(info["asgi"][0]), port_of(info["balancer"])

    believed = put_stamped(asgi, tournament.pk, as_balancer, stamp=before_turn_2, source=BALANCER)
    replaced = put_stamped(balancer, tournament.pk, through_balancer, stamp=before_turn_2)
    ignored = put_stamped(asgi, tournament.pk, straight, stamp=before_turn_2)

    assert believed[0] == 409 and b'"late"' in believed[1], (believed, cluster.tails())
    assert replaced[0] == 200, (replaced, cluster.tails())
    assert ignored[0] == 200, (ignored, cluster.tails())
