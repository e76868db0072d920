"""An order's hot statements (referees/kernel/prepared_sql.py, referees/kernel/core.py) store
and read exactly what the ORM's own ``save()`` and ``select_for_update()`` do, in one
statement each, on SQLite and on PostgreSQL (the suite's second pass)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models.signals import post_save
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from referees import services
from referees.kernel.core import (
    TournamentError,
    tournament_lock,
    tournament_lock_light,
    unit_of_work,
    unit_writes_pipelined,
)
from referees.kernel.prepared_sql import (
    row_insert,
    rows_insert,
    statement_run,
    statements_pipelined_supported,
)
from referees.models import LogEntry
from referees.services import Actor
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


# --- Pipelined writes: sent without waiting on PostgreSQL, answered as the unit ends --------


def test_pipelined_writes_get_their_keys_and_rows_as_the_unit_ends(game16: Game) -> None:
    by_save = log_entry(game16, "order_given")
    by_save.save()
    entries = [log_entry(game16, "order_given"), log_entry(game16, "order_given")]
    single = log_entry(game16, "order_withdrawn")
    for entry in [*entries, single]:
        entry.at = by_save.at
    with unit_of_work():
        unit_writes_pipelined()
        rows_insert(entries)
        row_insert(single)
        statement_run(
            "UPDATE referees_logentry SET action = %s WHERE id = %s",
            ["order_updated", by_save.pk],
            using="default",
        )
        # On PostgreSQL nothing has waited for an answer yet: no key is known.
        waited = [entry.pk is not None for entry in [*entries, single]]
    if connection.vendor == "postgresql":
        assert statements_pipelined_supported("default"), "psycopg 3 with pipeline mode"
    assert waited == [not statements_pipelined_supported("default")] * 3
    keys = [entry.pk for entry in [*entries, single]]
    assert None not in keys and len(set(keys)) == 3
    for entry in entries:
        assert stored(LogEntry, entry.pk) == stored(LogEntry, by_save.pk) | {
            "action": "order_given"
        }
        assert not entry._state.adding and entry._state.db == "default"
    assert LogEntry.objects.get(pk=single.pk).action == "order_withdrawn"
    assert LogEntry.objects.get(pk=by_save.pk).action == "order_updated"


def test_a_pipelined_unit_reads_its_own_writes_at_once(game16: Game) -> None:
    entry = log_entry(game16, "order_pipelined")
    with unit_of_work():
        unit_writes_pipelined()
        row_insert(entry)
        # A read sends what waits, then answers: the row is there.
        assert LogEntry.objects.filter(action="order_pipelined").count() == 1
    assert entry.pk is not None


def test_a_pipelined_write_that_fails_raises_djangos_error_and_stores_nothing_of_the_unit(
    game16: Game,
) -> None:
    good = log_entry(game16, "order_kept_back")
    bad = log_entry(game16, "order_bad")
    bad.actor = None  # type: ignore[assignment]  # NOT NULL: the database refuses the row
    with pytest.raises(IntegrityError), unit_of_work():
        unit_writes_pipelined()
        row_insert(good)
        row_insert(bad)
    assert not LogEntry.objects.filter(action__in=["order_kept_back", "order_bad"]).exists()


def test_a_unit_refused_after_its_pipelined_writes_stores_nothing_and_the_connection_serves_on(
    game16: Game,
) -> None:
    entry = log_entry(game16, "order_refused_later")
    with pytest.raises(TournamentError), unit_of_work():
        unit_writes_pipelined()
        row_insert(entry)
        raise TournamentError("refused after the write")
    assert not LogEntry.objects.filter(action="order_refused_later").exists()
    again = log_entry(game16, "order_after")
    row_insert(again)
    assert LogEntry.objects.filter(pk=again.pk).exists()


# The operation's own transaction (as a request runs it, not inside a test's): the writes go
# with the COMMIT, and the keys are set before any later commit hook runs.


@pytest.mark.django_db(transaction=True)
def test_pipelined_writes_commit_with_their_keys_set_before_the_units_hooks(game16: Game) -> None:
    entry = log_entry(game16, "order_committed")
    seen: list[int | None] = []
    with unit_of_work():
        unit_writes_pipelined()
        row_insert(entry)
        transaction.on_commit(lambda: seen.append(entry.pk))
    assert seen == [entry.pk] and entry.pk is not None
    assert stored(LogEntry, entry.pk)["action"] == "order_committed"


@pytest.mark.django_db(transaction=True)
def test_a_pipelined_write_that_fails_fails_the_commit_and_stores_nothing(game16: Game) -> None:
    good = log_entry(game16, "order_kept_back")
    bad = log_entry(game16, "order_bad")
    bad.actor = None  # type: ignore[assignment]
    hooks: list[str] = []
    with pytest.raises(IntegrityError), unit_of_work():
        unit_writes_pipelined()
        row_insert(good)
        row_insert(bad)
        transaction.on_commit(lambda: hooks.append("ran"))
    assert hooks == []
    assert not LogEntry.objects.filter(action__in=["order_kept_back", "order_bad"]).exists()
    row_insert(log_entry(game16, "order_after"))  # the connection serves on
    assert LogEntry.objects.filter(action="order_after").count() == 1
