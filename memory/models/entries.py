"""Memory entries (seed 003): an entry with its kind, scope, status and origin, the
evidence it cites, its owner's state, handoffs between characters, and the settings."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel
from memory.engine.entries import SUPERSEDING_KINDS
from memory.models.messages import Message


class EntryKind(models.TextChoices):
    PREFERENCE = "preference", "preference"
    AGREEMENT = "agreement", "agreement"
    CONTEXT = "context", "context"
    EPISODE = "episode", "episode"
    FACT = "fact", "fact"
    BELIEF = "belief", "belief"


class EntryScope(models.TextChoices):
    SHARED = "shared", "shared"
    PERSONA = "persona", "persona"
    SESSION = "session", "session"


class EntryStatus(models.TextChoices):
    CANDIDATE = "candidate", "candidate"
    ACTIVE = "active", "active"
    SUPERSEDED = "superseded", "superseded"
    REJECTED = "rejected", "rejected"
    EXPIRED = "expired", "expired"
    FORGOTTEN = "forgotten", "forgotten"


class EntryOrigin(models.TextChoices):
    RULE = "rule", "rule"
    CONSOLIDATION = "consolidation", "consolidation"
    DIARY = "diary", "diary"
    MANUAL = "manual", "manual"
    TOOL = "tool", "tool"
    IMPORT = "import", "import"
    INFERENCE = "inference", "inference"  # a belief built from facts and episodes
    MIGRATION = "migration", "migration"


class MemoryEntry(TenantScopedModel):
    """One remembered thing about a player (seeds 003 and 004): a preference, an agreement
    with a character, context of a conversation, an episode, a fact or a belief.

    ``player`` is the owner (none for a character's canon written by an operator);
    ``character_id`` the persona it belongs to and ``session_id`` the conversation, "" when
    none (memory stands alone, so they are ids, not foreign keys). Writes go through
    ``memory.entries.services`` (scrubbed, capped, compare-and-set on ``version``). Of the
    active preferences and agreements of one owner, scope, character, conversation and
    category there is one: a newer one supersedes the older (the unique index makes that
    race-free)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey(
        "console.Player", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    character_id = models.CharField(max_length=64, blank=True, default="")
    session_id = models.CharField(max_length=200, blank=True, default="")
    kind = models.CharField(max_length=16, choices=EntryKind.choices)
    scope = models.CharField(max_length=16, choices=EntryScope.choices)
    share_in_session = models.BooleanField(default=False)
    category_key = models.CharField(max_length=100, blank=True, default="")
    content = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    status = models.CharField(max_length=16, choices=EntryStatus.choices)
    pinned = models.BooleanField(default=False)
    origin = models.CharField(max_length=16, choices=EntryOrigin.choices)
    source_missing = models.BooleanField(default=False)
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    version = models.PositiveIntegerField(default=1)
    expires_at = models.DateTimeField(null=True, blank=True)
    content_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "player", "scope", "character_id", "session_id", "category_key"],
                condition=models.Q(status="active", kind__in=list(SUPERSEDING_KINDS))
                & ~models.Q(category_key=""),
                nulls_distinct=False,
                name="memory_entry_one_active_per_category",
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "player", "status"], name="memory_entry_owner"),
        ]


class MemoryEvidence(TenantScopedModel):
    """Where an entry came from: a contiguous span of one stored message (character offsets
    ``start``..``end``) and its scrubbed quote. The message is a foreign key, so a rolled
    back turn or a cleared conversation takes the evidence with it; the entry then shows
    ``source_missing`` only if it has no evidence left."""

    entry = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="evidence")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    start = models.PositiveIntegerField()
    end = models.PositiveIntegerField()
    quote = models.TextField()
    role = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=models.Q(end__gt=models.F("start")), name="memory_evidence_span"
            )
        ]


class MemoryOwnerState(TenantScopedModel):
    """Two counters per owner (a player; none for a character's canon): ``revision`` moves
    on any change of the owner's memory (a cache key for what a turn reads), ``epoch`` on a
    change by a person or a forgetting (manual edit, delete, clear): background work that
    started at an older epoch must not write its result back."""

    player = models.OneToOneField(
        "console.Player", on_delete=models.CASCADE, related_name="+", null=True
    )
    revision = models.PositiveBigIntegerField(default=0)
    epoch = models.PositiveBigIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)


class HandoffStatus(models.TextChoices):
    PENDING = "pending", "pending"
    ACCEPTED = "accepted", "accepted"
    CLOSED = "closed", "closed"


class MemoryHandoff(TenantScopedModel):
    """Seed 004's handoff: what one persona (character) passes to another in a conversation,
    as the owner wrote it (scrubbed), with references to shareable entries. The receiving
    character reads it in its prompt; it never copies it into its own memory."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    from_character_id = models.CharField(max_length=64)
    to_character_id = models.CharField(max_length=64)
    session_id = models.CharField(max_length=200)
    summary = models.TextField(blank=True, default="")
    status = models.CharField(
        max_length=16, choices=HandoffStatus.choices, default=HandoffStatus.PENDING
    )
    version = models.PositiveIntegerField(default=1)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["tenant", "player", "status"], name="memory_handoff_owner")]


class MemoryHandoffItem(TenantScopedModel):
    """An entry a handoff references; deleting the entry revokes the reference."""

    handoff = models.ForeignKey(MemoryHandoff, on_delete=models.CASCADE, related_name="items")
    entry = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["handoff", "entry"], name="memory_handoff_item_unique")
        ]


class MemorySettings(TenantScopedModel):
    """A tenant's memory settings (``character_id`` "") or one character's, which override
    the tenant's (``memory.engine.config``): only the fields set are stored."""

    character_id = models.CharField(max_length=64, blank=True, default="")
    data = models.JSONField(default=dict)
    version = models.PositiveIntegerField(default=1)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "character_id"], name="memory_settings_unique"
            )
        ]
