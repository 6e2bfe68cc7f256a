"""The JSON memory documents of seed 000: a document per session and slot, its revisions,
and the proposals a model makes to change it."""

from __future__ import annotations

from django.db import models

from console.scoping import TenantScopedModel


class MemoryDocument(TenantScopedModel):
    """Seed 000's JSON memory: one object per conversation (``session_id``) and ``slot``,
    replaced whole by compare-and-set on ``revision`` (``memory.documents``). No row is
    revision 0 with no memory. Every revision is kept in :class:`MemoryDocumentRevision`."""

    session_id = models.CharField(max_length=200)
    slot = models.CharField(max_length=64)
    revision = models.PositiveBigIntegerField()
    data = models.JSONField()
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "session_id", "slot"], name="memory_document_slot_unique"
            )
        ]


class MemoryDocumentRevision(TenantScopedModel):
    """One revision of a document as written, and by which door (history and diffs)."""

    document = models.ForeignKey(MemoryDocument, on_delete=models.CASCADE, related_name="revisions")
    revision = models.PositiveBigIntegerField()
    data = models.JSONField()
    origin = models.CharField(max_length=16)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["document", "revision"], name="memory_document_revision_unique"
            )
        ]
        ordering = ["-revision"]


class ProposalStatus(models.TextChoices):
    PENDING = "pending", "pending"
    APPLIED = "applied", "applied"
    DROPPED = "dropped", "dropped"
    CONFLICTED = "conflicted", "conflicted"


class MemoryProposal(TenantScopedModel):
    """An ``update_memory`` call held until its turn is accepted (the settings'
    ``document_commit: on_accept``): the whole new object (scrubbed) and the revision it was
    based on. When the player goes on from the reply it is applied by compare-and-set
    (``applied``, with the revision it became, or ``conflicted``); a reply regenerated,
    failed or rolled back drops it (``dropped``, with the reason). One per turn and slot: a
    second call in the same turn replaces it. ``message_id`` is the reply the turn writes
    (no foreign key: a chat turn stores its reply only when it ends)."""

    session_id = models.CharField(max_length=200)
    slot = models.CharField(max_length=64)
    turn_id = models.UUIDField()
    message_id = models.UUIDField()
    base_revision = models.PositiveBigIntegerField()
    data = models.JSONField()
    status = models.CharField(
        max_length=16, choices=ProposalStatus.choices, default=ProposalStatus.PENDING
    )
    reason = models.CharField(max_length=32, blank=True, default="")
    revision = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["turn_id", "slot"], name="memory_proposal_turn_slot")
        ]
        indexes = [
            models.Index(fields=["tenant", "session_id", "status"], name="memory_proposal_session")
        ]
