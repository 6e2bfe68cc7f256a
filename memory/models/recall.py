"""The recall index: an item per entry with its lexemes and vector, the terms, and each
owner's index state."""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import VectorField

from console.scoping import TenantScopedModel


class RecallItem(TenantScopedModel):
    """One chunk of one stored message in the recall index (``memory.recall``), with the
    conversation's owner copied in so every search filters by tenant and player in the query
    itself. ``lexemes`` is the worldbook engine's terms with positions; ``embedding`` the
    vector of ``embedder``; ``content_hash`` tells a changed message from an unchanged one."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    character_id = models.CharField(max_length=64)
    conversation_id = models.UUIDField()
    session_id = models.CharField(max_length=200)
    message_id = models.UUIDField()
    chunk = models.PositiveIntegerField(default=0)
    role = models.CharField(max_length=16)
    ts = models.BigIntegerField()
    text = models.TextField()
    lexemes = SearchVectorField()
    # Any length: a tenant's embeddings endpoint decides it. Search compares only rows of
    # the current ``embedder`` (exact search over the owner's rows, so no index needs a
    # fixed length); null while the endpoint failed (``memory.recall.indexing``).
    embedding = VectorField(null=True)
    embedder = models.CharField(max_length=100)
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["message_id", "chunk"], name="recall_item_unique")
        ]
        indexes = [
            models.Index(fields=["tenant", "player", "ts"], name="recall_owner_ts"),
            models.Index(fields=["session_id", "ts"], name="recall_session_ts"),
            # The minute's sweep lists the (tenant, embedder) pairs in use by skipping
            # through this index (``indexing.embedders_in_use``), never reading the table.
            models.Index(fields=["tenant", "embedder"], name="recall_tenant_embedder"),
            GinIndex(fields=["lexemes"], name="recall_lexemes"),
        ]


class RecallTerm(TenantScopedModel):
    """How many of one player's recall rows hold ``term`` (``df``), what BM25 weighs a query
    term by; the row with the empty term counts the rows themselves and sums their lengths
    (distinct terms per row). Kept by statement triggers on :class:`RecallItem` (migration
    ``0009_recall_terms``), so every insert and delete counts, a cascade's included."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    term = models.TextField()
    df = models.BigIntegerField(default=0)
    length_sum = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "player", "term"], name="recall_term_unique")
        ]


class RecallOwnerIndex(TenantScopedModel):
    """A built approximate (HNSW) index over one player's recall rows of one embedder: a
    partial index of :class:`RecallItem` named ``name``, made once the player's rows pass a
    size (``memory.recall.owner_index``). A row here means the index is valid and can serve
    that player's unfiltered recall; the index goes when its row does."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    embedder = models.CharField(max_length=100)
    dimensions = models.PositiveIntegerField()
    name = models.CharField(max_length=63, unique=True)
    rows = models.PositiveIntegerField()
    build_ms = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["player", "embedder"], name="recall_owner_index_unique")
        ]
