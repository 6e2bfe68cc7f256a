"""Reads of JSON memory documents: the current object of a slot, its history."""

from __future__ import annotations

from memory.models import MemoryDocument, MemoryDocumentRevision, MemoryProposal

EMPTY = {"revision": 0, "memory": None}


def read_document(tenant, session_id: str, slot: str) -> dict:
    """``{revision, memory}`` of the slot; an empty slot is ``{revision: 0, memory: null}``."""
    row = (
        MemoryDocument.objects.filter(tenant=tenant, session_id=session_id, slot=slot)
        .values_list("revision", "data")
        .first()
    )
    if row is None:
        return dict(EMPTY)
    return {"revision": row[0], "memory": row[1]}


def current_revision(tenant, session_id: str, slot: str) -> int:
    """The slot's stored revision (0 when empty)."""
    found = (
        MemoryDocument.objects.filter(tenant=tenant, session_id=session_id, slot=slot)
        .values_list("revision", flat=True)
        .first()
    )
    return found or 0


def document_history(tenant, session_id: str, slot: str, limit: int = 50) -> list[dict]:
    """The slot's revisions, newest first: revision, memory, origin and when."""
    rows = MemoryDocumentRevision.objects.filter(
        tenant=tenant, document__session_id=session_id, document__slot=slot
    ).order_by("-revision")[: max(int(limit), 0)]
    return [
        {
            "revision": row.revision,
            "memory": row.data,
            "origin": row.origin,
            "created_at": row.created_at,
        }
        for row in rows
    ]


def slots(tenant, session_id: str) -> list[dict]:
    """The conversation's non-empty slots: slot, revision, last change."""
    return list(
        MemoryDocument.objects.filter(tenant=tenant, session_id=session_id)
        .order_by("slot")
        .values("slot", "revision", "updated_at")
    )


def held_changes(tenant, session_id: str, slot: str, limit: int = 20) -> list[dict]:
    """The slot's changes held for a turn's acceptance (``memory.documents.proposals``),
    newest first: status, why, the revision it was based on and the one it became."""
    rows = MemoryProposal.objects.filter(tenant=tenant, session_id=session_id, slot=slot)
    return list(
        rows.order_by("-created_at").values(
            "id", "status", "reason", "base_revision", "revision", "data", "turn_id",
            "created_at", "decided_at",
        )[: max(int(limit), 0)]
    )  # fmt: skip
