"""Background work on memory: durable learn/forget jobs, diary and consolidation runs
with their cursors, claims, and the beliefs built from entries."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel
from memory.models.entries import MemoryEntry


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
