"""SQL for the statements an order runs, built once per model and database, not per call.

An order is the one write that comes 48 at a time (issue 17). Django's ORM builds an
INSERT's SQL anew on every ``save()``: the compiler, the field list, the placeholders,
the returning clause — five times the database's own time for a row of ten columns
(benchmarks/order_cost.py). ``row_insert`` builds that SQL once and then only converts
the values, with the same field methods ``save()`` uses (``pre_save``,
``get_db_prep_save``), through the connection's cursor (so query counts, execute wrappers
and the outage middleware see the statement as before).

A model with ``pre_save``/``post_save`` receivers, or a field that needs its own
placeholder, is saved by ``save()`` instead: nothing a signal or a field expects is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db import connections, router
from django.db.models import Field, Model
from django.db.models.signals import post_save, pre_save


@dataclass(frozen=True)
class _Insert:
    sql: str
    fields: tuple[Field[object, object], ...]
    returning: bool


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
        marks = ", ".join(["%s"] * len(fields))
        sql = f"INSERT INTO {quote(meta.db_table)} ({columns}) VALUES ({marks})"
        returning = pk not in fields and connection.features.can_return_columns_from_insert
        if returning:
            sql += f" RETURNING {quote(pk.column)}"
        insert = _Insert(sql=sql, fields=fields, returning=returning)
    _INSERTS[key] = insert
    return insert


def row_insert(instance: Model, *, using: str | None = None) -> None:
    """Insert ``instance`` as a new row, as ``instance.save(using=using)`` would for a new
    object, and set its primary key and saved state."""
    model = type(instance)
    using = using or router.db_for_write(model, instance=instance)
    insert = _insert_for(model, using)
    if (
        insert is None
        or not instance._state.adding
        or (instance.pk is not None and model._meta.pk not in insert.fields)
        or pre_save.has_listeners(model)
        or post_save.has_listeners(model)
    ):
        instance.save(using=using)
        return
    connection = connections[using]
    values = [
        field.get_db_prep_save(field.pre_save(instance, True), connection=connection)
        for field in insert.fields
    ]
    meta = model._meta
    pk = meta.pk
    assert pk is not None and pk.column is not None  # _insert_for builds no SQL without them
    with connection.cursor() as cursor:
        cursor.execute(insert.sql, values)
        if insert.returning:
            row = cursor.fetchone()
            new_pk = row[0] if row else None
        elif pk in insert.fields:
            new_pk = pk.pre_save(instance, True)
        else:
            new_pk = connection.ops.last_insert_id(cursor, meta.db_table, pk.column)
    if new_pk is not None:
        for converter in pk.get_db_converters(connection):
            new_pk = converter(new_pk, pk, connection)
        setattr(instance, pk.attname, new_pk)
    instance._state.adding = False
    instance._state.db = using
