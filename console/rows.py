"""Model instances from a raw SELECT, built the way the ORM builds them, and one written by
a raw INSERT.

The chat turn's hot reads are single SQL statements (DESIGN: a fast path lives beside the
rule it speeds up, pinned to the ORM by a test). :class:`Columns` names a model's columns in
such a statement and turns its slice of a result row back into an instance, with deferred
fields left deferred and JSON decoded, so the code after the read cannot tell the
difference. :func:`insert` writes an instance the way ``save(force_insert=True)`` does
(every concrete field, ``pre_save`` applied), in a statement built once per model, and
leaves a duplicate alone instead of raising. :func:`prepared` runs such a statement as a
prepared statement of the connection: the turn's first read joins a dozen tables, and
PostgreSQL spent ten times longer planning it than running it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache

import psycopg
from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Field, Model


@dataclass(frozen=True)
class Columns:
    """The selected columns of ``model`` under the table alias ``alias``."""

    model: type[Model]
    alias: str
    fields: tuple[Field, ...]

    @classmethod
    def of(cls, model: type[Model], alias: str, *, defer: Sequence[str] = ()) -> Columns:
        fields = tuple(f for f in model._meta.concrete_fields if f.name not in defer)
        return cls(model, alias, fields)

    def sql(self) -> str:
        quote = connection.ops.quote_name
        return ", ".join(f"{self.alias}.{quote(f.column)}" for f in self.fields)

    def build(self, row: Sequence[object], start: int) -> Model | None:
        """The instance whose columns start at ``row[start]``; None when its primary key is
        NULL (a LEFT JOIN that found no row)."""
        values = list(row[start : start + len(self.fields)])
        pk = self.model._meta.pk
        if values[self.fields.index(pk)] is None:
            return None
        for position, field in enumerate(self.fields):
            convert = getattr(field, "from_db_value", None)
            if convert is not None:
                values[position] = convert(values[position], None, connection)
        return self.model.from_db(DEFAULT_DB_ALIAS, [f.attname for f in self.fields], values)


def json_value(value: object) -> object:
    """A JSON expression's value from a raw row: decoded when the driver handed over its
    text (Django leaves jsonb undecoded), as it is otherwise."""
    return json.loads(value) if isinstance(value, str | bytes) else value


def select(*parts: Columns) -> str:
    """The SELECT list of several models, in order (see :func:`build_all`)."""
    return ", ".join(part.sql() for part in parts)


def build_all(row: Sequence[object], *parts: Columns) -> list[Model | None]:
    """Each part's instance from one row laid out by :func:`select`."""
    out, start = [], 0
    for part in parts:
        out.append(part.build(row, start))
        start += len(part.fields)
    return out


@contextmanager
def prepared(sql: str, params: Sequence[object] | Mapping[str, object]) -> Iterator[psycopg.Cursor]:
    """A cursor that has run ``sql`` as a prepared statement of this connection (planned
    once per pooled connection, then only executed), with the connection's adapters and
    Django's error wrapping. With prepared statements off (``DB_PREPARED_STATEMENTS=0``, for
    a transaction-mode pooler that cannot keep them) it is an ordinary execution. ``sql``
    takes ``%s`` placeholders bound by the server, so each must have a type PostgreSQL can
    infer."""
    connection.ensure_connection()
    started = time.monotonic()
    with connection.wrap_database_errors, psycopg.Cursor(connection.connection) as cursor:
        cursor.execute(sql, params, prepare=True)
        if connection.queries_logged:  # seen by the debug log and query counts like any other
            took = time.monotonic() - started
            connection.queries_log.append({"sql": sql, "time": f"{took:.3f}"})
        yield cursor


def insert(instance: Model, *, unique: str) -> bool:
    """INSERT ``instance`` unless a row with its ``unique`` column's value exists (``ON
    CONFLICT DO NOTHING``: no error, so no savepoint either); True when it was written, its
    database-made columns (an auto id) then set on it."""
    model = type(instance)
    written, returned = _insert_fields(model)
    values = [f.get_db_prep_save(f.pre_save(instance, True), connection) for f in written]
    with connection.cursor() as cursor:
        cursor.execute(_insert_sql(model, unique), values)
        row = cursor.fetchone()
    if row is None:
        return False
    for field, value in zip(returned, row, strict=True):
        setattr(instance, field.attname, value)
    instance._state.adding = False
    instance._state.db = DEFAULT_DB_ALIAS
    return True


def _insert_fields(model: type[Model]) -> tuple[list[Field], list[Field]]:
    """(the columns an INSERT writes, the ones the database makes and returns)."""
    fields = model._meta.concrete_fields
    return [f for f in fields if not f.db_returning], [f for f in fields if f.db_returning]


@cache
def _insert_sql(model: type[Model], unique: str) -> str:
    quote = connection.ops.quote_name
    written, returned = _insert_fields(model)
    columns = ", ".join(quote(f.column) for f in written)
    marks = ", ".join(["%s"] * len(written))
    back = ", ".join(quote(f.column) for f in returned) or "1"
    return (
        f"INSERT INTO {quote(model._meta.db_table)} ({columns}) VALUES ({marks}) "
        f"ON CONFLICT ({quote(unique)}) DO NOTHING RETURNING {back}"
    )
