"""The visual world's tables (``frontloop.world``): the state in force per conversation, and
every revision it had. Registered with the runtime's models (``roleplay.models`` imports
them)."""

from __future__ import annotations

from django.db import models

from console.scoping import TenantScopedModel


class VisualWorld(TenantScopedModel):
    """A conversation's visual world in force: ``revision`` moves by compare-and-set."""

    conversation = models.OneToOneField(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    revision = models.PositiveIntegerField(default=0)
    state = models.JSONField(default=dict)
    updated_at = models.DateTimeField(auto_now=True)


class VisualWorldRevision(TenantScopedModel):
    """One revision of a conversation's visual world: who wrote it (a turn's update, an
    operator's edit, a restore) and the state it set."""

    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="+"
    )
    revision = models.PositiveIntegerField()
    state = models.JSONField()
    source = models.CharField(max_length=16)  # turn | operator | restore
    turn_id = models.UUIDField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "revision"], name="visual_world_revision_unique"
            )
        ]
        ordering = ["-revision"]
