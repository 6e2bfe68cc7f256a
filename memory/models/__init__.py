"""The message store of seed 001 (messages by session, archived flag, metadata side store,
alternatives, edits) and the JSON memory documents of seed 000."""

from __future__ import annotations

import uuid

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from pgvector.django import VectorField

from console.scoping import TenantScopedModel
from memory.engine.entries import SUPERSEDING_KINDS


class MessageStatus(models.TextChoices):
    COMPLETE = "complete", "complete"
    STREAMING = "streaming", "streaming"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class Message(TenantScopedModel):
    """One chat message. ``ts`` is the store's timestamp (ms, unique per session)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    session_id = models.CharField(max_length=200)
    role = models.CharField(max_length=16)
    content = models.TextField(blank=True, default="")
    kind = models.CharField(max_length=32, null=True, blank=True)
    status = models.CharField(
        max_length=16, choices=MessageStatus.choices, default=MessageStatus.COMPLETE
    )
    metadata = models.JSONField(default=dict, blank=True)
    ts = models.BigIntegerField()
    archived = models.BooleanField(default=False)
    # Which of ``alternatives`` is ``content`` (0 when there are none).
    selected_alternative = models.PositiveIntegerField(default=0, db_default=0)
    edited = models.BooleanField(default=False, db_default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "session_id", "ts"], name="message_ts_unique")
        ]
        indexes = [
            models.Index(fields=["tenant", "session_id", "archived", "-ts"], name="message_hist"),
            models.Index(fields=["tenant", "archived", "-ts"], name="message_recent"),
        ]


class MemoryMetadata(TenantScopedModel):
    """Structured side store, unique per (namespace, key): summaries and the like."""

    namespace = models.CharField(max_length=200)
    key = models.CharField(max_length=200)
    data = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "namespace", "key"], name="memory_metadata_unique"
            )
        ]


class MessageAlternative(TenantScopedModel):
    """One of the alternative texts of a message (what SillyTavern calls swipes). The
    message's ``content`` is the selected alternative, so every reader of the history sees
    the reply the player chose; the others are kept."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="alternatives")
    index = models.PositiveIntegerField()
    content = models.TextField(blank=True, default="")
    status = models.CharField(
        max_length=16, choices=MessageStatus.choices, default=MessageStatus.COMPLETE
    )
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["message", "index"], name="alternative_unique_index")
        ]
        ordering = ["index"]


class MessageEdit(TenantScopedModel):
    """A change of a message's text by someone, kept so that capabilities can tell edited
    prose from generated prose: who, when, and the hashes of the text before and after."""

    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="edits")
    editor = models.CharField(max_length=200)
    previous_hash = models.CharField(max_length=64)
    new_hash = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)


class MemoryDocument(TenantScopedModel):
    """Seed 000's JSON memory: one object per conversation (``session_id``) and ``slot``,
    replaced whole by compare-and-set on ``revision`` (``memory.documents``). No row is
    revision 0 with no memory. Every revision is kept in :class:`MemoryDocumentRevision`."""

    session_id = models.CharField(max_length=200)
    slot = models.CharField(max_length=64)
    revision = models.PositiveBigIntegerField()
    data = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "session_id", "slot"], name="memory_document_slot_unique"
            )
        ]


class MemoryDocumentRevision(TenantScopedModel):
    """One revision of a document as written, and by which door (history and diffs)."""

    document = models.ForeignKey(MemoryDocument, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveBigIntegerField()
    data = models.JSONField()
    origin = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "revision"], name="memory_document_revision_unique"
            )
        ]
        ordering = ["-revision"]


class ProposalStatus(models.TextChoices):
    PENDING = "pending", "pending"
    APPLIED = "applied", "applied"
    DROPPED = "dropped", "dropped"
    CONFLICTED = "conflicted", "conflicted"


class MemoryProposal(TenantScopedModel):
    """An ``update_memory`` call held until its turn is accepted (the settings'
    ``document_commit: on_accept``): the whole new object (scrubbed) and the revision it was
    based on. When the player goes on from the reply it is applied by compare-and-set
    (``applied``, with the revision it became, or ``conflicted``); a reply regenerated,
    failed or rolled back drops it (``dropped``, with the reason). One per turn and slot: a
    second call in the same turn replaces it. ``message_id`` is the reply the turn writes
    (no foreign key: a chat turn stores its reply only when it ends)."""

    session_id = models.CharField(max_length=200)
    slot = models.CharField(max_length=64)
    turn_id = models.UUIDField()
    message_id = models.UUIDField()
    base_revision = models.PositiveBigIntegerField()
    data = models.JSONField()
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    reason = models.CharField(max_length=32, blank=True, default="")
    revision = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["turn_id", "slot"], name="memory_proposal_turn_slot")
        ]
        indexes = [
            models.Index(fields=["tenant", "session_id", "status"], name="memory_proposal_session")
        ]


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


class JobKind(models.TextChoices):
    LEARN = "learn", "learn"
    FORGET = "forget", "forget"


class JobStatus(models.TextChoices):
    QUEUED = "queued", "queued"
    RUNNING = "running", "running"
    DONE = "done", "done"
    FAILED = "failed", "failed"
    CANCELLED = "cancelled", "cancelled"


