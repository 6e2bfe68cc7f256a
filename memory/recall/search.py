"""A player's recall: the messages (and active memory entries) that best match a query.

Every search is filtered by tenant and player in the SQL itself (and by conversation,
character and time when asked), so another player's or tenant's text can never come back,
however well it matches. The vector side is an exact search over the owner's rows (the
embedded pgvector 0.6.2 has no iterative index scan, so an approximate index filtered
afterwards could return fewer than ``k``), or, for a player past a size asking without
filters, a scan of their own HNSW index (``owner_index``), which holds their rows only; the
lexical side ranks the owner's rows by BM25 with the player's own term statistics, gathered
by the rarer query terms. Both candidate lists are fused (``engine.recall.fuse``);
a message hit is widened with the messages just before and after it (seed 001's range
read) and hits that a wider one already covers are dropped.

Entries answer for a conversation (seed 004): an expired one is never found, and a
``session`` entry only by a recall made for its own conversation (``conversation_id``, or
``for_conversation`` when the messages are not filtered, as the pre-turn pack's).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta

from django.db import connection
from django.db.models import Q
from django.utils import timezone

from console import owners
from console.embedding.protocol import cosine
from console.lru import Lru
from console.search.lexical import Doc, LexicalIndex
from memory.engine import fusion, speakers
from memory.engine import recall as terms
from memory.models import (
    EntryScope,
    EntryStatus,
    MemoryEntry,
    Message,
    RecallItem,
)
from memory.recall import hops, lexical, owner_index
from memory.recall.embedder import EmbeddingUnavailable, recall_embedder
from memory.recall.lexical import lexical_messages  # noqa: F401  (the bench's baseline)

KINDS = ("message", "entry")
MAX_K = 50
POOL = lexical.POOL
NEIGHBOURS = 1  # messages before and after a hit
WIDEN_SPARE = 3  # hits widened per hit kept
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MERGE_K = fusion.MERGE_K
PART_WEIGHT = 0.3  # the sub-queries' rankings together, against the blend's
PART_FIRSTS = 1  # each sub-query's best hits kept within the first k


@dataclass(frozen=True)
class RecallQuery:
    query: str
    k: int = 10
    conversation_id: str | None = None
    character_id: str | None = None
    kinds: Collection[str] = KINDS
    since: datetime | None = None
    # The conversation the recall is made for, without filtering messages by it: its
    # session entries are found, other conversations' are not (``conversation_id`` does both).
    for_conversation: str | None = None


def recall(tenant, player, q: RecallQuery) -> dict:
    """``{items: [{kind, id, text, score, conversation_id, message_ids, created_at}],
    degraded}``, best first, at most ``q.k``. The question is searched without the
    speakers' own names (``engine.speakers``)."""
    names = speaker_names(tenant, player, q)
    q = replace(q, query=speakers.without(q.query, names))
    embedder = recall_embedder(tenant)
    side = _VectorSide(embedder).embed(q.query)
    rows = _message_rows(tenant, player, q, side) if "message" in q.kinds else []
    found = _entry_candidates(tenant, player, q, side) if "entry" in q.kinds else []
    # One cosine scale for both kinds, so an entry and a message compare fairly.
    span = terms.cosine_span([row[6] for row in rows] + [c for _e, _l, c in found])
    items = _messages(tenant, player, q, rows, side, span, names) + _entries(found, side, span)
    items.sort(key=lambda item: -item["score"])
    return {"items": items[: q.k], "degraded": side.vector is None}


def speaker_names(tenant, player, q: RecallQuery) -> list[str]:
    """The names the player's talk goes by (the runtime's answer; the player's own name
    when no runtime is registered)."""
    try:
        return owners.owners().speaker_names(tenant, player, q.character_id)
    except LookupError:
        return [player.display_name]


