from __future__ import annotations

import pytest

from tests.service_checks import (
    POSTGRES_URL,
    REDIS_URL,
    postgres_problem,
    redis_problem,
    require_service,
)


@pytest.fixture(scope="session")
def redis_url() -> str:
    """URL of a Redis server that answers; skipped without one, a failure in CI."""
    require_service("Redis", redis_problem(REDIS_URL))
    return REDIS_URL


@pytest.fixture(scope="session")
def postgres_url() -> str:
    """URL of a PostgreSQL database that answers; skipped without one, a failure in CI."""
    require_service("PostgreSQL", postgres_problem(POSTGRES_URL))
    return POSTGRES_URL
