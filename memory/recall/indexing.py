"""The recall index: every user and assistant message of a conversation, chunked when long,
with its owner (tenant, player, character, conversation), its terms and its vector.

- :func:`index_messages` indexes messages (the turn enqueues ``memory.index_messages`` when
  its messages commit), :func:`index_jobs` several conversations' at once (the task takes
  the turns waiting beside its own: ``memory.recall.pending``); a message indexed with the
  same text and embedder is left alone, a changed one is indexed again. Idempotent, so a
  task delivered twice, or a job indexed in another task's batch, does no harm.
- Deleted messages leave the index in the transaction that deletes them (the message
  store's ``messages_deleted``); an edit, a trim or another alternative shown
  (``history_changed``) reconciles the conversation in the next task.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from datetime import UTC, datetime

from django.db import connection, transaction
from django.db.models import Count, Q

from console import task_send
from console.models import Tenant
from memory.engine import recall as terms
from memory.models import Message, RecallItem
from memory.recall.embedder import EmbeddingUnavailable, recall_embedder, recall_version
from memory.signals import history_changed, messages_deleted

ROLES = ("user", "assistant")
# The embedder of rows indexed while the tenant's embeddings endpoint failed: no vector,
# found by words only until the minute's sweep indexes them again.
UNAVAILABLE = "unavailable"
logger = logging.getLogger(__name__)


def _hash(text: str, embedder: str) -> str:
    """What a row was made from: the text, the embedder and the terms' analyser; a message
    whose hash differs is indexed again."""
    return hashlib.sha256(f"{embedder}\n{terms.ANALYSER}\n{text}".encode()).hexdigest()


@dataclass(frozen=True)
class Job:
    """One conversation's messages to index (``message_ids`` None: all of them)."""

    session_id: str
    player_id: object
    character_id: str
    conversation_id: object
    message_ids: list | None = None


def index_messages(
    tenant, *, session_id: str, player_id, character_id: str, conversation_id, message_ids=None
) -> int:
    """Index ``message_ids`` of the conversation (all of it when None); how many messages
    were (re)indexed. Messages of other roles, or of another session, are skipped."""
    job = Job(session_id, player_id, character_id, conversation_id, message_ids)
    return index_jobs(tenant, [job])[0]


def index_jobs(tenant, jobs: list[Job]) -> list[int]:
    """Index each job's messages, all of them with one call of the embedder and in as few
    statements as can be; how many messages of each job were (re)indexed."""
    if not jobs:
        return []
    taken = _messages(tenant, jobs)
    messages = [message for mine in taken for message in mine]
    if not messages:
        return [0] * len(jobs)
    embedder = recall_embedder(tenant)
    known = dict(
        RecallItem.objects.filter(message_id__in=[m.pk for m in messages], chunk=0).values_list(
            "message_id", "content_hash"
        )
    )
    current = embedder.embedding_version
    changed_by_job = [
        [m for m in mine if known.get(m.pk) != _hash(m.content, current)] for mine in taken
    ]
    changed = [(job, m) for job, mine in zip(jobs, changed_by_job, strict=True) for m in mine]
    if not changed:
        return [0] * len(jobs)
    pieces = [(job, message, terms.chunks(message.content)) for job, message in changed]
    texts = [piece for _job, _message, chunks in pieces for piece in chunks]
    version = embedder.embedding_version
    try:
        vectors: list = embedder.embed(texts)
    except EmbeddingUnavailable as exc:  # lexical now, vectors at the next sweep
        logger.warning("recall vectors unavailable (%s): %d messages indexed without", exc.code,
                       len(changed))  # fmt: skip
        vectors, version = [None] * len(texts), UNAVAILABLE
    found = iter(vectors)
    items = []
    for job, message, chunks in pieces:
        digest = _hash(message.content, version)
        for number, piece in enumerate(chunks):
            lexemes = terms.tsvector_literal(piece)
            items.append((job, message, number, piece, lexemes, next(found), digest))
    stale = [m.pk for _job, m in changed if m.pk in known]  # indexed before: rows go first
    if not stale and len(items) <= INSERT_ROWS:  # turns' new messages: one statement
        inserted = _insert(tenant, items, version)
    else:
        with transaction.atomic():
            RecallItem.objects.filter(message_id__in=[m.pk for _job, m in changed]).delete()
            inserted = _insert(tenant, items, version)
    # A message another task indexed meanwhile (its job taken in a batch while its own task
    # ran) was skipped, not counted: its conversation's receivers are told once.
    return [sum(1 for m in mine if m.pk in inserted) for mine in changed_by_job]


