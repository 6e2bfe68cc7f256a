"""Worldbook data: books with immutable revisions, editors' drafts, bindings, vector indexes,
timed state."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from pgvector.django import HnswIndex, VectorField

from console.scoping import TenantScopedModel

EMBEDDING_DIMENSIONS = 384


class Book(TenantScopedModel):
    """A lorebook. Its content lives in immutable :class:`BookRevision` rows; ``head_revision``
    moves forward by compare-and-set in the same transaction that writes the new revision."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=300)
    description = models.TextField(blank=True, default="")
    head_revision = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.name


class BookRevision(TenantScopedModel):
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveIntegerField()
    content = models.JSONField()  # the normalized native book (BookIn.model_dump())
    content_hash = models.CharField(max_length=64)
    entry_count = models.PositiveIntegerField(default=0)
    import_report = models.JSONField(default=dict, blank=True)
    # Per entry id: cl100k tokens of its content and the revision it last changed in. Filled
    # by a draft publish, or on the editor's first read (see worldbook/editor/stats.py).
    entry_stats = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["book", "revision"], name="book_revision_unique")
        ]


class FileImport(TenantScopedModel):
    """A raw file imported once: the same bytes again answer the original revision 1."""

    sha256 = models.CharField(max_length=64)
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField(default=1)
    filename = models.CharField(max_length=300, blank=True, default="")
    format = models.CharField(max_length=32)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "sha256"], name="file_import_unique")
        ]


class BindingScope(models.TextChoices):
    """Whose books these are (``worldbook.engine.scopes``): a prompt's (our character id, or
    an integrator's string), the whole tenant's, a scenario's, a chat's or a persona's."""

    PROMPT = "prompt", "character"
    GLOBAL = "global", "global"
    SCENARIO = "scenario", "scenario"
    CHAT = "chat", "chat"
    PERSONA = "persona", "persona"


class PromptBinding(TenantScopedModel):
    """Books a scope reads each turn: ``prompt_id`` names the prompt (character), scenario,
    conversation or persona of ``scope``; it is empty for the tenant's global books."""

    scope = models.CharField(
        max_length=16, choices=BindingScope.choices, default=BindingScope.PROMPT
    )
    prompt_id = models.CharField(max_length=200, blank=True)
    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField(null=True, blank=True)  # null follows the head
    position = models.IntegerField(default=0)
    enabled = models.BooleanField(default=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "scope", "prompt_id", "book"], name="scoped_binding_unique"
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "scope", "prompt_id"], name="scoped_binding_lookup")
        ]


class ScopeSettings(TenantScopedModel):
    """A tenant's order between lorebook scopes: SillyTavern's
    ``world_info_character_strategy`` (``engine.scopes.STRATEGIES``); a scenario's
    ``worldbook.characterStrategy`` overrides it."""

    character_strategy = models.CharField(max_length=20, default="character_first")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant"], name="scope_settings_unique")]


class IndexStatus(models.TextChoices):
    PENDING = "pending", "pending"
    BUILDING = "building", "building"
    READY = "ready", "ready"
    FAILED = "failed", "failed"


class BookIndex(TenantScopedModel):
    """The vector index of one exact revision for one embedding version."""

    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="indexes")
    revision = models.PositiveIntegerField()
    embedding_version = models.CharField(max_length=100)
    status = models.CharField(max_length=16, choices=IndexStatus.choices)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True, default="")
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["book", "revision", "embedding_version"], name="book_index_unique"
            )
        ]


class IndexChunk(models.Model):
    index = models.ForeignKey(BookIndex, on_delete=models.CASCADE, related_name="chunks")
    entry_id = models.CharField(max_length=150)
    chunk_no = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    text = models.TextField()
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS)

    class Meta:
        indexes = [
            HnswIndex(
                name="index_chunk_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            )
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["index", "entry_id", "chunk_no"], name="index_chunk_unique"
            )
        ]


class PreparedRevision(TenantScopedModel):
    """A book's newest published revision prepared for selection (``engine.prepared``; no
    block's tokens counted yet), written by the request that published it. A turn on any
    machine whose worker has not written the revision's file yet loads this instead of
    preparing the revision from its content (``worldbook.compiled``). One per book: an
    older revision (a pinned binding) is prepared from its content or read from its file."""

    book = models.OneToOneField(Book, on_delete=models.CASCADE, primary_key=True, related_name="+")
    revision = models.PositiveIntegerField()
    content_hash = models.CharField(max_length=64)
    format = models.CharField(max_length=100)  # engine.prepared.FORMAT it was written in
    blob = models.BinaryField()
    updated_at = models.DateTimeField(auto_now=True)


class TimedEffectState(TenantScopedModel):
    """Per-conversation sticky/cooldown/delay state of worldbook entries (CAS by version)."""

    conversation_id = models.CharField(max_length=200)
    state = models.JSONField(default=dict)
    version = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "conversation_id"], name="timed_state_unique")
        ]


class BookDraft(TenantScopedModel):
    """One editor's unpublished changes to a book, as entry-level changes over
    ``base_revision`` (see :class:`DraftEntry`).

    A draft belongs to one user, so two editors never overwrite each other's work in
    progress; it reaches readers only through a publish, which is the usual compare-and-set
    on the head (a stale ``base_revision`` is a 409 and the draft stays). ``version`` moves on
    every change, so a process can cache the merged view of a draft by it.
    """

    book = models.ForeignKey(Book, on_delete=models.CASCADE, related_name="drafts")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    base_revision = models.PositiveIntegerField()
    book_fields = models.JSONField(default=dict, blank=True)  # changed name/description/metadata
    version = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["book", "user"], name="book_draft_unique")]


class DraftEntry(models.Model):
    """A changed entry of a draft. ``key`` is the id the entry has in the base revision (or a
    fresh ``new:`` key for an entry the draft added), so renaming an entry's id is an edit like
    any other; ``entry`` is the whole native entry, or null for a deleted one."""

    draft = models.ForeignKey(BookDraft, on_delete=models.CASCADE, related_name="changes")
    key = models.CharField(max_length=160)
    entry = models.JSONField(null=True, blank=True)
    seq = models.PositiveIntegerField(default=0)  # the order of added entries
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["draft", "key"], name="draft_entry_unique")]
