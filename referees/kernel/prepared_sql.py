"""SQL for the statements an order runs, built once per model and database, not per call.

An order is the one write that comes 48 at a time (issue 17). Django's ORM builds an
INSERT's SQL anew on every ``save()``: the compiler, the field list, the placeholders,
the returning clause — five times the database's own time for a row of ten columns
(benchmarks/order_cost.py). ``row_insert`` builds that SQL once and then only converts
the values, with the same field methods ``save()`` uses (``pre_save``,
``get_db_prep_save``), through the connection's cursor (so query counts, execute wrappers
and the outage middleware see the statement as before). ``rows_insert`` does the same for
the orders of a burst stored together, one statement for all of them where
``bulk_create`` built its SQL through the compiler each time (two fifths of a burst's order
in the profile of 2026-12-03, benchmarks/README.md).

A model with ``pre_save``/``post_save`` receivers, or a field that needs its own
placeholder, is saved by ``save()`` instead: nothing a signal or a field expects is skipped.

On PostgreSQL the writes of an order need no answer until the transaction ends, yet each
waited for one: five round trips to the server where the one-INSERT view makes one
(benchmarks/order_cost.py, 2026-12-04). Inside ``statements_pipelined`` they are sent
without waiting, in psycopg's pipeline mode, and their answers (the new rows' keys, any
error) are read together as the block ends; elsewhere, and on SQLite, the block changes
nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import psycopg
from django.db import connections, router
from django.db.backends.base.base import BaseDatabaseWrapper
from django.db.backends.postgresql.psycopg_any import is_psycopg3
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model
from django.db.models.signals import post_save, pre_save


@dataclass(frozen=True)
class _Insert:
    """The INSERT of one row of a model; ``sql_for(n)`` is the statement for ``n`` rows."""

    head: str
    row: str
    tail: str
    fields: tuple[Field[object, object], ...]
    returning: bool

    def sql_for(self, rows: int) -> str:
        return self.head + ", ".join([self.row] * rows) + self.tail


_INSERTS: dict[tuple[type[Model], str], _Insert | None] = {}


def _insert_for(model: type[Model], using: str) -> _Insert | None:
    key = (model, using)
    if key in _INSERTS:
        return _INSERTS[key]
    connection = connections[using]
    meta = model._meta
    pk = meta.pk
    fields = tuple(
        field
        for field in meta.local_concrete_fields
        if not (field is pk and getattr(field, "db_returning", False))
    )
    names = [field.column for field in fields]
    insert: _Insert | None = None
    if (
        pk is not None
        and pk.column is not None
        and None not in names
        and not any(hasattr(field, "get_placeholder") for field in fields)
    ):
        quote = connection.ops.quote_name
        columns = ", ".join(quote(str(name)) for name in names)
        returning = pk not in fields and connection.features.can_return_columns_from_insert
        insert = _Insert(
            head=f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ",
            row="(" + ", ".join(["%s"] * len(fields)) + ")",
            tail=f" RETURNING {quote(pk.column)}" if returning else "",
            fields=fields,
            returning=returning,
        )
    _INSERTS[key] = insert
    return insert


def _prepared(model: type[Model], using: str, instance: Model) -> _Insert | None:
    """The prepared INSERT for ``instance``, or None where ``save()`` must store it."""
    insert = _insert_for(model, using)
    if (
        insert is None
        or not instance._state.adding
        or (instance.pk is not None and model._meta.pk not in insert.fields)
        or pre_save.has_listeners(model)
        or post_save.has_listeners(model)
    ):
        return None
    return insert


def row_insert(instance: Model, *, using: str | None = None) -> None:
    """Insert ``instance`` as a new row, as ``instance.save(using=using)`` would for a new
    object, and set its primary key and saved state."""
    rows_insert([instance], using=using)


def rows_insert(instances: Sequence[Model], *, using: str | None = None) -> None:
    """Insert new objects of one model, all in one statement where the database gives back
    the keys of a multi-row INSERT (PostgreSQL, SQLite 3.35+), as ``save()`` would store
    each: the same values, keys and saved state. With ``pre_save``/``post_save`` receivers,
    or where one statement cannot give the keys back, each is saved by itself
    (``save()`` where receivers listen), so nothing a signal expects is skipped — unlike
    ``bulk_create``, which sends no signal at all."""
    if not instances:
        return
    model = type(instances[0])
    assert all(type(instance) is model for instance in instances), "one model at a time"
    using = using or router.db_for_write(model, instance=instances[0])
    connection = connections[using]
    inserts = {id(instance): _prepared(model, using, instance) for instance in instances}
    many = (
        len(instances) > 1
        and None not in inserts.values()
        and connection.features.can_return_rows_from_bulk_insert
    )
    if not many:
        for instance in instances:
            insert = inserts[id(instance)]
            if insert is None:
                instance.save(using=using)
            else:
                _insert_run(connection, insert, [instance], using)
        return
    insert = inserts[id(instances[0])]
    assert insert is not None
    size = max(1, connection.ops.bulk_batch_size(list(insert.fields), list(instances)))
    for start in range(0, len(instances), size):
        _insert_run(connection, insert, instances[start : start + size], using)


def _insert_run(
    connection: BaseDatabaseWrapper, insert: _Insert, instances: Sequence[Model], using: str
) -> None:
    values = [
        field.get_db_prep_save(field.pre_save(instance, True), connection=connection)
        for instance in instances
        for field in insert.fields
    ]
    meta = type(instances[0])._meta
    pk = meta.pk
    assert pk is not None and pk.column is not None  # _insert_for builds no SQL without them
    sql = insert.sql_for(len(instances))
    if insert.returning:
        # One key a row, in the order of VALUES: what bulk_create relies on too.
        statement_run(
            sql,
            values,
            using=using,
            then=lambda cursor: _keys_give(
                connection, instances, [row[0] for row in cursor.fetchall()], using
            ),
        )
        return
    with connection.cursor() as cursor:
        cursor.execute(sql, values)
        if pk in insert.fields:
            keys = [pk.pre_save(instance, True) for instance in instances]
        else:
            assert len(instances) == 1, "the last insert id names one row"
            keys = [connection.ops.last_insert_id(cursor, meta.db_table, pk.column)]
    _keys_give(connection, instances, keys, using)


def _keys_give(
    connection: BaseDatabaseWrapper, instances: Sequence[Model], keys: list[object], using: str
) -> None:
    """The new rows' keys set on their objects, which are then saved ones."""
    pk = type(instances[0])._meta.pk
    assert pk is not None
    assert len(keys) == len(instances), (len(keys), len(instances))
    converters = pk.get_db_converters(connection)
    for instance, key in zip(instances, keys, strict=True):
        if key is not None:
            for converter in converters:
                key = converter(key, pk, connection)
            setattr(instance, pk.attname, key)
        instance._state.adding = False
        instance._state.db = using


