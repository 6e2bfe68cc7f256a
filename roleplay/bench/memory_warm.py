"""A bench conversation's memory made warm, as a player's would be after a while: a stated
preference, its messages indexed for recall, and the pre-turn pack its next turn reads,
built and stored as the refresh task would (``memory.refresh_pack``)."""

from __future__ import annotations

from memory import packs
from memory import services as message_store
from memory.configs.services import put_settings
from memory.entries.services import add_entry
from memory.recall import indexing
from memory.turn_reads import turn_memory
from roleplay.models import Character, Conversation

# What a bench player has said before, when the run gives it a past (``warm(lines=...)``).
PAST = [
    ("user", "The lantern in the north tower went out again last night."),
    ("assistant", "I relit it at dawn; the wick was soaked through by the fog."),
    ("user", "My sister Maren arrives on the Thursday ferry with the spare lenses."),
    ("assistant", "Then we should clear the landing before the tide turns."),
]


def warm(conversation, query: str, *, lines=()) -> dict:
    """Save ``lines`` as the conversation's past, make its memory warm for a turn asking
    ``query``, and return the stored pack's figures (items, characters)."""
    tenant, player = conversation.tenant, conversation.player
    for role, text in lines:
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
    add_entry(tenant, player, kind="preference", scope="shared", category_key="length",
              content="Keep replies brief.")  # fmt: skip
    indexing.index_messages(
        tenant, session_id=conversation.session_id, player_id=player.pk,
        character_id=str(conversation.character_id), conversation_id=conversation.pk,
    )  # fmt: skip
    read = turn_memory(tenant.pk, player.pk, str(conversation.character_id),
                       conversation.session_id)  # fmt: skip
    owner = packs.owner_of(conversation)
    items = packs.compute(owner, query) or []
    text = packs.render(items)
    packs.store(owner.key(read.config, read.owner_revision), items, text)
    return {"items": len(items), "chars": len(text)}


def split(measured: list, query: str) -> tuple[list, list]:
    """``--memory-warm`` on a run's measured conversations: every other one moves to a copy
    of its character whose memory is off, the rest are made warm (:func:`warm`); (on, off).
    The memory hooks' times of the two halves, in the same run, tell what memory adds."""
    if not measured:
        return [], []
    on, off = measured[0::2], measured[1::2]
    if off:
        original = off[0].character
        twin = Character.objects.create(
            tenant=original.tenant,
            name=original.name,
            description=original.description,
            first_message=original.first_message,
        )
        put_settings(original.tenant, {"enabled": False}, character_id=str(twin.pk))
        Conversation.objects.filter(pk__in=[c.pk for c in off]).update(character=twin)
    for conversation in on:
        warm(conversation, query, lines=PAST)
    return on, off
