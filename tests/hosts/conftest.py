"""Fixtures of the several-machines stories: the hosts, the site on them, the phones.

One deployment serves a whole module, and the stories are all in one module, so the hosts
are built once a run (10-15 s on two idle cores: a PostgreSQL cluster made, migrations, the
two web machines' static files collected meanwhile, their processes started). Skipped with
the reason where network namespaces cannot be made or a program is missing; in CI (``CI``
set) that is a failure.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator

import pytest

from tests.hosts.deployment import Deployment
from tests.hosts.network import Network, network_problem
from tests.hosts.phones import Phones
from tests.service_checks import require_service

PROGRAMS = ("haproxy", "redis-server", "openssl", "runuser", "ip")


def harness_problem() -> str | None:
    missing = [name for name in PROGRAMS if shutil.which(name) is None]
    if missing:
        return f"not installed: {', '.join(missing)}"
    return network_problem()


@pytest.fixture(scope="module")
def deployment() -> Iterator[Deployment]:
    require_service("separate hosts (network namespaces)", harness_problem())
    network = Network()
    try:
        running = Deployment.start(network)
        try:
            yield running
        finally:
            running.close()
    finally:
        network.close()


@pytest.fixture
def phones(deployment: Deployment) -> Iterator[Phones]:
    running = Phones(deployment)
    try:
        yield running
    finally:
        running.close()
