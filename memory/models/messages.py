"""The message store of seed 001: messages by session (with the archived flag), the
metadata side store, a reply's alternatives and the edits of a message."""

from __future__ import annotations

import uuid

from django.db import models

from console.scoping import TenantScopedModel


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
    # A reasoning model's scratchpad before the reply (``roleplay.llm.reasoning``): shown on
    # demand, never part of ``content``; the selected alternative's, like ``content``.
    reasoning = models.TextField(blank=True, default="", db_default="")
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
    reasoning = models.TextField(blank=True, default="", db_default="")
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


class SessionFork(TenantScopedModel):
    """A session that shares the start of other sessions' histories without a copy of their
    messages: ``ancestors`` lists ``[session_id, upto_ts]`` pairs, the root first, and the
    session's history is each ancestor's messages up to its ``upto_ts`` followed by its own
    (``memory.forks``)."""

    session_id = models.CharField(max_length=200)
    ancestors = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "session_id"], name="session_fork_unique")
        ]