def statement_run(
    sql: str,
    params: Sequence[Any],
    *,
    using: str,
    then: Callable[[CursorWrapper], None] | None = None,
) -> None:
    """Run ``sql``, then ``then(cursor)`` to read its answer (an INSERT's keys), if any.
    Inside ``statements_pipelined`` the statement is sent without waiting, and its answer
    read, or its error raised, as the block ends."""
    connection = connections[using]
    pending = _pending_for(using)
    if pending is None:
        with connection.cursor() as cursor:
            cursor.execute(sql, params)
            if then is not None:
                then(cursor)
        return
    sent = connection.cursor()
    sent.execute(sql, params)

    def finish() -> None:
        with sent:
            if then is not None:
                then(sent)

    pending.append(finish)


# What each database alias in a pipelined block still has to read once it ends.
_PENDING: ContextVar[dict[str, list[Callable[[], None]]] | None] = ContextVar(
    "sl5r_statements_pending", default=None
)


def _pending_for(using: str) -> list[Callable[[], None]] | None:
    pending = _PENDING.get()
    return None if pending is None else pending.get(using)


def statements_pipelined_supported(using: str) -> bool:
    """Whether ``statements_pipelined`` sends ahead on this database: PostgreSQL through
    psycopg 3 with a libpq that has pipeline mode (14 and later)."""
    connection = connections[using]
    if connection.vendor != "postgresql":
        return False
    return is_psycopg3 and bool(psycopg.Pipeline.is_supported())


@contextmanager
def statements_pipelined(*, using: str) -> Iterator[None]:
    """Within the block, ``rows_insert`` and ``statement_run`` send their statements
    without waiting for the server's answers; the block's end waits once for all of them,
    sets the new rows' keys and raises the first error as Django's own (an
    ``IntegrityError``, an ``OperationalError`` for a database gone). A query whose rows
    are read inside the block (a SELECT) still gets them at once: reading sends what waits.

    Where ``statements_pipelined_supported`` is false the block runs as it would without
    it. Only what the block's own code runs is pipelined: a statement whose effect is read
    by count, as ``QuerySet.update()`` returns, does not belong inside.
    """
    pending_now = _PENDING.get()
    if (pending_now is not None and using in pending_now) or not statements_pipelined_supported(
        using
    ):
        yield
        return
    connection = connections[using]
    connection.ensure_connection()
    pending: list[Callable[[], None]] = []
    token = _PENDING.set({**(pending_now or {}), using: pending})
    try:
        with connection.wrap_database_errors, connection.connection.pipeline():
            yield
        # The pipeline has synced: every statement's answer is in its cursor.
        for finish in pending:
            finish()
    finally:
        _PENDING.reset(token)
