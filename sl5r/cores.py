"""How many processes a Celery worker runs: shared by ``sl5r.cluster`` and ``sl5r.celery``.

The standard library only, so that ``sl5r.cluster`` (which starts before Django) can use it.
"""

from __future__ import annotations

import os


def worker_concurrency_default() -> int:
    """The Celery worker's processes: one per core this process may run on, at least two.

    Each resolves one tournament's turn at a time, so a league on one deadline is resolved
    on every core; two even on one core, so that a tick waiting for a tournament's lock, or
    for the database, does not hold up every other tournament's (issue 33).
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(2, cores)
