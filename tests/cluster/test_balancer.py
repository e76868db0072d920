"""HAProxy in front of the cluster (deploy/haproxy/haproxy.cfg): whose address Django sees.

A cluster of its own, with failed joins limited to 3 an hour (``SL5R_RATE_LIMITS``), so
that each test uses up one client's allowance in a few requests. Clients are told apart by
the loopback address they connect from (127.0.0.0/8 is all this machine), as phones on a
venue's Wi-Fi are by theirs. A wrong join link is a failed join: 403 until the limit, then
429 (``referees/pages/join.py``, ``join``).
"""

from __future__ import annotations

import http.client
import itertools
import json
import resource
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from sl5r.cluster import FILES_WANTED, balancer_maxconn, supervisor
from tests.cluster.conftest import Cluster, port_of, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
]

HOST = "127.0.0.1"
JOINS = 3
WINDOW_SECONDS = 3600
# Every test takes fresh client addresses: one test's counts never meet another's.
_addresses = (f"127.0.0.{n}" for n in itertools.count(10))


@pytest.fixture(scope="module")
def cluster(cluster_start: Callable[..., Cluster]) -> Iterator[Cluster]:
    # Started as from a shell with the usual soft limit of 1,024 open files (the hard one
    # unchanged): make cluster raises it for its processes.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 1024), hard))
    try:
        started = cluster_start(SL5R_RATE_LIMITS=f"joins={JOINS}/hour")
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    yield started