def _messages(tenant, jobs: list[Job]) -> list[list[Message]]:
    """Each job's user and assistant messages, read in one query (a message named by two
    jobs goes to the first)."""
    wanted = Q()
    for job in jobs:
        ids = None if job.message_ids is None else list(job.message_ids)
        wanted |= Q(session_id=job.session_id, **({} if ids is None else {"pk__in": ids}))
    rows = Message.objects.filter(wanted, tenant=tenant, role__in=ROLES)
    found = list(rows.only("id", "session_id", "role", "content", "ts", "created_at"))
    taken: set = set()
    out = []
    for job in jobs:
        ids = None if job.message_ids is None else {str(i) for i in job.message_ids}
        mine = [
            m for m in found
            if m.session_id == job.session_id and m.pk not in taken
            and (ids is None or str(m.pk) in ids)
        ]  # fmt: skip
        taken.update(m.pk for m in mine)
        out.append(mine)
    return out


INSERT_ROWS = 1000  # chunks per INSERT statement (15 parameters each)


def _insert(tenant, items, version) -> set:
    """The chunks in as few INSERTs as can be (the term statistics' trigger runs once a
    statement); the lexemes are a literal ``tsvector`` (no parser). A chunk whose row
    exists already (another task indexed the message meanwhile) is skipped rather than
    failing the statement, and with it the other jobs' rows; the ids of the messages whose
    first chunk went in."""
    table = RecallItem._meta.db_table
    row = "(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s::tsvector, %s::vector, %s, %s, %s)"
    params = [
        (
            tenant.pk, job.player_id, job.character_id, job.conversation_id, job.session_id,
            message.pk, number, message.role, message.ts, piece, lexemes,
            None if vector is None else terms.vector_literal(vector), version, digest,
            message.created_at or datetime.now(UTC),
        )
        for job, message, number, piece, lexemes, vector, digest in items
    ]  # fmt: skip
    inserted: set = set()
    with connection.cursor() as cursor:
        for start in range(0, len(params), INSERT_ROWS):
            batch = params[start : start + INSERT_ROWS]
            cursor.execute(
                f"""INSERT INTO {table} (tenant_id, player_id, character_id, conversation_id,
                    session_id, message_id, chunk, role, ts, text, lexemes, embedding, embedder,
                    content_hash, created_at) VALUES {", ".join([row] * len(batch))}
                    ON CONFLICT (message_id, chunk) DO NOTHING RETURNING message_id, chunk""",
                [value for values in batch for value in values],
            )
            inserted.update(message for message, chunk in cursor.fetchall() if chunk == 0)
    return inserted


def owner_of(tenant, session_id: str) -> dict | None:
    """The owner fields the session's indexed messages carry, or None if none is indexed."""
    return (
        RecallItem.objects.filter(tenant=tenant, session_id=session_id)
        .values("player_id", "character_id", "conversation_id")
        .first()
    )


def reconcile(tenant, session_id: str) -> int:
    """Make the session's index match its messages: index changed or missing ones, drop
    those of messages that are gone. Needs the owner from an earlier indexing."""
    owner = owner_of(tenant, session_id)
    if owner is None:
        return 0
    existing = Message.objects.filter(tenant=tenant, session_id=session_id).values("pk")
    RecallItem.objects.filter(tenant=tenant, session_id=session_id).exclude(
        message_id__in=existing
    ).delete()
    return index_messages(tenant, session_id=session_id, **owner)


REBUILD_SESSIONS = 20  # conversations re-indexed per sweep


