"""A group's members beyond the conversation's own character. Registered with the
runtime's models (``roleplay.models`` imports them).

The conversation's ``character`` is always the group's first member, whether or not a row
names it: a row for it only keeps its mute and talkativeness. Every other member is a row,
ordered by ``position``. A conversation without rows is a one-character chat."""

from __future__ import annotations

import uuid

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from console.scoping import TenantScopedModel


class GroupMode(models.TextChoices):
    NATURAL = "natural", "mentioned names, then talkativeness"
    LIST = "list", "in the members' order"
    MANUAL = "manual", "the player picks"
    POOLED = "pooled", "each once before anyone twice"


class ConversationMember(TenantScopedModel):
    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="members"
    )
    character = models.ForeignKey("roleplay.Character", on_delete=models.CASCADE, related_name="+")
    position = models.PositiveSmallIntegerField(default=0)
    muted = models.BooleanField(default=False)
    talkativeness = models.FloatField(
        default=0.5, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)]
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["conversation", "character"], name="conversation_member_unique"
            )
        ]
        ordering = ["position", "created_at"]
