"""A player's own approximate index over their recall rows, once they are many.

The embedded pgvector (0.6.2) filters an approximate index scan only after the scan, so an
HNSW index over the whole table would hand a small owner fewer than ``k`` rows; recall
therefore searches exactly over the owner's rows (``search``), which reads every one of
them: a few ms at a thousand rows, about ten at ten thousand. Once a player holds
:data:`OWNER_INDEX_ROWS` rows of one embedder, they get a partial HNSW index of their own
(``WHERE player_id = … AND embedder = … AND vector_dims(embedding) = …``). Every row it holds
is theirs, so its scan needs no filter afterwards and returns the whole pool, in about a
millisecond whatever their size.

- :func:`wanted` is the indexing task's cheap question (the row count the statement
  triggers keep in ``RecallTerm``); :func:`build` makes the index (``CONCURRENTLY`` outside
  a transaction; the registry row is written only once it is valid), under an advisory lock
  so that two workers never build the same one.
- :func:`dimensions` is what search asks: the size of the owner's index vectors, or None.
- :func:`prune` drops the indexes whose player is gone or whose embedder is no longer the
  tenant's (the minute's sweep).

Conversation, character and time filters keep the exact search: the owner's index would
have to be filtered after its scan, which is what cannot promise ``k``.
"""

from __future__ import annotations

import hashlib
import re
import time

from django.db import connection
from psycopg import sql

from console.lru import Lru
from memory.models import RecallItem, RecallOwnerIndex, RecallTerm
from memory.recall.embedder import recall_embedder

OWNER_INDEX_ROWS = 5000
PREFIX = "recall_hnsw_"
_NAME = re.compile(r"recall_hnsw_[0-9]+_[0-9a-f]{10}")  # nothing else is ever pruned
_KNOWN = Lru(4096)
EF_SEARCH = 200  # candidates an index scan keeps: the pool recall takes from it
KNOWN_FOR_S = 60.0  # how long a process trusts what it read of an owner's index


def index_name(player_id: int, embedder: str) -> str:
    return f"{PREFIX}{player_id}_{hashlib.sha1(embedder.encode()).hexdigest()[:10]}"


def dimensions(tenant, player_id: int, embedder: str, *, cached: bool = False) -> int | None:
    """The dimensions of the owner's built index for ``embedder``, or None. ``cached``:
    as read in the last :data:`KNOWN_FOR_S` seconds (search: a new index is used a minute
    late at worst, and a dropped one only costs the exact search its SQL then falls to)."""
    key = (str(tenant.pk), player_id, embedder)
    if cached:
        known = _KNOWN.get(key)
        if known is not None and time.monotonic() - known[1] < KNOWN_FOR_S:
            return known[0]
    found = (
        RecallOwnerIndex.objects.filter(tenant=tenant, player_id=player_id, embedder=embedder)
        .values_list("dimensions", flat=True)
        .first()
    )
    _KNOWN.put(key, (found, time.monotonic()))
    return found


def wanted(tenant, player_id: int) -> bool:
    """Whether the player may need an index for the tenant's embedder: rows enough (all
    embedders' together: :func:`build` counts its own), and none built."""
    counted = RecallTerm.objects.filter(tenant=tenant, player_id=player_id, term="").first()
    if counted is None or counted.df < OWNER_INDEX_ROWS:
        return False
    embedder = recall_embedder(tenant).embedding_version
    return dimensions(tenant, player_id, embedder, cached=True) is None


def build(tenant, player_id: int) -> RecallOwnerIndex | None:
    """The player's index for the tenant's current embedder, built now if they hold enough
    rows of it and none exists; None when not due, or when another worker is building it."""
    embedder = recall_embedder(tenant).embedding_version
    rows = RecallItem.objects.filter(
        tenant=tenant, player_id=player_id, embedder=embedder, embedding__isnull=False
    )
    count = rows.count()
    if count < OWNER_INDEX_ROWS or dimensions(tenant, player_id, embedder) is not None:
        return None
    name = index_name(player_id, embedder)
    with _locked(name) as got:
        if not got or dimensions(tenant, player_id, embedder) is not None:
            return None
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT vector_dims(embedding) FROM {RecallItem._meta.db_table} "
                "WHERE player_id = %s AND embedder = %s AND embedding IS NOT NULL LIMIT 1",
                [player_id, embedder],
            )
            dims = cursor.fetchone()[0]
        began = time.perf_counter()
        _drop(name)  # a build that failed half-way leaves an invalid index of that name
        _execute(
            sql.SQL(
                "CREATE INDEX{concurrently} {name} ON {table} USING hnsw "
                "((embedding::vector({dims})) vector_cosine_ops) "
                "WHERE player_id = {player} AND embedder = {embedder} "
                "AND vector_dims(embedding) = {dims}"
            ).format(
                concurrently=_concurrently(),
                name=sql.Identifier(name),
                table=sql.Identifier(RecallItem._meta.db_table),
                dims=sql.Literal(dims),
                player=sql.Literal(player_id),
                embedder=sql.Literal(embedder),
            )
        )
        built = RecallOwnerIndex.objects.create(
            tenant=tenant,
            player_id=player_id,
            embedder=embedder,
            dimensions=dims,
            name=name,
            rows=count,
            build_ms=round((time.perf_counter() - began) * 1000),
        )
    _KNOWN.put((str(tenant.pk), player_id, embedder), (dims, time.monotonic()))
    return built


def prune() -> int:
    """Drop the owners' indexes that serve no one: those without a registry row (the player
    was deleted, or a build failed) and those of an embedder the tenant no longer uses;
    how many were dropped. An index being built (its lock held) is left alone."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename = %s AND indexname LIKE %s",
            [RecallItem._meta.db_table, PREFIX.replace("_", r"\_") + "%"],
        )
        present = {row[0] for row in cursor.fetchall() if _NAME.fullmatch(row[0])}
    current: dict = {}
    stale = set()
    for entry in RecallOwnerIndex.objects.select_related("tenant"):
        if entry.tenant_id not in current:
            current[entry.tenant_id] = recall_embedder(entry.tenant).embedding_version
        if entry.embedder != current[entry.tenant_id]:
            stale.add(entry.name)
        else:
            present.discard(entry.name)
    dropped = 0
    for name in sorted(present | stale):
        with _locked(name) as got:
            if got:
                RecallOwnerIndex.objects.filter(name=name).delete()
                _drop(name)
                dropped += 1
    return dropped


def _concurrently() -> sql.SQL:
    """``CONCURRENTLY`` (writes go on during the build) unless inside a transaction, where
    PostgreSQL refuses it."""
    return sql.SQL("" if connection.in_atomic_block else " CONCURRENTLY")


def _drop(name: str) -> None:
    _execute(
        sql.SQL("DROP INDEX{concurrently} IF EXISTS {name}").format(
            concurrently=_concurrently(), name=sql.Identifier(name)
        )
    )


def _execute(statement: sql.Composed) -> None:
    connection.ensure_connection()
    text = statement.as_string(connection.connection)
    with connection.cursor() as cursor:
        cursor.execute(text)


class _locked:
    """A session advisory lock on ``name``, tried (not waited for); ``as`` gives whether it
    was had."""

    def __init__(self, name: str) -> None:
        self.key = int(hashlib.sha1(name.encode()).hexdigest()[:15], 16)
        self.got = False

    def __enter__(self) -> bool:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(%s)", [self.key])
            self.got = bool(cursor.fetchone()[0])
        return self.got

    def __exit__(self, *exc) -> None:
        if self.got:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(%s)", [self.key])