class _VectorSide:
    """The query's vector, or None when the embedder failed (words only, ``degraded``)."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.version = embedder.embedding_version
        self.weight = terms.vector_weight(self.version)
        self.vector: list[float] | None = None

    def embed(self, query: str) -> _VectorSide:
        self.weight = terms.vector_weight(self.version, query)
        try:
            self.vector = self.embedder.embed_query([query])[0]
        except EmbeddingUnavailable:
            self.vector = None
        return self


def _message_rows(tenant, player, q: RecallQuery, side: _VectorSide) -> list[tuple]:
    """The owner's candidate chunks: ``(message_id, conversation_id, session_id, ts,
    created_at in µs since the epoch, lexical, cosine or None, text)``: a time is made only
    for the hits kept, which saves parsing hundreds of them."""
    table = RecallItem._meta.db_table
    where, params = lexical.filters(q)
    owner = f"r.tenant_id = %(tenant)s AND r.player_id = %(player)s{where}"
    params.update(tenant=tenant.pk, player=player.pk, pool=POOL, embedder=side.version)
    lex_sql = lexical.lexical_sql(tenant, player, q.query, owner, params)
    lex_sql = lex_sql or "SELECT NULL::bigint AS id, 0.0::float8 AS lexical WHERE FALSE"
    # Rows of another embedder (being rebuilt, or left without vectors while an endpoint
    # failed) are compared by their words only: their vectors may not even be as long.
    indexed = None
    if side.vector is None:
        vec, cosine_sql = "SELECT NULL::bigint AS id WHERE FALSE", "NULL::float8"
    else:
        params["vec"] = terms.vector_literal(side.vector)
        vec = f"""SELECT r.id FROM {table} r WHERE {owner} AND r.embedder = %(embedder)s
            ORDER BY r.embedding <=> %(vec)s::vector LIMIT %(pool)s"""
        if not where:
            indexed = owner_index.dimensions(tenant, player.pk, side.version, cached=True)
            indexed = indexed if indexed == len(side.vector) else None
        if indexed is not None:
            # The owner's own HNSW index (its predicate spelled out, so the planner can
            # prove it; the values are bound into the text).
            vec = f"""SELECT r.id FROM {table} r WHERE {owner} AND r.embedder = %(embedder)s
                AND vector_dims(r.embedding) = {indexed}
                ORDER BY (r.embedding::vector({indexed})) <=> %(vec)s::vector({indexed})
                LIMIT %(pool)s"""
        cosine_sql = (
            "CASE WHEN r.embedder = %(embedder)s THEN 1 - (r.embedding <=> %(vec)s::vector) END"
        )
    sql = f"""
        WITH lex AS ({lex_sql}),
        vec AS ({vec})
        SELECT r.message_id, r.conversation_id, r.session_id, r.ts,
               (extract(epoch FROM r.created_at) * 1000000)::bigint,
               COALESCE(lex.lexical, 0), {cosine_sql}, r.text
        FROM {table} r
        JOIN (SELECT id FROM lex UNION SELECT id FROM vec) c ON c.id = r.id
        LEFT JOIN lex ON lex.id = r.id
    """
    with connection.cursor() as cursor:
        if indexed is None:
            cursor.execute(sql, params)
        else:
            # One round trip: the setting holds for the statement's implicit transaction
            # only (client-side binding sends both as one simple query).
            cursor.execute(f"SET LOCAL hnsw.ef_search = {owner_index.EF_SEARCH};{sql}", params)
            cursor.cursor.nextset()
        return cursor.fetchall()


def _messages(tenant, player, q: RecallQuery, rows: list[tuple], side: _VectorSide, span, names):
    """The message hits, best first, widened with their neighbours: the candidates by their
    blended score (time-boosted, ``hops.timed``), merged by reciprocal rank with each
    sub-query's own lexical ranking (``hops.parts``, ``engine.fusion.merge``), each
    sub-query's best hit and the best new hit of each name the first hits bring in
    (``hops.bridges``) kept within the first k."""
    if not rows:
        return []
    blends = terms.fuse([(row[5], row[6]) for row in rows], side.weight, span)
    by_message: dict = {}
    for blended, row in zip(blends, rows, strict=True):
        message_id = row[0]
        if message_id not in by_message or blended > by_message[message_id][0]:
            by_message[message_id] = (blended, blended, *row[1:5], row[7])
    parts, people = hops.parts(tenant, player, q, by_message)
    hops.timed(tenant, player, q, by_message)
    ordered = sorted(by_message.items(), key=lambda pair: -pair[1][0])
    rankings = [*parts, *people]
    merged = fusion.merge([(m, row[0]) for m, row in ordered], rankings, PART_WEIGHT, MERGE_K)
    merged = fusion.keep_firsts(merged, parts, q.k, PART_FIRSTS)
    merged = fusion.keep_firsts(merged, people, q.k, hops.PERSON_FIRSTS)
    bridged = hops.bridges(tenant, player, q, merged, by_message, names)
    merged = fusion.keep_firsts(merged, bridged, q.k, PART_FIRSTS)
    return _widen(tenant, _distinct(merged, by_message, q.k * WIDEN_SPARE), q.k)


def _distinct(merged: list[tuple], by_message: dict, count: int) -> list[tuple]:
    """The first ``count`` of ``merged`` as ``_widen`` takes them, the same words said again
    ("Good night!") one hit, the best placed (hits inside a better hit's range are dropped
    later, so more are widened than are kept). Shown scores keep the blend's scale (an
    entry compares with them), in the merged order."""
    if not merged:
        return []
    top, best = by_message[merged[0][0]][1], merged[0][1] if merged[0][1] > 0 else 1.0
    ranked, said = [], set()
    for message_id, value in merged:
        row = by_message[message_id]
        text = " ".join(row[6].casefold().split())
        if text in said:
            continue
        said.add(text)
        ranked.append((message_id, (top * value / best, *row[2:6])))
        if len(ranked) == count:
            break
    return ranked


def _widen(tenant, ranked, k: int) -> list[dict]:
    """The best ``k`` hits, each with its neighbours; a hit inside a better hit's range is
    dropped (its text is there already)."""
    ranges = _around(tenant, [(row[2], row[3]) for _id, row in ranked])
    covered: set = set()
    items: list[dict] = []
    for (message_id, (score, conversation_id, _session, _ts, created_at)), around in zip(
        ranked, ranges, strict=True
    ):
        if len(items) == k:
            break
        if message_id in covered:
            continue
        covered.update(pk for pk, _role, _content in around)
        items.append(
            {
                "kind": "message",
                "id": str(message_id),
                "text": "\n".join(f"{role}: {content}" for _pk, role, content in around),
                "score": round(score, 4),
                "conversation_id": str(conversation_id),
                "message_ids": [str(pk) for pk, _role, _content in around],
                "created_at": (EPOCH + timedelta(microseconds=created_at)).isoformat(),
            }
        )
    return items


def _around(tenant, hits: list[tuple[str, int]]) -> list[list[tuple]]:
    """For each (session, ts): the message there with :data:`NEIGHBOURS` before and after,
    in one statement."""
    if not hits:
        return []
    table = Message._meta.db_table
    visible = f"FROM {table} m WHERE m.tenant_id = %(tenant)s AND m.session_id = h.session_id "
    visible += "AND m.role IN ('user', 'assistant')"
    sql = f"""
        SELECT h.ord, w.id, w.role, w.content
        FROM unnest(%(sessions)s::text[], %(ts)s::bigint[])
            WITH ORDINALITY AS h(session_id, ts, ord)
        CROSS JOIN LATERAL (
            (SELECT m.id, m.role, m.content, m.ts {visible} AND m.ts < h.ts
             ORDER BY m.ts DESC LIMIT %(before)s)
            UNION ALL
            (SELECT m.id, m.role, m.content, m.ts {visible} AND m.ts >= h.ts
             ORDER BY m.ts LIMIT %(after)s)
        ) w
        ORDER BY h.ord, w.ts
    """
    params = {
        "tenant": tenant.pk,
        "sessions": [session for session, _ts in hits],
        "ts": [ts for _session, ts in hits],
        "before": NEIGHBOURS,
        "after": NEIGHBOURS + 1,
    }
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    out: list[list[tuple]] = [[] for _ in hits]
    for ordinal, pk, role, content in rows:
        out[ordinal - 1].append((pk, role, content))
    return out


def _entry_candidates(tenant, player, q: RecallQuery, side: _VectorSide) -> list[tuple]:
    """The player's active memory entries (they are few) that answer here, as ``(entry,
    lexical, cosine or None)``."""
    rows = _reachable(
        MemoryEntry.objects.filter(tenant=tenant, player=player, status=EntryStatus.ACTIVE), q
    )
    if q.since:
        rows = rows.filter(created_at__gte=q.since)
    entries = list(rows.only("id", "content", "session_id", "created_at"))
    if not entries:
        return []
    index = LexicalIndex.build([Doc(str(e.pk), "", e.content) for e in entries])
    words = dict(index.rank(q.query, limit=len(entries)))
    cosines: list = [None] * len(entries)
    if side.vector is not None:
        try:
            vectors = entry_vectors([e.content for e in entries], side.embedder)
            cosines = [cosine(vec, side.vector) for vec in vectors]
        except EmbeddingUnavailable:
            pass
    return [(e, words.get(str(e.pk), 0.0), c) for e, c in zip(entries, cosines, strict=True)]


def _reachable(rows, q: RecallQuery):
    """Of ``rows`` (entries), those a recall for ``q``'s conversation and character may
    find: not expired; a persona's only for its character; a session's only in its
    conversation, for its character (or any, shared in the session). A recall naming no
    conversation (a search over everything the player said) finds every conversation's."""
    rows = rows.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=timezone.now()))
    if q.character_id:
        shared_here = Q(scope=EntryScope.SESSION, share_in_session=True)
        rows = rows.filter(Q(character_id__in=("", q.character_id)) | shared_here)
    conversation = q.conversation_id or q.for_conversation
    if conversation:
        rows = rows.filter(~Q(scope=EntryScope.SESSION) | Q(session_id=str(conversation)))
    return rows


