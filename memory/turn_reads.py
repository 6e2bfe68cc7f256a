"""What a chat turn reads of memory, in one statement: the memory settings that apply to the
character, the player's selectable entries, and whether the conversation has accepted
handoffs to this character or document changes held for acceptance (those are read in full
only when they exist, which is rare).

The ORM reads this replaces (``memory.configs.selectors.config_for``,
``memory.entries.selectors.selectable_items``, ``memory.handoffs.selectors.received`` and the
pending proposals) took 5-8 ms a turn in five round trips; this is one. It is pinned to them
by ``tests/fastpaths/test_memory_reads.py``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from console.rows import prepared
from memory.configs.selectors import defaults
from memory.engine.config import MemoryConfig, resolve
from memory.engine.preferences import SELECTABLE_KINDS, Item
from memory.models import (
    EntryStatus,
    HandoffStatus,
    MemoryEntry,
    MemoryHandoff,
    MemoryOwnerState,
    MemoryProposal,
    MemorySettings,
    ProposalStatus,
)


@dataclass(frozen=True)
class TurnMemory:
    config: MemoryConfig
    items: list[Item]
    has_handoffs: bool
    has_pending: bool
    owner_revision: int = 0  # MemoryOwnerState.revision: the key of the pre-turn pack


_SQL = f"""
SELECT
  (SELECT coalesce(json_agg(json_build_array(character_id, data)), '[]')
     FROM {MemorySettings._meta.db_table}
    WHERE tenant_id = %(tenant)s AND character_id IN ('', %(character)s)),
  (SELECT coalesce(json_agg(json_build_array(
            id, kind, scope, status, content, category_key, pinned, tags,
            extract(epoch FROM updated_at), character_id, session_id, share_in_session,
            extract(epoch FROM expires_at))), '[]')
     FROM {MemoryEntry._meta.db_table}
    WHERE tenant_id = %(tenant)s AND player_id = %(player)s AND status = %(active)s
      AND kind = ANY(%(kinds)s)),
  EXISTS (SELECT 1 FROM {MemoryHandoff._meta.db_table}
           WHERE tenant_id = %(tenant)s AND player_id = %(player)s AND session_id = %(session)s
             AND to_character_id = %(character)s AND status = %(accepted)s),
  EXISTS (SELECT 1 FROM {MemoryProposal._meta.db_table}
           WHERE tenant_id = %(tenant)s AND session_id = %(session)s AND status = %(pending)s),
  (SELECT revision FROM {MemoryOwnerState._meta.db_table}
    WHERE tenant_id = %(tenant)s AND player_id = %(player)s)
"""


def turn_memory(tenant_id, player_id, character_id: str, session_id: str) -> TurnMemory:
    with prepared(
        _SQL,
        {
            "tenant": tenant_id,
            "player": player_id,
            "character": character_id,
            "session": session_id,
            "active": EntryStatus.ACTIVE,
            "kinds": list(SELECTABLE_KINDS),
            "accepted": HandoffStatus.ACCEPTED,
            "pending": ProposalStatus.PENDING,
        },
    ) as cursor:
        settings_rows, entry_rows, has_handoffs, has_pending, revision = cursor.fetchone()
    stored = dict(_json(settings_rows))
    config = resolve(defaults(), stored.get(""), stored.get(character_id) if character_id else None)
    return TurnMemory(
        config,
        [_item(row) for row in _json(entry_rows)],
        bool(has_handoffs),
        bool(has_pending),
        int(revision or 0),
    )


def _json(value):
    return json.loads(value) if isinstance(value, str) else value


def _item(row: list) -> Item:
    (id_, kind, scope, status, content, category_key, pinned, tags, updated_at, character_id,
     session_id, share_in_session, expires_at) = row  # fmt: skip
    return Item(
        id=str(id_),
        kind=kind,
        scope=scope,
        status=status,
        content=content,
        category_key=category_key,
        pinned=pinned,
        tags=tuple(tags or ()),
        updated_at=float(updated_at),
        character_id=character_id,
        session_id=session_id,
        share_in_session=share_in_session,
        expires_at=None if expires_at is None else float(expires_at),
    )
