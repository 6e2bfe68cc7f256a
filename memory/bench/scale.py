"""``--scale N``: recall latency in a crowded index, and what it grows like.

The measured owner (the first sample's player) gets N more messages in another
conversation, and each of :data:`OTHER_PLAYERS` other players N, so the table holds 20 × N
rows of other players beside the owner's (``--scale 100000``: 100,000 of the owner's among
about 2,000,000). The fill goes in steps (:data:`CURVE`: 1,000, 10,000, 100,000 per owner,
those below N, then N) and at each step the first sample's questions are asked again (k=10)
until :data:`CALLS` calls are timed: the *cost curve* of recall p95 against the index's
size. The filler is small talk with a few words of the facts' pools mixed in (the lexical
side meets common and rarer terms, as in real chat). It is written in bulk: the messages
with one ``COPY`` per :data:`WRITE_BATCH`, then indexed by the product's ``index_messages``
a thousand at a time (its multi-row INSERTs; the embedding is the cost that remains). The
tables are analysed after each step (``ingest.analyze``). Recall is timed twice a step when
an owner's HNSW index falls due: by exact search first, then with the owners' own indexes
built (``recall.owner_index``, which the indexing task asks a worker to build once an
owner passes its size) and used; the second is the figure of the goal. At the end, the
memory tables' and their indexes' sizes on disk (:func:`sizes`).
"""

from __future__ import annotations

import random
import time
import uuid
from datetime import UTC, datetime

from django.db import connection

from memory.bench import facts, metrics, smalltalk
from memory.bench.ingest import Ingested, Owner, analyze, index
from memory.bench.stats import summary
from memory.models import Message, MessageStatus, RecallItem, RecallTerm
from memory.recall import owner_index
from memory.recall.search import RecallQuery, recall

OTHER_PLAYERS = 20
CALLS = 200
WRITE_BATCH = 2000
INDEX_BATCH = 1000
GOAL_P95_MS = 50.0
GOAL_OWNER_MESSAGES, GOAL_TABLE_MESSAGES = 10_000, 200_000
CURVE = (1_000, 10_000, 100_000)  # owner sizes of the cost curve
SIZED = (Message, RecallItem, RecallTerm)


def filler_text(rng: random.Random) -> str:
    text, _caption = smalltalk.filler(rng, "Sam")
    pool = facts.POOLS[rng.choice(sorted(facts.POOLS))]
    extra = rng.choice(pool)
    extra = extra[0] if isinstance(extra, tuple) else extra
    return f"{text} Also, {extra}." if rng.random() < 0.5 else text


def fill(owner: Owner, count: int, rng: random.Random, *, start: int = 0) -> None:
    """Messages ``start`` to ``count`` of ``owner``'s filler conversation, written with
    ``COPY`` (:func:`copy_messages`) and indexed by the product's ``index_messages``, a
    thousand at a time."""
    base = int(time.time() * 1000)
    for offset in range(start, count, WRITE_BATCH):
        rows = [
            (uuid.uuid4(), "user" if n % 2 == 0 else "assistant", filler_text(rng), base + n)
            for n in range(offset, min(offset + WRITE_BATCH, count))
        ]
        copy_messages(owner, rows)
        for first in range(0, len(rows), INDEX_BATCH):
            index(owner, [row[0] for row in rows[first : first + INDEX_BATCH]])


def copy_messages(owner: Owner, rows: list[tuple]) -> None:
    """``(id, role, content, ts)`` rows into the message table in one ``COPY`` (no model
    instances, no per-row statement): the columns a stored message has, defaults spelled
    out as the model gives them."""
    table = Message._meta.db_table
    now = datetime.now(UTC)
    columns = (
        "id, tenant_id, session_id, role, content, status, metadata, ts, archived, "
        "selected_alternative, edited, created_at"
    )
    with connection.cursor() as cursor:
        with cursor.cursor.copy(f"COPY {table} ({columns}) FROM STDIN") as copy:
            for pk, role, content, ts in rows:
                copy.write_row(
                    (pk, owner.tenant.pk, owner.session_id, role, content,
                     MessageStatus.COMPLETE, "{}", ts, False, 0, False, now)
                )  # fmt: skip


def clear(tenant) -> None:
    """Delete the tenant's index rows and messages in two statements before the tenant goes:
    a cascade through Django would load every crowded row first. The bench's messages have
    no alternatives, edits or evidence."""
    with connection.cursor() as cursor:
        for model in (RecallItem, Message):
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE tenant_id = %s", [tenant.pk])


