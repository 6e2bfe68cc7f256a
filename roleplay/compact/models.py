"""Compact's tables: the checkpoint versions of a conversation's summary, and the next one
prepared in the background (``compact.services``). Registered with the runtime's models
(``roleplay.models`` imports them)."""

from __future__ import annotations

from django.db import models

from console.scoping import TenantScopedModel


class CheckpointContent(TenantScopedModel):
    """What a compaction checkpoint holds (``compact.checkpoint.Checkpoint``): the summary,
    the first and last covered message ids, the covered count and content fingerprint, the
    config fingerprint, the format version, the version it extends (``chain``) and audit
    data."""

    chain = models.PositiveIntegerField(null=True, blank=True)
    summary = models.JSONField()
    first_message_id = models.UUIDField()
    last_message_id = models.UUIDField()
    covered_count = models.PositiveIntegerField()
    fingerprint = models.CharField(max_length=64)
    config_fingerprint = models.CharField(max_length=64)
    format_version = models.PositiveIntegerField(default=1)
    audit = models.JSONField(default=dict)

    class Meta:
        abstract = True


class CompactCheckpoint(CheckpointContent):
    """One version of a conversation's compaction checkpoint under a scenario (seed 002,
    Compact): every version is kept; ``chain`` names the version it extends. ``status``
    ``active`` is the one a turn may continue from; ``invalidated`` when the history it
    covers changed (or an operator deleted it). Versions are written by compare-and-set on
    the newest version number (``compact.services.checkpoints``)."""

    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey("roleplay.Scenario", on_delete=models.CASCADE, related_name="+")
    version = models.PositiveIntegerField()
    status = models.CharField(max_length=16, default="active")
    reason = models.CharField(max_length=64, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "scenario", "version"], name="compact_checkpoint_unique"
            )
        ]


class CompactPreparation(CheckpointContent):
    """The next compaction checkpoint, prepared in the background after a turn whose next
    prompt will pass the trigger (``compact.services.prepare``), so the compactor call is
    off the next turn's path. One per conversation (for the scenario it ran), replaced by
    the next one; a turn adopts it (saving it as version ``base_version + 1`` by
    compare-and-set) only while ``base_version`` is still the newest version and the
    messages it covers are unchanged."""

    conversation = models.OneToOneField(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    scenario = models.ForeignKey("roleplay.Scenario", on_delete=models.CASCADE, related_name="+")
    base_version = models.PositiveIntegerField()
    created_at = models.DateTimeField(auto_now=True)