class MemoryJob(TenantScopedModel):
    """A ``learn`` or ``forget`` admitted for later delivery (seed 003's outbox,
    ``memory.jobs``): the acknowledgement is this row, committed; a Celery task delivers it.
    ``payload`` holds the scrubbed, validated write and its trusted scope (the tenant and
    player are the row's own), never a credential."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    kind = models.CharField(max_length=16, choices=JobKind.choices)
    status = models.CharField(max_length=16, choices=JobStatus.choices, default=JobStatus.QUEUED)
    payload = models.JSONField(default=dict)
    attempts = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True, default="")
    error = models.TextField(blank=True, default="")
    result = models.JSONField(default=dict)
    claim = models.UUIDField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "status", "created_at"], name="memory_job_status"),
            models.Index(fields=["tenant", "player", "created_at"], name="memory_job_player"),
        ]


class DiaryRun(TenantScopedModel):
    """One diary of a conversation (seed 000), written when it reached ``through_round``
    rounds; unique per conversation and round, so a diary is written once however often
    its trigger fires. ``entry`` is the episode written (null until done, or if deleted)."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    session_id = models.CharField(max_length=200)
    through_round = models.PositiveIntegerField()
    status = models.CharField(max_length=16, default="running")  # running, done, failed
    attempts = models.PositiveIntegerField(default=1)
    entry = models.ForeignKey(
        MemoryEntry, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    error_code = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "session_id", "through_round"], name="diary_run_unique"
            )
        ]


class ConsolidationCursor(TenantScopedModel):
    """Where background consolidation stands in one conversation (seed 004's local cursor):
    the player's messages after ``through_ts`` wait for it. It holds no text, so a clear
    keeps it (moved past what was cleared) and a replayed message is never taken twice.
    ``failures`` counts the refused or failed runs of the batch at the cursor."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    session_id = models.CharField(max_length=200)
    conversation_id = models.UUIDField()
    character_id = models.CharField(max_length=64, blank=True, default="")
    through_ts = models.BigIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    last_run_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "session_id"], name="consolidation_cursor_session"
            )
        ]


class ConsolidationRun(TenantScopedModel):
    """One consolidation of a batch (seed 004). At most one runs per owner (the partial
    unique constraint). ``epoch`` is the owner's when it started: a person's change since
    makes the result ``stale`` and it writes nothing. ``status``: running, done, rejected
    (a check refused the whole batch), stale, failed (the model; the batch is kept)."""

    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    session_id = models.CharField(max_length=200)
    conversation_id = models.UUIDField()
    status = models.CharField(max_length=16, default="running")
    epoch = models.PositiveBigIntegerField(default=0)
    from_ts = models.BigIntegerField(default=0)  # the cursor it started at
    message_ids = models.JSONField(default=list, blank=True)
    entry_ids = models.JSONField(default=list, blank=True)  # added or given evidence
    added = models.PositiveIntegerField(default=0)
    merged = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True, default="")
    detail = models.TextField(blank=True, default="")
    model_call_ids = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["player"],
                condition=models.Q(status="running"),
                name="consolidation_one_running_per_owner",
            )
        ]
        indexes = [
            models.Index(fields=["tenant", "created_at"], name="consolidation_run_recent"),
            models.Index(fields=["status"], name="consolidation_run_status"),
        ]


class MemoryClaim(TenantScopedModel):
    """One ``prepare`` of the prepare/commit memory service (seed 000's external runtime):
    the claim a ``commit`` names. No text: the memory answered is not kept, a commit adds
    the round to the conversation's transcript (unless it is there already) and keeps only
    its digest, so a repeat is recognised."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    player = models.ForeignKey("console.Player", on_delete=models.CASCADE, related_name="+")
    character_id = models.CharField(max_length=64)
    session_id = models.CharField(max_length=200)
    conversation_id = models.UUIDField()
    turn = models.PositiveIntegerField()
    state_through_round = models.PositiveIntegerField(default=0)
    request_id = models.CharField(max_length=200, blank=True, default="")
    scene_id = models.CharField(max_length=200, blank=True, default="")
    model_config_id = models.CharField(max_length=200, blank=True, default="")
    prompt_id = models.CharField(max_length=200, blank=True, default="")
    memory_chars = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, default="prepared")  # prepared, committed
    commit_digest = models.CharField(max_length=64, blank=True, default="")
    expires_at = models.DateTimeField()
    committed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "conversation_id", "created_at"], name="claim_recent")
        ]


class BeliefSupport(TenantScopedModel):
    """An entry that supports a belief (seed 003). Deleting the supporter demotes the
    belief to a candidate (``memory.entries.beliefs``), then this row goes with it."""

    belief = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="supports")
    supporter = models.ForeignKey(MemoryEntry, on_delete=models.CASCADE, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["belief", "supporter"], name="belief_support_unique")
        ]


class BeliefBuild(TenantScopedModel):
    """The last build of one player's beliefs: when, at which owner epoch, how it ended."""

    player = models.OneToOneField("console.Player", on_delete=models.CASCADE, related_name="+")
    status = models.CharField(max_length=16, default="running")  # running, done, failed, stale
    built_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(auto_now_add=True)
    added = models.PositiveIntegerField(default=0)
    error_code = models.CharField(max_length=64, blank=True, default="")
