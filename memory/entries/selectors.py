"""Reads of memory entries: one owner's, filtered; what a turn's preference selection sees."""

from __future__ import annotations

import dataclasses

from memory.engine.preferences import SELECTABLE_KINDS, Item
from memory.models import EntryStatus, MemoryEntry

FILTERS = ("kind", "scope", "status", "character_id", "session_id")


def owner_entries(tenant, player, **filters):
    """The player's entries, newest change first; ``filters`` by any of :data:`FILTERS`."""
    rows = MemoryEntry.objects.filter(tenant=tenant, player=player)
    wanted = {name: value for name, value in filters.items() if name in FILTERS and value}
    return rows.filter(**wanted).order_by("-updated_at", "id")


def owner_entry(tenant, player, entry_id):
    """The player's entry, or None (another owner's or tenant's is None too)."""
    return MemoryEntry.objects.filter(tenant=tenant, player=player, pk=entry_id).first()


def selectable_items(tenant, player_id) -> list[Item]:
    """The player's active preferences and agreements as the pure selection sees them
    (``memory.engine.preferences``): one read per turn, no model instances."""
    rows = MemoryEntry.objects.filter(
        tenant=tenant, player_id=player_id, status=EntryStatus.ACTIVE, kind__in=SELECTABLE_KINDS
    ).values(*ITEM_FIELDS)
    return [
        Item(
            **row
            | {
                "id": str(row["id"]),
                "tags": tuple(row["tags"] or ()),
                "updated_at": row["updated_at"].timestamp(),
                "expires_at": row["expires_at"].timestamp() if row["expires_at"] else None,
            }
        )
        for row in rows
    ]


ITEM_FIELDS = [field.name for field in dataclasses.fields(Item)]
