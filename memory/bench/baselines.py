"""The benchmark's baselines, beside the product's hybrid recall (``memory.recall.search``).

- lexical only: the product's lexical side alone (BM25 over the owner's rows);
- vector only: the owner's rows by cosine distance to the query's vector (the same
  embedder), exact, as the product's vector side;
- recency: the conversation's last :data:`RECENT` messages, what a plain history window
  would hold.

Both searches read ``RecallItem`` directly with the product's owner filter (tenant and
player) and nothing of ``memory.recall`` changes; a message is ranked by its best chunk.
The ranked message ids are widened like the product's hits (``metrics.widen``). Ties (the
same filler text said twice) go to the newer message, so a run's figures repeat.
"""

from __future__ import annotations

from collections.abc import Sequence

from django.db import connection

from memory.bench.ingest import Owner
from memory.engine import recall as terms
from memory.models import RecallItem
from memory.recall.embedder import recall_embedder
from memory.recall.search import lexical_messages

POOL = 200  # candidates, as the product takes from each side
RECENT = 50


def lexical(owner: Owner, query: str, *, pool: int = POOL) -> list[str]:
    """Message ids best first by the product's lexical side alone (BM25 over the owner's
    rows, ``memory.recall.search.lexical_messages``)."""
    return lexical_messages(owner.tenant, owner.player, query, pool=pool)


def embed(query: str) -> list[float]:
    """The query's vector, by recall's own embedder (the deployment's)."""
    return recall_embedder().embed_query([query])[0]


def vector(
    owner: Owner, query: str, *, pool: int = POOL, embedding: list[float] | None = None
) -> list[str]:
    """Message ids best first by cosine similarity to the query's vector (``embedding``
    when already made)."""
    literal = terms.vector_literal(embedding if embedding is not None else embed(query))
    sql = f"""
        SELECT message_id, MIN(distance) AS distance, MAX(ts) AS ts FROM (
            SELECT r.message_id, r.ts, r.embedding <=> %(vec)s::vector AS distance
            FROM {RecallItem._meta.db_table} r
            WHERE r.tenant_id = %(tenant)s AND r.player_id = %(player)s
            ORDER BY distance, r.ts DESC LIMIT %(pool)s
        ) best GROUP BY message_id ORDER BY distance, ts DESC
    """
    params = {"vec": literal, "tenant": owner.tenant.pk, "player": owner.player.pk, "pool": pool}
    return _ids(sql, params)


def recency(order: Sequence[str], count: int = RECENT) -> list[str]:
    """The last ``count`` message ids of a conversation (oldest first)."""
    return list(order[-count:]) if count else []


def _ids(sql: str, params: dict) -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [str(row[0]) for row in cursor.fetchall()]
