"""Writes of handoffs: create, accept, close (seed 004).

A handoff's summary is the player's own text, checked and scrubbed like every memory write;
its entries must be shareable (``memory.engine.handoffs.shareable``). A player holds at most
the tenant's ``max_handoffs`` (50): a new one recycles the oldest closed one, else it is a
409 ``handoffs_full``. Accept and close are bound to the receiving persona and the
conversation; accept is idempotent, close names the current ``version``. None of them
switches persona or starts a model.
"""

from __future__ import annotations

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from console.storable import unstorable_at
from memory import owners
from memory.caps import make_room
from memory.configs.selectors import config_for
from memory.engine.entries import check_version
from memory.engine.handoffs import check_handoff, check_stored_summary, shareable
from memory.engine.scrub import scrub
from memory.errors import MemoryConflict, MemoryInvalid, MemoryNotFound
from memory.models import HandoffStatus, MemoryEntry, MemoryHandoff, MemoryHandoffItem


def max_handoffs(tenant) -> int:
    """Handoffs one player may hold (seed 004: 50; the tenant's memory settings)."""
    return config_for(tenant).max_handoffs


def create_handoff(
    tenant,
    player,
    *,
    from_character_id: str,
    to_character_id: str,
    session_id: str,
    summary,
    memory_ids,
) -> MemoryHandoff:
    ids = check_handoff(
        from_character_id=from_character_id,
        to_character_id=to_character_id,
        summary=summary,
        memory_ids=memory_ids,
    )
    found = unstorable_at(summary, "summary")
    if found is not None:
        raise MemoryInvalid("invalid_text", found[1], {"field": "summary"})
    text = scrub(summary).text
    check_stored_summary(text)
    with transaction.atomic():
        owners.lock(player.pk)
        entries = _entries(tenant, player, ids)
        for entry in entries:
            if not shareable(
                kind=entry.kind,
                scope=entry.scope,
                status=entry.status,
                session_id=entry.session_id,
                share_in_session=entry.share_in_session,
                handoff_session=session_id,
            ):
                raise MemoryInvalid(
                    "memory_not_shareable",
                    "a handoff may reference active shared preferences, or entries of this "
                    "conversation shared with its personas",
                    {"memory_id": str(entry.pk)},
                )
        _make_room(tenant, player)
        handoff = MemoryHandoff.objects.create(
            tenant=tenant,
            player=player,
            from_character_id=from_character_id,
            to_character_id=to_character_id,
            session_id=session_id,
            summary=text,
        )
        MemoryHandoffItem.objects.bulk_create(
            MemoryHandoffItem(tenant=tenant, handoff=handoff, entry=entry) for entry in entries
        )
        owners.touch(tenant, player.pk)
    return handoff


def _entries(tenant, player, ids: list[str]) -> list[MemoryEntry]:
    rows = {
        str(e.pk): e for e in MemoryEntry.objects.filter(tenant=tenant, player=player, pk__in=ids)
    }
    missing = [i for i in ids if i not in rows]
    if missing:
        raise MemoryInvalid(
            "memory_not_found", "a referenced entry is not this player's", {"memory_id": missing[0]}
        )
    return [rows[i] for i in ids]


def _make_room(tenant, player) -> None:
    owned = MemoryHandoff.objects.filter(tenant=tenant, player=player)
    cap = max_handoffs(tenant)
    full = MemoryConflict(
        "handoffs_full",
        f"this player holds {cap} open handoffs: close one first",
        {"max_handoffs": cap},
    )
    make_room(owned, owned.filter(status=HandoffStatus.CLOSED), cap, full)


def accept_handoff(
    tenant, handoff: MemoryHandoff, *, character_id: str, session_id: str
) -> MemoryHandoff:
    """The receiving persona takes the handoff (again: no change)."""
    _bound(handoff, character_id, session_id)
    with transaction.atomic():
        moved = MemoryHandoff.objects.filter(
            tenant=tenant, pk=handoff.pk, status=HandoffStatus.PENDING
        ).update(status=HandoffStatus.ACCEPTED, version=F("version") + 1, updated_at=timezone.now())
        current = _reread(tenant, handoff)
        if not moved and current.status == HandoffStatus.CLOSED:
            raise _invalid_state(current, "accept")
        if moved:
            owners.touch(tenant, handoff.player_id)
    return current


def close_handoff(
    tenant, handoff: MemoryHandoff, version, *, character_id: str, session_id: str
) -> MemoryHandoff:
    """The receiving persona closes the handoff at its current ``version``."""
    _bound(handoff, character_id, session_id)
    version = check_version(version, "handoff")
    if handoff.status == HandoffStatus.CLOSED:
        raise _invalid_state(handoff, "close")
    with transaction.atomic():
        moved = (
            MemoryHandoff.objects.filter(tenant=tenant, pk=handoff.pk, version=version)
            .exclude(status=HandoffStatus.CLOSED)
            .update(
                status=HandoffStatus.CLOSED, version=F("version") + 1, updated_at=timezone.now()
            )
        )
        current = _reread(tenant, handoff)
        if not moved:
            if current.status == HandoffStatus.CLOSED:
                raise _invalid_state(current, "close")
            raise MemoryConflict(
                "version_conflict",
                f"the handoff is at version {current.version}, not {version}: read it again",
                {"current_version": current.version, "expected_version": version},
            )
        owners.touch(tenant, handoff.player_id)
    return current


def _bound(handoff: MemoryHandoff, character_id: str, session_id: str) -> None:
    if handoff.to_character_id != character_id or handoff.session_id != session_id:
        raise MemoryConflict(
            "handoff_not_yours",
            "only the receiving persona, in the handoff's conversation, accepts or closes it",
            {"to_character": handoff.to_character_id, "conversation": handoff.session_id},
        )


def _reread(tenant, handoff: MemoryHandoff) -> MemoryHandoff:
    current = MemoryHandoff.objects.filter(tenant=tenant, pk=handoff.pk).first()
    if current is None:
        raise MemoryNotFound("handoff_not_found", "this handoff no longer exists")
    return current


def _invalid_state(handoff: MemoryHandoff, action: str) -> MemoryConflict:
    return MemoryConflict(
        "invalid_state",
        f"this handoff is {handoff.status}: it cannot be {action}ed",
        {"status": handoff.status, "version": handoff.version},
    )