def join(port: int, source: str, headers: dict[str, str] | None = None) -> int:
    """The status of a wrong join link opened from ``source`` on ``port``."""
    connection = http.client.HTTPConnection(HOST, port, timeout=30, source_address=(source, 0))
    try:
        connection.request("GET", "/join/not-a-real-token", headers=headers or {})
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def in_one_window(scenario: Callable[[], dict[str, object]]) -> dict[str, object]:
    """``scenario()``, run again (with new addresses) if an hour's window ended during it:
    the limiter's counts start again at each window."""
    for _attempt in range(2):
        window = int(time.time() // WINDOW_SECONDS)
        result = scenario()
        if int(time.time() // WINDOW_SECONDS) == window:
            return result
    return result


def test_clients_forwarded_by_the_balancer_are_limited_each_in_his_own_bucket(
    cluster: Cluster,
) -> None:
    """Two clients behind the balancer: one using up his failed joins does not lock out
    the other (before, every request came from 127.0.0.1: one bucket for the whole hall)."""
    balancer = port_of(cluster.info()["balancer"])

    def scenario() -> dict[str, object]:
        guesser, neighbour = next(_addresses), next(_addresses)
        return {
            "guesser": [join(balancer, guesser) for _ in range(JOINS + 1)],
            "neighbour": join(balancer, neighbour),
        }

    result = in_one_window(scenario)

    assert result == {"guesser": [403] * JOINS + [429], "neighbour": 403}, cluster.tails()


def test_an_x_forwarded_for_written_by_the_client_is_not_believed(cluster: Cluster) -> None:
    """Through the balancer the header is replaced by the real address: a limited client
    cannot get out by naming another, nor lock out another by naming him. Sent to an ASGI
    process directly (not from the balancer's address) it is ignored."""
    info = cluster.info()
    balancer = port_of(info["balancer"])
    asgi = port_of(info["asgi"][0])

    def scenario() -> dict[str, object]:
        guesser, other, direct = next(_addresses), next(_addresses), next(_addresses)
        for _ in range(JOINS):
            join(balancer, guesser)
        return {
            "limited, naming a fresh address": join(
                balancer, guesser, {"X-Forwarded-For": next(_addresses)}
            ),
            "another, naming the limited one": join(balancer, other, {"X-Forwarded-For": guesser}),
            "straight to an ASGI process, naming the limited one": join(
                asgi, direct, {"X-Forwarded-For": guesser}
            ),
        }

    result = in_one_window(scenario)

    assert result == {
        "limited, naming a fresh address": 429,
        "another, naming the limited one": 403,
        "straight to an ASGI process, naming the limited one": 403,
    }, cluster.tails()


def test_the_two_asgi_processes_count_into_one_limit(cluster: Cluster) -> None:
    """The limit is the limit, not once per process: counts live in Redis (CACHES). A
    client that used up his failed joins on one process is refused by the other too."""
    first, second = (port_of(url) for url in cluster.info()["asgi"])

    def scenario() -> dict[str, object]:
        client = next(_addresses)
        on_first = [join(first, client) for _ in range(JOINS)]
        return {"on the first": on_first, "then on the second": join(second, client)}

    result = in_one_window(scenario)

    assert result == {"on the first": [403] * JOINS, "then on the second": 429}, cluster.tails()


def test_the_balancer_refuses_a_body_too_large_before_it_reaches_django(
    cluster: Cluster,
) -> None:
    """Over 4 MiB: 413 with a JSON message naming the limit, sent as soon as the headers
    say so (no body need follow)."""
    connection = http.client.HTTPConnection(HOST, port_of(cluster.info()["balancer"]), timeout=30)
    try:
        connection.putrequest("POST", "/api/tournaments")
        connection.putheader("Content-Type", "application/json")
        connection.putheader("Content-Length", str(5 * 1024 * 1024))
        connection.endheaders()
        response = connection.getresponse()
        status, body = response.status, json.loads(response.read())
    finally:
        connection.close()

    assert status == 413
    assert body == {"detail": "request body too large: at most 4 MiB", "code": "too_large"}


def test_with_no_process_up_the_balancer_answers_a_clear_503_then_serves_again(
    cluster: Cluster,
) -> None:
    """Both ASGI processes stopped: once the health checks have taken them out, the API
    gets a JSON 503 and the pages one that reloads itself, both with Retry-After; started
    again, they are put back in and the site answers."""
    balancer = port_of(cluster.info()["balancer"])
    control = supervisor(cluster.directory)

    def get(path: str) -> tuple[int, str, str, str]:
        connection = http.client.HTTPConnection(HOST, balancer, timeout=30)
        try:
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read().decode()
            return (
                response.status,
                response.getheader("Content-Type") or "",
                response.getheader("Retry-After") or "",
                body,
            )
        finally:
            connection.close()

    for name in ("asgi-1", "asgi-2"):
        control.stopProcess(name)
    try:
        taken_out = wait_until(lambda: get("/healthz")[3].find('"unavailable"') > 0, 30)
        api, page = get("/api/tournaments"), get("/")
    finally:
        for name in ("asgi-1", "asgi-2"):
            control.startProcess(name)
    back = wait_until(lambda: get("/healthz")[0] == 200, 60)

    assert taken_out, cluster.tails()
    assert api[:3] == (503, "application/json", "5")
    assert json.loads(api[3]) == {
        "detail": "the site is restarting: try again in a few seconds",
        "code": "unavailable",
    }
    assert page[:3] == (503, "text/html; charset=utf-8", "5")
    assert "The site is restarting" in page[3] and "Сайт перезапускается" in page[3]
    assert back, cluster.tails()


def open_files_limit(pid: int) -> int:
    """The soft "Max open files" of process ``pid``."""
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            return int(line.split()[3])
    raise AssertionError(f"no open-file limit for pid {pid}")


def test_the_balancer_and_the_asgi_processes_may_open_the_files_a_league_needs(
    cluster: Cluster,
) -> None:
    """make cluster raises the file limit as far as this machine allows before supervisord
    starts the processes, which inherit it: HAProxy has two files for each connection its
    maxconn admits, and each ASGI process one per websocket (a shell's 1,024 would hold it
    to about a thousand pages)."""
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    machine = FILES_WANTED if hard == resource.RLIM_INFINITY else hard

    # Their pids now: a test before may have restarted them.
    assert open_files_limit(cluster.pid("balancer")) >= 2 * balancer_maxconn(machine)
    for name in ("asgi-1", "asgi-2"):
        assert open_files_limit(cluster.pid(name)) >= min(FILES_WANTED, machine), name
