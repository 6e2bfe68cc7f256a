"""Named checkpoints (bookmarks) on a conversation's messages: a name a player gives a point
of the history, to find it again and branch from it. Registered with the runtime's models
(``roleplay.models`` imports them)."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel

MAX_NAME = 100


class Bookmark(TenantScopedModel):
    """A name for one message of the conversation's history (its own or one it shares with
    the conversation it was branched from); names are unique per conversation."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    conversation = models.ForeignKey(
        "roleplay.Conversation", on_delete=models.CASCADE, related_name="bookmarks"
    )
    message_id = models.UUIDField()
    name = models.CharField(max_length=MAX_NAME)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["conversation", "name"], name="bookmark_name_unique")
        ]
        ordering = ["created_at"]

    def __str__(self) -> str:
        return self.name
