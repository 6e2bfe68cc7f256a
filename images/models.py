"""Image data: how to reach an image backend, the asset tool's jobs, and chat image slots.

A config names the environment variable that holds its key, never the key. A job is one
asset-tool request, written (``submitted``) before the backend is called and never sent
again: billing is not idempotent. A slot is one picture of a stored assistant message,
keyed by opaque ids (this app never imports the runtime that owns conversations), written
``pending`` before the backend is called and always reaching a final state.
"""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from console.scoping import TenantScopedModel

MAX_SIDE = 8_192


class ImageProvider(models.TextChoices):
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible (/images/generations)"
    AUTOMATIC1111 = "automatic1111", "Automatic1111 / Forge (/sdapi/v1/txt2img)"


class ModerationMode(models.TextChoices):
    BACKEND = "backend", "The backend's own evidence"
    CALL = "call", "A moderation call (/moderations)"
    NONE = "none", "No moderation (images marked unmoderated)"


def default_allowed() -> list[str]:
    return ["SFW"]


class ImageConfig(TenantScopedModel):
    """How to reach an image backend, its defaults, and how its images are moderated."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    name = models.CharField(max_length=100)
    provider = models.CharField(max_length=32, choices=ImageProvider.choices)
    base_url = models.CharField(max_length=500)
    api_key_env = models.CharField(max_length=100, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    default_width = models.PositiveIntegerField(
        default=1024, validators=[MinValueValidator(64), MaxValueValidator(MAX_SIDE)]
    )
    default_height = models.PositiveIntegerField(
        default=1024, validators=[MinValueValidator(64), MaxValueValidator(MAX_SIDE)]
    )
    default_count = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(8)]
    )
    moderation_mode = models.CharField(
        max_length=16, choices=ModerationMode.choices, default=ModerationMode.BACKEND
    )
    # Where the moderation call goes (blank: the config's base URL) and with which model.
    moderation_base_url = models.CharField(max_length=500, blank=True, default="")
    moderation_model = models.CharField(max_length=200, blank=True, default="")
    allowed_classifications = models.JSONField(default=default_allowed)
    timeout_seconds = models.PositiveIntegerField(
        default=120, validators=[MinValueValidator(1), MaxValueValidator(600)]
    )
    slot_deadline_seconds = models.PositiveIntegerField(
        default=600, validators=[MinValueValidator(10), MaxValueValidator(86_400)]
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "name"], name="imageconfig_unique_name")
        ]

    def __str__(self) -> str:
        return self.name


class JobStatus(models.TextChoices):
    SUBMITTED = "submitted", "submitted"  # sent (or about to be): never sent again
    COMPLETED = "completed", "completed"  # an answer with complete evidence
    UNKNOWN = "unknown", "unknown"  # timed out, or the evidence is incomplete
    FAILED = "failed", "failed"  # the backend refused it (nothing was made)


class ImageJob(TenantScopedModel):
    """One request of the asset tool: its body, its outcome, the files it stored."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    config = models.ForeignKey(ImageConfig, null=True, on_delete=models.SET_NULL, related_name="+")
    request = models.JSONField(default=dict)
    status = models.CharField(max_length=16, choices=JobStatus.choices)
    code = models.CharField(max_length=64, blank=True, default="")
    result = models.JSONField(default=dict, blank=True)
    files = models.JSONField(default=list, blank=True)  # storage names of the kept images
    idempotency_key = models.CharField(max_length=200, null=True, blank=True)
    request_hash = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "idempotency_key"],
                condition=Q(idempotency_key__isnull=False),
                name="imagejob_unique_key",
            )
        ]


class SlotStatus(models.TextChoices):
    PENDING = "pending", "drawing"
    READY = "ready", "ready"
    BLOCKED = "blocked", "blocked"
    FAILED = "failed", "failed"


FINAL_SLOT_STATUSES = (SlotStatus.READY, SlotStatus.BLOCKED, SlotStatus.FAILED)


class ImageSlot(TenantScopedModel):
    """One picture of an assistant message: ``pending`` until its Celery task (or the sweep)
    moves it, once, to ``ready``, ``blocked`` or ``failed`` (with a code)."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation_id = models.UUIDField(db_index=True)
    # The conversation's history key, when given: a slot whose message leaves the history
    # is deleted with its files (``console.history.history_changed``).
    session_id = models.CharField(max_length=200, blank=True, default="", db_index=True)
    message_id = models.UUIDField(db_index=True)
    index = models.PositiveSmallIntegerField()
    config = models.ForeignKey(ImageConfig, null=True, on_delete=models.SET_NULL, related_name="+")
    status = models.CharField(max_length=16, choices=SlotStatus.choices, default=SlotStatus.PENDING)
    code = models.CharField(max_length=64, blank=True, default="")
    prompt = models.TextField()
    width = models.PositiveIntegerField(null=True, blank=True)
    height = models.PositiveIntegerField(null=True, blank=True)
    evidence = models.JSONField(default=dict, blank=True)
    moderated = models.BooleanField(default=True)
    file = models.CharField(max_length=300, blank=True, default="")
    thumbnail = models.CharField(max_length=300, blank=True, default="")
    mime = models.CharField(max_length=32, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    deadline_at = models.DateTimeField()
    # Set once, just before the backend is called: a task delivered again (a worker died
    # mid-call) finds it set and never calls twice; the sweep ends such a slot.
    attempted_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "message_id", "index"], name="imageslot_unique_index"
            )
        ]
        indexes = [models.Index(fields=["status", "deadline_at"], name="imageslot_due")]
