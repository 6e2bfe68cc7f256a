"""``--scale N``: recall latency in a crowded index.

The measured owner (the first sample's player) gets N more messages in another
conversation, and each of :data:`OTHER_PLAYERS` other players N, so the table holds 20 × N
rows of other players beside the owner's; then the first sample's questions are asked
again (k=10) until :data:`CALLS` calls are timed, and their evidence recall@10 is reported
next to the uncrowded one. The filler is small talk with a few words of the facts' pools
mixed in (the lexical side meets common and rarer terms, as in real chat). It is written in
bulk (``bulk_create``, then ``index_messages`` a thousand at a time): the point is the
search over many rows, not the write path, which the main run measures. The tables are
analysed after the fill (``ingest.analyze``). Recall is timed twice: by exact search over
the owner's rows, then with the owners' own HNSW indexes built (``recall.owner_index``,
which the indexing task asks a worker to build once an owner passes its size)
and used; the second is the figure of the goal.
"""

from __future__ import annotations

import random
import time
import uuid

from django.db import connection

from memory.bench import facts, metrics, smalltalk
from memory.bench.ingest import Ingested, Owner, analyze, index
from memory.bench.stats import summary
from memory.models import Message, RecallItem
from memory.recall import owner_index
from memory.recall.search import RecallQuery, recall

OTHER_PLAYERS = 20
CALLS = 200
WRITE_BATCH = 2000
INDEX_BATCH = 1000
GOAL_P95_MS = 50.0
GOAL_OWNER_MESSAGES, GOAL_TABLE_MESSAGES = 10_000, 200_000


def filler_text(rng: random.Random) -> str:
    text, _caption = smalltalk.filler(rng, "Sam")
    pool = facts.POOLS[rng.choice(sorted(facts.POOLS))]
    extra = rng.choice(pool)
    extra = extra[0] if isinstance(extra, tuple) else extra
    return f"{text} Also, {extra}." if rng.random() < 0.5 else text


def fill(owner: Owner, count: int, rng: random.Random) -> None:
    """``count`` filler messages in ``owner``'s conversation, stored and indexed."""
    start = int(time.time() * 1000)
    for offset in range(0, count, WRITE_BATCH):
        rows = [
            Message(
                id=uuid.uuid4(),
                tenant=owner.tenant,
                session_id=owner.session_id,
                role="user" if n % 2 == 0 else "assistant",
                content=filler_text(rng),
                ts=start + n,
            )
            for n in range(offset, min(offset + WRITE_BATCH, count))
        ]
        Message.objects.bulk_create(rows)
        for first in range(0, len(rows), INDEX_BATCH):
            index(owner, [row.pk for row in rows[first : first + INDEX_BATCH]])


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


def run(measured: Ingested, extra: Owner, others: list[Owner], count: int) -> dict:
    """Fill, then time the measured owner's recall (see the module docstring)."""
    owner = measured.owner
    questions = [q for q in measured.sample.questions if q.evidence]
    before = _recall_at_10(measured, questions)
    rng = random.Random(count)
    began = time.perf_counter()
    fill(extra, count, rng)
    for other in others:
        fill(other, count, rng)
    filled_s = time.perf_counter() - began
    analyze()
    exact = _timings(owner, questions)
    built = [owner_index.build(owner.tenant, o.player.pk) for o in [owner, *others]]
    timings = _timings(owner, questions)
    owner_rows = RecallItem.objects.filter(tenant=owner.tenant, player=owner.player, chunk=0)
    return {
        "added_owner_messages": count,
        "added_other_messages": count * len(others),
        "owner_messages": owner_rows.count(),
        "table_messages": RecallItem.objects.filter(chunk=0).count(),
        "fill_s": round(filled_s, 1),
        "recall_ms_k10": summary(timings),
        "recall_ms_k10_exact": summary(exact),
        "owner_indexes": {
            "built": sum(1 for entry in built if entry is not None),
            "build_ms": summary(entry.build_ms for entry in built if entry is not None),
        },
        "questions": len(questions),
        "recall_at_10_before": before,
        "recall_at_10_crowded": _recall_at_10(measured, questions),
        "goal": {
            "p95_ms": GOAL_P95_MS,
            "at_owner_messages": GOAL_OWNER_MESSAGES,
            "at_table_messages": GOAL_TABLE_MESSAGES,
        },
    }