def _entries(found: list[tuple], side: _VectorSide, span) -> list[dict]:
    scores = terms.fuse([(lex, c) for _e, lex, c in found], side.weight, span)
    return [_entry_item(entry, score) for score, (entry, _l, _c) in zip(scores, found, strict=True)]


def _entry_item(entry: MemoryEntry, score: float) -> dict:
    return {
        "kind": "entry",
        "id": str(entry.pk),
        "text": entry.content,
        "score": round(score, 4),
        "conversation_id": None,
        "message_ids": [],
        "created_at": entry.created_at.isoformat(),
    }


def fetch(tenant, player, ids: Collection[str]) -> list[dict]:
    """The player's indexed messages and active entries of ``ids`` (what recall names), in
    the order asked; unknown, foreign, expired or inactive ids are left out."""
    wanted = list(dict.fromkeys(str(i) for i in ids))
    found = {item["id"]: item for item in _fetch_messages(tenant, player, wanted)}
    entries = MemoryEntry.objects.filter(
        tenant=tenant, player=player, status=EntryStatus.ACTIVE, pk__in=wanted
    )
    for entry in _reachable(entries, RecallQuery(query="")).only("id", "content", "created_at"):
        found[str(entry.pk)] = _entry_item(entry, 1.0)
    return [found[i] for i in wanted if i in found]


