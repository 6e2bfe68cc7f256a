"""Forgetting: one orchestrator for every subsystem's memory (seed 001's ``memory:clear``).

:func:`forget` sends ``memory.signals.memory_clear`` in one transaction and returns each
subsystem's result (``results[]``). Scopes:

- ``session``: one conversation (``session_id``): its messages, its session entries, its
  documents and handoffs;
- ``player``: one player's memory (entries with their evidence, handoffs, the documents of
  the player's conversations); the transcript stays, it is the conversation, not memory;
- ``all``: everything of the tenant (:func:`clear_all`).

What stays is text-free: the owner counters, whose epoch moves so that a background job
that started before cannot write back what was forgotten.
"""

from __future__ import annotations

from django.db import transaction

from memory import owners
from memory import services as message_store
from memory.documents import proposals
from memory.documents.services import forget_sessions
from memory.models import MemoryDocument, MemoryEntry, MemoryEvidence, MemoryHandoff
from memory.signals import memory_clear

SCOPES = ("session", "player", "all")


def forget(
    tenant,
    *,
    scope: str,
    session_id: str | None = None,
    player=None,
    player_sessions: list[str] | None = None,
) -> list[dict]:
    """Clear ``scope`` in every subsystem; their results, one dict each. For ``player``,
    ``player_sessions`` names the player's conversations (the runtime owns them)."""
    if scope not in SCOPES:
        raise ValueError(f"unknown scope {scope!r}")
    if (scope == "session") != (session_id is not None) or (scope == "player") != (
        player is not None
    ):
        raise ValueError("session scope names a session_id, player scope a player")
    with transaction.atomic():
        responses = memory_clear.send(
            sender=None,
            tenant=tenant,
            scope=scope,
            session_id=session_id,
            player=player,
            player_sessions=list(player_sessions or ()),
        )
    return [result for _receiver, result in responses if result]


def clear_all(tenant) -> list[dict]:
    """Every conversation, archive and memory of the tenant (seed 001's ``clearAll``)."""
    return forget(tenant, scope="all")


def counts(results: list[dict]) -> dict[str, int]:
    """The results summed per kind (``{"entries": 3, "documents": 1, ...}``)."""
    total: dict[str, int] = {}
    for result in results:
        for name, value in result.items():
            if isinstance(value, int) and not isinstance(value, bool):
                total[name] = total.get(name, 0) + value
    return total


def _memory_model(sender, *, tenant, scope, session_id, player, player_sessions, **_) -> dict:
    """The memory model's part: entries (evidence with them), handoffs, documents and the
    pending material (held document changes)."""
    entries = MemoryEntry.objects.filter(tenant=tenant)
    handoffs = MemoryHandoff.objects.filter(tenant=tenant)
    if scope == "session":
        entries = entries.filter(session_id=session_id)
        handoffs = handoffs.filter(session_id=session_id)
        sessions = [session_id]
    elif scope == "player":
        entries = entries.filter(player=player)
        handoffs = handoffs.filter(player=player)
        sessions = player_sessions
    else:
        sessions = None
    evidence = MemoryEvidence.objects.filter(entry__in=entries).count()
    players = set(entries.exclude(player=None).values_list("player_id", flat=True))
    if player is not None:
        players.add(player.pk)
    result = {
        "subsystem": "memory",
        "handoffs": _deleted(handoffs.delete(), MemoryHandoff),
        "entries": _deleted(entries.delete(), MemoryEntry),
        "evidence": evidence,
    }
    if sessions is None:
        result["documents"] = _deleted(
            MemoryDocument.objects.filter(tenant=tenant).delete(), MemoryDocument
        )
    else:
        result["documents"] = forget_sessions(tenant, sessions)
    result["proposals"] = proposals.forget(tenant, sessions)
    for player_id in players:
        owners.touch(tenant, player_id, epoch=True)
    return result


def _message_store(sender, *, tenant, scope, session_id, player, **_) -> dict | None:
    """The transcript: one conversation's, or every one (not a player's: see above)."""
    if scope == "session":
        cleared = message_store.clear_session(tenant, session_id)
    elif scope == "all":
        cleared = message_store.clear_all(tenant)
    else:
        return None
    return {"subsystem": "messages", "messages": cleared}


def _deleted(result: tuple[int, dict], model) -> int:
    return result[1].get(model._meta.label, 0)


memory_clear.connect(_memory_model, dispatch_uid="memory.forget.memory_model")
memory_clear.connect(_message_store, dispatch_uid="memory.forget.message_store")
