"""The bounded runtime's tables: the state a workflow keeps per conversation and key
(written only by compare-and-set on ``revision``), and the durable record of a runtime run
launched beside the Actor (``fast+slow``), whose Celery task reads its frozen snapshot from
here. Registered with the runtime's models (``roleplay.models`` imports them)."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel


class WorkflowState(TenantScopedModel):
    """A conversation's saved state under ``key``; ``revision`` 0 is "nothing saved yet"
    (no row), each write moves it by one."""

    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    key = models.CharField(max_length=100)
    state = models.JSONField(null=True)
    revision = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "key"], name="workflow_state_unique_key"
            )
        ]


class RuntimeRunStatus(models.TextChoices):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class RuntimeRun(TenantScopedModel):
    """One ``fast+slow`` runtime run: the snapshot the turn froze (input, history, the state
    and its revision, the node's config) and, once its task ran, the result."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    turn_id = models.UUIDField(null=True, blank=True)
    node_id = models.CharField(max_length=100, default="")
    state_key = models.CharField(max_length=100)
    status = models.CharField(
        max_length=16, choices=RuntimeRunStatus.choices, default=RuntimeRunStatus.QUEUED
    )
    snapshot = models.JSONField()
    result = models.JSONField(null=True, blank=True)
    # How many times its task was sent, and when last (None: never sent, e.g. the broker
    # was down); the sweep sends again what was lost, at most ``MAX_DELIVERIES`` times.
    deliveries = models.PositiveSmallIntegerField(default=0)
    # The turn was cancelled after the run was sent: its worker stops at the next check.
    cancel_requested = models.BooleanField(default=False)
    sent_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by each claim: the fencing token of the delivery that runs it (only that one
    # closes it).
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["conversation", "created_at"], name="runtime_run_conv"),
            models.Index(
                fields=["created_at"],
                condition=models.Q(status__in=["queued", "running"]),
                name="runtime_run_open",
            ),
        ]