def _fetch_messages(tenant, player, ids: list[str]) -> list[dict]:
    found = RecallItem.objects.filter(
        tenant=tenant, player=player, message_id__in=ids, chunk=0
    ).values_list("message_id", "conversation_id", "created_at")
    messages = {
        m.pk: m for m in Message.objects.filter(tenant=tenant, pk__in=[row[0] for row in found])
    }
    return [
        {
            "kind": "message",
            "id": str(message_id),
            "text": f"{messages[message_id].role}: {messages[message_id].content}",
            "score": 1.0,
            "conversation_id": str(conversation_id),
            "message_ids": [str(message_id)],
            "created_at": created_at.isoformat(),
        }
        for message_id, conversation_id, created_at in found
        if message_id in messages
    ]


def entry_vectors(texts: list[str], embedder) -> list[list[float]]:
    """The entries' vectors, each computed once per process and embedder (an entry's text
    rarely changes, and a sentence model costs milliseconds a text); raises
    ``EmbeddingUnavailable`` when an endpoint fails."""
    version = embedder.embedding_version
    found = {t: _ENTRY_VECTORS.get((version, t)) for t in dict.fromkeys(texts)}
    missing = [t for t, vec in found.items() if vec is None]
    for text, vec in zip(missing, embedder.embed(missing) if missing else [], strict=True):
        _ENTRY_VECTORS.put((version, text), vec)
        found[text] = vec
    return [found[t] for t in texts]


_ENTRY_VECTORS = Lru(4096)