def rebuild_stale(limit: int = REBUILD_SESSIONS) -> int:
    """Re-index conversations indexed with another embedder than their tenant's current one
    (a model installed, ``RECALL_EMBEDDER`` set, the tenant's endpoint changed, or rows left
    without vectors while it failed), a few per sweep, so the whole index moves over in the
    background; how many were re-indexed."""
    done = 0
    for tenant_id, version in embedders_in_use():
        tenant = Tenant.objects.filter(pk=tenant_id).first()
        if tenant is None:
            continue
        embedder = recall_embedder(tenant)
        if version == embedder.embedding_version or not _answers(embedder):
            continue
        stale = (
            RecallItem.objects.filter(tenant=tenant, embedder=version)
            .order_by()
            .values_list("session_id", flat=True)
            .distinct()[: limit - done]
        )
        for session_id in list(stale):
            reconcile(tenant, session_id)
            done += 1
        if done >= limit:
            break
    return done


def embedders_in_use() -> list[tuple]:
    """The distinct (tenant id, embedder) pairs of the index, found by skipping through the
    ``recall_tenant_embedder`` index from one pair to the next (a few probes a pair, however
    many rows each holds)."""
    table = RecallItem._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH RECURSIVE pairs AS (
                (SELECT tenant_id, embedder FROM {table} ORDER BY tenant_id, embedder LIMIT 1)
                UNION ALL
                SELECT later.tenant_id, later.embedder FROM pairs p CROSS JOIN LATERAL (
                    SELECT tenant_id, embedder FROM {table}
                    WHERE (tenant_id, embedder) > (p.tenant_id, p.embedder)
                    ORDER BY tenant_id, embedder LIMIT 1
                ) later
            )
            SELECT tenant_id, embedder FROM pairs"""
        )
        return cursor.fetchall()


def progress(tenant) -> dict:
    """How far ``tenant``'s index is on its current embedder (what :func:`rebuild_stale`
    moves, a few conversations a minute): ``{current, chunks, done, left, percent,
    by_embedder: [(embedder, chunks)]}``, counted on the ``recall_tenant_embedder`` index."""
    current = recall_version(tenant)
    rows = (
        RecallItem.objects.filter(tenant=tenant)
        .values_list("embedder")
        .annotate(chunks=Count("id"))
        .order_by("embedder")
    )
    by_embedder = [(embedder, chunks) for embedder, chunks in rows]
    total = sum(chunks for _embedder, chunks in by_embedder)
    done = sum(chunks for embedder, chunks in by_embedder if embedder == current)
    return {
        "current": current,
        "chunks": total,
        "done": done,
        "left": total - done,
        "percent": round(100 * done / total, 1) if total else 100.0,
        "by_embedder": by_embedder,
    }


def _answers(embedder) -> bool:
    """Whether the embedder gives vectors now (an endpoint that is down is not asked for
    a whole conversation's, and its rows keep their words until it is back)."""
    try:
        embedder.embed(["ping"])
    except EmbeddingUnavailable:
        return False
    return True


def _deleted(sender, *, tenant, session_id, timestamps, **_) -> None:
    """Messages were deleted: their chunks go now (seed 001's ``messages-deleted``)."""
    rows = RecallItem.objects.filter(tenant=tenant)
    if session_id is not None:
        rows = rows.filter(session_id=session_id)
        if timestamps is not None:
            rows = rows.filter(ts__in=list(timestamps))
    rows.delete()


def _changed(sender, *, tenant, session_id, **_) -> None:
    """An edit, a trim, another alternative: reconcile the conversation in a task."""
    if (
        session_id is None
        or not RecallItem.objects.filter(tenant=tenant, session_id=session_id).exists()
    ):
        return
    reconcile_recall = task_send.named("memory.reconcile_recall")
    transaction.on_commit(lambda: reconcile_recall.delay(str(tenant.pk), session_id))


messages_deleted.connect(_deleted, dispatch_uid="memory.recall.deleted")
history_changed.connect(_changed, dispatch_uid="memory.recall.changed")