def _recall_at_10(measured: Ingested, questions: list) -> float | None:
    """Mean evidence recall@10 of ``questions`` for the measured owner."""
    values = []
    for q in questions:
        query = RecallQuery(query=q.question, k=10)
        items = recall(measured.owner.tenant, measured.owner.player, query)["items"]
        values.append(metrics.recall_at(q.evidence, measured.dia_items(items), 10))
    return round(sum(values) / len(values), 4) if values else None


def _timings(owner: Owner, questions: list) -> list[float]:
    """:data:`CALLS` recalls (k=10) of ``questions`` in turn, each timed (ms)."""
    timings: list[float] = []
    for n in range(CALLS if questions else 0):
        query = RecallQuery(query=questions[n % len(questions)].question, k=10)
        started = time.perf_counter()
        recall(owner.tenant, owner.player, query)
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def steps(count: int) -> list[int]:
    """The owner sizes timed on the way to ``count``: each of :data:`CURVE` below it, then
    ``count``."""
    return [size for size in CURVE if size < count] + [count]


def _point(owner: Owner, others: list[Owner], questions: list, size: int) -> dict:
    """Recall timed at this size: before the owners' indexes due now are built, and after
    (the same timings when none is due)."""
    analyze()
    before = _timings(owner, questions)
    built = [owner_index.build(owner.tenant, o.player.pk) for o in [owner, *others]]
    built = [entry for entry in built if entry is not None]
    after = _timings(owner, questions) if built else before
    return {
        "owner_messages": RecallItem.objects.filter(
            tenant=owner.tenant, player=owner.player, chunk=0
        ).count(),
        "table_messages": RecallItem.objects.filter(chunk=0).count(),
        "recall_ms_k10": summary(after),
        "recall_ms_k10_exact": summary(before),
        "owner_indexes_built": len(built),
        "build_ms": summary(entry.build_ms for entry in built),
    }


def run(measured: Ingested, extra: Owner, others: list[Owner], count: int) -> dict:
    """Fill in :func:`steps`, timing the measured owner's recall at each (the cost curve),
    then the sizes on disk (see the module docstring)."""
    owner = measured.owner
    questions = [q for q in measured.sample.questions if q.evidence]
    before = _recall_at_10(measured, questions)
    rng = random.Random(count)
    curve, filled = [], 0
    for size in steps(count):
        began = time.perf_counter()
        for target in [extra, *others]:
            fill(target, size, rng, start=filled)
        seconds = time.perf_counter() - began
        written = (size - filled) * (1 + len(others))
        filled = size
        point = _point(owner, others, questions, size)
        point.update(
            added_per_owner=size,
            fill_s=round(seconds, 1),
            fill_messages_per_s=round(written / seconds, 1) if seconds else None,
        )
        curve.append(point)
    last = curve[-1]
    return {
        "added_owner_messages": count,
        "added_other_messages": count * len(others),
        "owner_messages": last["owner_messages"],
        "table_messages": last["table_messages"],
        "fill_s": round(sum(point["fill_s"] for point in curve), 1),
        "recall_ms_k10": last["recall_ms_k10"],
        "recall_ms_k10_exact": last["recall_ms_k10_exact"],
        "curve": curve,
        "sizes": sizes(),
        "questions": len(questions),
        "recall_at_10_before": before,
        "recall_at_10_crowded": _recall_at_10(measured, questions),
        "goal": {
            "p95_ms": GOAL_P95_MS,
            "at_owner_messages": GOAL_OWNER_MESSAGES,
            "at_table_messages": GOAL_TABLE_MESSAGES,
        },
    }


def _mb(size: int) -> float:
    return round(size / 1_048_576, 1)


def sizes() -> dict:
    """The memory tables' sizes on disk, whole database: ``{table: {table_mb (heap,
    ``pg_relation_size``), indexes_mb, total_mb (``pg_total_relation_size``, TOAST
    included), index_mb: {index: MB}}}``."""
    out = {}
    with connection.cursor() as cursor:
        for model in SIZED:
            table = model._meta.db_table
            cursor.execute(
                "SELECT pg_relation_size(%s::regclass), pg_indexes_size(%s::regclass), "
                "pg_total_relation_size(%s::regclass)",
                [table, table, table],
            )
            heap, indexes, total = cursor.fetchone()
            cursor.execute(
                "SELECT indexrelid::regclass::text, pg_relation_size(indexrelid) FROM pg_index "
                "WHERE indrelid = %s::regclass ORDER BY 2 DESC",
                [table],
            )
            out[table] = {
                "table_mb": _mb(heap),
                "indexes_mb": _mb(indexes),
                "total_mb": _mb(total),
                "index_mb": {name: _mb(size) for name, size in cursor.fetchall()},
            }
    return out
