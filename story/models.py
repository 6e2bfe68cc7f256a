"""Story's tables (seed 002, Story): a conversation's story under one scenario is a numbered
series of revisions (every one kept) and a head row holding the newest number and envelope,
which a save compares and sets. Events and quarantine records are written with the revision
that produced them, in the same transaction, so the console and the API can list them.

The roleplay models are referred to by name only: Story stands alone.
"""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel


class StoryStatus(models.TextChoices):
    READY = "ready", "ready"
    WAITING = "waiting_for_acceptance", "waiting for acceptance"
    SETTLEMENT_PENDING = "settlement_pending", "settlement pending"


class StoryHead(TenantScopedModel):
    """The story in force for (conversation, scenario): its newest revision and envelope
    (``story.envelope``), and the character it was built for."""

    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey("roleplay.Scenario", on_delete=models.CASCADE, related_name="+")
    character = models.ForeignKey("roleplay.Character", on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=32, choices=StoryStatus.choices, default="ready")
    envelope = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "scenario"], name="story_head_unique")
        ]


class StoryRevision(TenantScopedModel):
    """One saved revision: the whole envelope, why it was written (``outcome``), the turn
    and message it belongs to, the source position it covers and what the Actor saw."""

    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey("roleplay.Scenario", on_delete=models.CASCADE, related_name="+")
    revision = models.PositiveIntegerField()
    status = models.CharField(max_length=32, choices=StoryStatus.choices)
    outcome = models.CharField(max_length=32)
    envelope = models.JSONField()
    source_position = models.PositiveIntegerField(default=0)
    turn_id = models.UUIDField(null=True, blank=True)
    message_id = models.UUIDField(null=True, blank=True)
    stage = models.JSONField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["revision"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "scenario", "revision"], name="story_revision_unique"
            )
        ]


class EventStatus(models.TextChoices):
    OPEN = "open", "open"
    SETTLED = "settled", "settled"
    UNKNOWN = "unknown", "unknown"
    QUARANTINED = "quarantined", "quarantined"
    DISCARDED = "discarded", "discarded"


class StoryEvent(TenantScopedModel):
    """One story event (``e<n>``): the evidence gathered for it, its settlement attempts and
    where it stands, as of ``revision``."""

    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey("roleplay.Scenario", on_delete=models.CASCADE, related_name="+")
    event_id = models.CharField(max_length=32)
    title = models.CharField(max_length=500, blank=True, default="")
    status = models.CharField(max_length=16, choices=EventStatus.choices, default="open")
    evidence = models.JSONField(default=list)
    attempts = models.JSONField(default=list)
    revision = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["conversation", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "scenario", "event_id"], name="story_event_unique"
            )
        ]


class QuarantineStatus(models.TextChoices):
    OPEN = "open", "open"
    RETRIED = "retried", "retried"
    DISCARDED = "discarded", "discarded"
    RESOLVED = "resolved", "resolved"


class StoryQuarantine(TenantScopedModel):
    """A ``story_event_quarantine`` record (≤ 64 KiB): an event no settlement could settle,
    taken out of the queue; an operator retries, discards or resolves it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey("roleplay.Scenario", on_delete=models.CASCADE, related_name="+")
    event_id = models.CharField(max_length=32)
    record = models.JSONField()
    status = models.CharField(max_length=16, choices=QuarantineStatus.choices, default="open")
    note = models.TextField(blank=True, default="", max_length=2000)
    decided_by = models.CharField(max_length=150, blank=True, default="")
    decided_at = models.DateTimeField(null=True, blank=True)
    revision = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at"]
