"""An order's hot statements (referees/statements.py, referees/kernel.py) store and read
exactly what the ORM's own ``save()`` and ``select_for_update()`` do, in one statement each,
on SQLite and on PostgreSQL (the suite's second pass)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import connection, transaction
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from referees import services
from referees.kernel import tournament_lock, tournament_lock_light
from referees.models import LogEntry
from referees.services import Actor
from referees.statements import row_insert, rows_insert
from strategic_map.models import Army, Order, Turn
from tests.event_capture import IN_MEMORY_LAYERS
from tests.referees.conftest import Game

pytestmark = pytest.mark.django_db

DATA = {"path": ["shinomen-mori", "kyuden-hida"], "note": "Кто идёт?", "nested": {"n": 1}}


@pytest.fixture(autouse=True)
def _in_memory_layer(settings: Any) -> None:
    settings.CHANNEL_LAYERS = IN_MEMORY_LAYERS


def log_entry(game: Game, action: str) -> LogEntry:
    return LogEntry(
        tournament_id=game.id,
        at=timezone.now().replace(microsecond=123456),
        actor="general (Crab): Хида",
        action=action,
        turn=1,
        data=DATA,
    )


def stored(model: type[Any], pk: int) -> dict[str, Any]:
    row = model.objects.filter(pk=pk).values().get()
    row.pop("id")
    return dict(row)


def test_row_insert_stores_the_row_that_save_stores_in_one_statement(game16: Game) -> None:
    by_save = log_entry(game16, "order_given")
    by_save.save()
    by_insert = log_entry(game16, "order_given")
    by_insert.at = by_save.at
    with CaptureQueriesContext(connection) as queries:
        row_insert(by_insert)
    assert len(queries.captured_queries) == 1, queries.captured_queries
    assert by_insert.pk is not None and by_insert.pk != by_save.pk
    assert not by_insert._state.adding and by_insert._state.db == "default"
    assert stored(LogEntry, by_insert.pk) == stored(LogEntry, by_save.pk)
    assert LogEntry.objects.get(pk=by_insert.pk).data == DATA


def test_row_insert_stores_an_order_with_its_path_and_time_as_save_does(game16: Game) -> None:
    turn = Turn.objects.get(campaign__tournament=game16.id, number=1)
    army = Army.objects.filter(campaign__tournament=game16.id, clan="crab").first()
    assert army is not None
    now = timezone.now()

    def order() -> Order:
        return Order(
            turn=turn,
            army=army,
            kind=Order.Kind.MOVE,
            path=["shinomen-mori"],
            created_at=now,
            author="general (Crab)",
        )

    by_save, by_insert = order(), order()
    by_save.save()
    row_insert(by_insert)
    assert stored(Order, by_insert.pk) == stored(Order, by_save.pk)
    again = Order.objects.get(pk=by_insert.pk)
    assert again.created_at == now and again.path == ["shinomen-mori"]


@pytest.fixture
def receivers_of_log_entries() -> Iterator[list[bool]]:
    heard: list[bool] = []

    def heard_save(*, created: bool, **_: Any) -> None:
        heard.append(created)

    post_save.connect(heard_save, sender=LogEntry, dispatch_uid="test-row-insert")
    try:
        yield heard
    finally:
        post_save.disconnect(sender=LogEntry, dispatch_uid="test-row-insert")


def test_row_insert_leaves_a_model_with_save_receivers_to_save(
    game16: Game, receivers_of_log_entries: list[bool]
) -> None:
    entry = log_entry(game16, "order_given")
    row_insert(entry)
    assert receivers_of_log_entries == [True]
    assert LogEntry.objects.filter(pk=entry.pk).exists()


def test_row_insert_of_a_saved_object_updates_it_rather_than_adding_a_row(game16: Game) -> None:
    entry = log_entry(game16, "order_given")
    row_insert(entry)
    entry.action = "order_withdrawn"
    row_insert(entry)
    assert LogEntry.objects.filter(tournament_id=game16.id, at=entry.at).count() == 1
    assert LogEntry.objects.get(pk=entry.pk).action == "order_withdrawn"


def test_rows_insert_stores_a_batch_in_one_statement_as_save_stores_each(game16: Game) -> None:
    by_save = [log_entry(game16, f"order_given_{n}") for n in range(5)]
    for entry in by_save:
        entry.save()
    by_insert = [log_entry(game16, f"order_given_{n}") for n in range(5)]
    for saved, entry in zip(by_save, by_insert, strict=True):
        entry.at = saved.at
    with CaptureQueriesContext(connection) as queries:
        rows_insert(by_insert)
    assert len(queries.captured_queries) == 1, queries.captured_queries
    keys = [entry.pk for entry in by_insert]
    assert None not in keys and len(set(keys)) == 5
    assert not set(keys) & {entry.pk for entry in by_save}
    for saved, entry in zip(by_save, by_insert, strict=True):
        # Each object got its own row's key: the row holds that object's values.
        assert stored(LogEntry, entry.pk) == stored(LogEntry, saved.pk)
        assert not entry._state.adding and entry._state.db == "default"


def test_rows_insert_with_save_receivers_saves_each_and_every_receiver_hears_it(
    game16: Game, receivers_of_log_entries: list[bool]
) -> None:
    entries = [log_entry(game16, "order_given") for _ in range(3)]
    rows_insert(entries)
    assert receivers_of_log_entries == [True, True, True]
    assert LogEntry.objects.filter(pk__in=[entry.pk for entry in entries]).count() == 3


def test_rows_insert_of_nothing_runs_no_statement() -> None:
    with CaptureQueriesContext(connection) as queries:
        rows_insert([])
    assert queries.captured_queries == []


def test_the_light_lock_reads_the_clock_and_versions_as_the_full_lock(game16: Game) -> None:
    # A paused clock: the seconds left kept, the deadline gone (R5 pause).
    services.clock_pause(
        tournament_id=game16.id, actor=Actor.of_user(game16.judge), now=timezone.now()
    )
    with transaction.atomic():
        full = tournament_lock(game16.id)
        light = tournament_lock_light(game16.id)
    assert light.deadline is None and isinstance(light.paused_remaining, float)
    for name in ("id", "phase", "deadline", "paused_remaining", "campaign_id"):
        assert getattr(light, name) == getattr(full, name), name
    assert light.campaign.version == full.campaign.version
    assert light.campaign.frame_version == full.campaign.frame_version


def test_the_light_lock_reads_a_running_deadline_as_an_aware_time(game16: Game) -> None:
    with transaction.atomic():
        full = tournament_lock(game16.id)
        light = tournament_lock_light(game16.id)
    assert light.deadline is not None and timezone.is_aware(light.deadline)
    assert light.deadline == full.deadline and light.paused_remaining is None
