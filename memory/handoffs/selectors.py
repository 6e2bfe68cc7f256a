"""Reads of handoffs: a player's, and what a receiving persona sees. The entries a handoff
references are checked again on every read (``shareable``): one made private, superseded
or deleted since is not shown."""

from __future__ import annotations

from memory.engine.handoffs import shareable
from memory.models import HandoffStatus, MemoryHandoff


def player_handoffs(tenant, player, *, session_id: str = "", to_character_id: str = ""):
    rows = MemoryHandoff.objects.filter(tenant=tenant, player=player)
    if session_id:
        rows = rows.filter(session_id=session_id)
    if to_character_id:
        rows = rows.filter(to_character_id=to_character_id)
    return rows.order_by("-created_at", "id").prefetch_related("items__entry")


def player_handoff(tenant, player, handoff_id):
    return MemoryHandoff.objects.filter(tenant=tenant, player=player, pk=handoff_id).first()


def shared_entries(handoff: MemoryHandoff) -> list:
    """The handoff's entries that may still be shared, in the order they were given."""
    return [
        item.entry
        for item in sorted(handoff.items.all(), key=lambda item: item.pk)
        if shareable(
            kind=item.entry.kind,
            scope=item.entry.scope,
            status=item.entry.status,
            session_id=item.entry.session_id,
            share_in_session=item.entry.share_in_session,
            handoff_session=handoff.session_id,
        )
    ]


def received(
    tenant, player_id, *, session_id: str, character_id: str
) -> list[tuple[MemoryHandoff, list]]:
    """The accepted handoffs to ``character_id`` in the conversation, oldest first, each with
    its still-shareable entries (what the receiving persona's prompt shows)."""
    rows = (
        MemoryHandoff.objects.filter(
            tenant=tenant,
            player_id=player_id,
            session_id=session_id,
            to_character_id=character_id,
            status=HandoffStatus.ACCEPTED,
        )
        .order_by("created_at", "id")
        .prefetch_related("items__entry")
    )
    return [(handoff, shared_entries(handoff)) for handoff in rows]
