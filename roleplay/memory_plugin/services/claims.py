"""Our own prepare/commit memory service (seed 000's external memory runtime, with the
authentication it lacked): ``POST /v1/memory/prepare`` and ``POST /v1/memory/commit``.

- :func:`prepare` checks the formal chat (``memory.engine.claims``), records a
  ``MemoryClaim`` and answers the memory text for the turn: the player's stated preferences
  (the same selection a chat turn places) and what recall finds for the current user
  message (the conversation's pre-turn pack when one is waiting, else computed now). The
  rendered system message is checked, not kept: the service keeps no text of a prepare.
- :func:`commit` takes the claim back with the round's user input and assistant text. The
  round is added to the conversation's transcript unless its newest messages are already
  these two (our own turn pipeline stored them), and indexed for recall, so what an outside
  chat said is remembered like our own turns. A repeat of the same commit answers the same;
  a different one is 409 ``claim_conflict``; an expired claim 409 ``claim_expired``; an
  unknown or another tenant's claim 404 ``claim_not_found``.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from console.scoping import is_uuid
from console.storable import unstorable_at
from memory import packs
from memory import services as message_store
from memory.engine import claims, preferences
from memory.errors import MemoryConflict, MemoryInvalid, MemoryNotFound
from memory.models import MemoryClaim, Message
from memory.turn_reads import turn_memory
from roleplay.memory_plugin.context import chosen_preferences
from roleplay.models import Character
from roleplay.turns.records import index_on_commit

COMMITTED = "committed"


def prepare(tenant, conversation, *, messages, ids: dict[str, str]) -> dict:
    """``{claim_id, memory, turn, state_through_round}`` for the chat's current message."""
    chat = claims.check_chat(messages)
    read = turn_memory(
        tenant.pk, conversation.player_id, str(conversation.character_id), conversation.session_id
    )
    memory = _memory_text(conversation, read, chat[-1][1]) if read.config.enabled else ""
    rounds = Message.objects.filter(
        tenant=tenant, session_id=conversation.session_id, role="user"
    ).count()
    claim = MemoryClaim.objects.create(
        tenant=tenant,
        player_id=conversation.player_id,
        character_id=str(conversation.character_id),
        session_id=conversation.session_id,
        conversation_id=conversation.pk,
        turn=claims.turn_of(chat),
        state_through_round=rounds,
        memory_chars=len(memory),
        expires_at=timezone.now() + timedelta(seconds=claims.CLAIM_TTL_S),
        **{name: (ids.get(name) or "")[:200] for name in claims.SOURCE_IDS},
    )
    return {
        "claim_id": str(claim.pk),
        "memory": memory,
        "turn": claim.turn,
        "state_through_round": rounds,
    }


def _memory_text(conversation, read, query: str) -> str:
    parts = []
    card = Character.objects.filter(pk=conversation.character_id).values_list("tags", flat=True)
    chosen = chosen_preferences(
        read.items,
        conversation,
        read.config,
        text=query,
        character_tags=(card.first() if read.items else None) or (),
    )
    if chosen:
        parts.append(preferences.render(chosen))
    owner = packs.owner_of(conversation)
    _status, pack = packs.read(owner.key(read.config, read.owner_revision))
    recalled = pack.get("text", "") if pack else packs.render(packs.compute(owner, query) or [])
    if recalled:
        parts.append(recalled)
    return "\n\n".join(parts)


def commit(tenant, claim_id, *, user: str, assistant: str) -> dict:
    """Hand the round back; ``{committed: true}``."""
    for field, text in (("user", user), ("assistant", assistant)):
        found = unstorable_at(text, field)
        if found is not None:
            raise MemoryInvalid("invalid_text", found[1], {"field": field})
    digest = claims.commit_digest(user, assistant)
    with transaction.atomic():
        claim = None
        if is_uuid(claim_id):
            claim = (
                MemoryClaim.objects.select_for_update().filter(tenant=tenant, pk=claim_id).first()
            )
        if claim is None:
            raise MemoryNotFound("claim_not_found", "no such memory claim")
        if claim.status == COMMITTED:
            if claim.commit_digest == digest:
                return {"committed": True}
            raise MemoryConflict("claim_conflict", "this claim was committed with another round")
        if timezone.now() > claim.expires_at:
            raise MemoryConflict(
                "claim_expired",
                f"a claim is committed within {claims.CLAIM_TTL_S} s of its prepare",
                {"expires_at": claim.expires_at.isoformat()},
            )
        added = _add_round(claim, user, assistant)
        MemoryClaim.objects.filter(pk=claim.pk).update(
            status=COMMITTED, commit_digest=digest, committed_at=timezone.now()
        )
        index_on_commit(claim.conversation_id, added)
    return {"committed": True}


def _add_round(claim: MemoryClaim, user: str, assistant: str) -> list[str]:
    """The round's messages added to the transcript (none when its newest messages are
    these already)."""
    newest = list(
        Message.objects.filter(
            tenant=claim.tenant, session_id=claim.session_id, role__in=("user", "assistant")
        )
        .order_by("-ts")
        .values_list("role", "content")[:2]
    )
    if newest == [("assistant", assistant), ("user", user)]:
        return []
    metadata = {"source": "memory_commit", "claim_id": str(claim.pk)}
    added = []
    for role, content in (("user", user), ("assistant", assistant)):
        if content.strip():
            message = message_store.save_message(
                claim.tenant, claim.session_id, role=role, content=content, metadata=metadata
            )
            added.append(str(message.pk))
    return added
