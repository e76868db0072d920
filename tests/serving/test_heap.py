"""A server process settles its heap before serving (sl5r/serving/heap.py): what it loaded
is out of the garbage collector's full collections, which then walk only what serving
makes (sockets, requests), and the site's URLs and views are loaded already."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from django.urls import clear_url_caches, get_resolver

from sl5r.serving.interface import heap_freeze


@pytest.fixture
def unfrozen_after() -> Iterator[None]:
    try:
        yield
    finally:
        gc.unfreeze()  # the rest of the suite runs with the collector as usual


def test_heap_freeze_takes_what_is_loaded_out_of_full_collections(unfrozen_after: None) -> None:
    walked_before = len(gc.get_objects())
    frozen = heap_freeze()
    assert frozen == gc.get_freeze_count() > 0
    # Whatever is tracked now was made after the freeze (this test's own few objects).
    assert len(gc.get_objects()) < walked_before / 10


def test_heap_freeze_loads_the_sites_urls_first(unfrozen_after: None) -> None:
    clear_url_caches()  # as in a process that has served no request yet
    heap_freeze()
    # The URLconf is imported (and with it every view module): the cached property is set.
    assert "url_patterns" in vars(get_resolver())


def test_objects_made_after_the_freeze_are_still_collected(unfrozen_after: None) -> None:
    heap_freeze()

    class Cycle:
        other: object

    a, b = Cycle(), Cycle()
    a.other, b.other = b, a
    del a, b
    assert gc.collect() >= 2
