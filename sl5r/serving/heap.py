"""A server process's heap, settled once it has loaded the site: ``heap_freeze``.

CPython's cyclic garbage collector walks every tracked object of the oldest generation
at each full collection. A server process holds Django, the URLconf with its views, the
API's schemas and the engine — a few hundred thousand objects that live as long as the
process — and each socket adds its own. With 500 public sockets per process the full
collections took 100–230 ms each (``gc.callbacks`` timed in ``benchmarks/fanout.py``'s
servers), and one that fell during a fan-out held that process's half of the frames back
by as much: the fan-out's p99 was ×3 the bare asyncio server's.

``gc.freeze()`` (CPython's own remedy, Python 3.7+) moves every object alive at that
moment to a permanent generation that the collector no longer walks; objects made later
(requests, sockets, frames) are collected as before. The frozen ones are never freed,
which is right for what a process loads before serving.
"""

from __future__ import annotations

import gc

from django.urls import get_resolver


def heap_freeze() -> int:
    """Load the site's URLs and views (Django loads them at the first request otherwise),
    collect once, and freeze what is left; the number of objects frozen."""
    get_resolver().url_patterns  # noqa: B018 (importing every view module is the point)
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()
