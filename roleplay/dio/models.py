"""Our own DIO's tables (``docs/dio.md``): a task per submitted instruction, and the
versions of the character prompt per player + conversation + target prompt. Registered with
the runtime's models (``roleplay.models`` imports them)."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel


class DioTaskStatus(models.TextChoices):
    PROCESSING = "processing", "processing"
    SUCCEEDED = "succeeded", "succeeded"
    FAILED = "failed", "failed"
    TIMED_OUT = "timed_out", "timed out"


class VersionKind(models.TextChoices):
    COMPILED = "compiled", "compiled from an instruction"
    REVERT = "revert", "an earlier version in force again"
    OFF = "off", "DIO switched off"


class DioTask(TenantScopedModel):
    """One submitted instruction (the player's raw input) and how compiling it ended.

    ``request_id`` is unique per tenant: a second submission with it is a duplicate.
    ``deadline`` is the seed's 16-minute budget from the submission."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    request_id = models.CharField(max_length=200)
    task_message_id = models.CharField(max_length=220)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    user_id = models.CharField(max_length=200)
    target_prompt_id = models.CharField(max_length=200)
    instruction = models.TextField()
    language = models.CharField(max_length=35, blank=True, default="")
    # The model config compiling it, as the scenario names it (an id or a name).
    model_config_ref = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(
        max_length=16, choices=DioTaskStatus.choices, default=DioTaskStatus.PROCESSING
    )
    prompt_changed = models.BooleanField(default=False)
    error_code = models.CharField(max_length=64, blank=True, default="")
    error_message = models.CharField(max_length=500, blank=True, default="")
    # The version the compile read (None before the first) and the one it made, if any.
    source_version = models.ForeignKey(
        "roleplay.DioPromptVersion", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    result_version = models.ForeignKey(
        "roleplay.DioPromptVersion", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="+",
    )  # fmt: skip
    compiled_sha256 = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    deadline = models.DateTimeField()
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "request_id"], name="dio_task_request")
        ]
        indexes = [models.Index(fields=["conversation", "-created_at"], name="dio_task_recent")]


class DioPromptVersion(TenantScopedModel):
    """One version of an identity's character prompt; versions are kept, the newest is in
    force (``off``: none is). New versions go by compare-and-set on ``version``."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    user_id = models.CharField(max_length=200)
    target_prompt_id = models.CharField(max_length=200)
    version = models.PositiveIntegerField()
    kind = models.CharField(max_length=16, choices=VersionKind.choices)
    compiled_prompt = models.TextField(blank=True, default="")
    sha256 = models.CharField(max_length=64, blank=True, default="")
    changeset = models.JSONField(default=list, blank=True)
    # The instructions this version follows, oldest first (the next compile's "earlier").
    instructions = models.JSONField(default=list, blank=True)
    # The version it was made from (compiled: the one in force; revert: the one restored).
    source_version = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    request_id = models.CharField(max_length=200, blank=True, default="")
    created_by = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "user_id", "target_prompt_id", "version"],
                name="dio_version_unique",
            )
        ]
        ordering = ["-version"]
