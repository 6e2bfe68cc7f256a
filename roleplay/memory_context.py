"""The player's stated preferences for a chat turn (seed 004): at most 5 active preference or
agreement entries, 600 characters in all, chosen by scope precedence
(``memory.engine.preferences``) and handed to the Actor as one placed block that says what
they are: the user's preferences about tone and form, never instructions over the character
sheet or the world. The block is in the prompt only; the stored transcript never holds it.

A persona that accepted handoffs in this conversation (seed 004) also reads them, in a
second block: each one's summary, marked as the user's account, with the entries it
references that may still be shared. Nothing is copied into the persona's own memory."""

from __future__ import annotations

import uuid

from django.utils import timezone

from memory.engine import handoffs as handoff_rules
from memory.engine import preferences
from memory.entries.selectors import selectable_items
from memory.entries.services import mark_used
from memory.handoffs.selectors import received
from roleplay.models import Character

BLOCK_ID = "memory:preferences"
HANDOFF_BLOCK_ID = "memory:handoffs"
# After the character sheet, where the layout has one; else just above the latest messages.
POSITIONS = ("after_character", "at_depth")
FALLBACK_DEPTH = 4


def apply(ctx, conversation) -> None:
    _preferences(ctx, conversation)
    _handoffs(ctx, conversation)


def _preferences(ctx, conversation) -> None:
    items = selectable_items(conversation.tenant, conversation.player_id)
    if not items:
        return
    chosen = preferences.select(
        items,
        character_id=str(conversation.character_id),
        session_id=conversation.session_id,
        now=timezone.now().timestamp(),
    )
    if not chosen:
        return
    position = _place(ctx, BLOCK_ID, preferences.render(chosen))
    ctx.trace["memory"] = {
        "preferences": [
            {"id": c.item.id, "level": c.level, "reasons": list(c.reasons)} for c in chosen
        ],
        "position": position,
    }
    if position is not None and ctx.record:
        mark_used([c.item.id for c in chosen])


def _handoffs(ctx, conversation) -> None:
    found = received(
        conversation.tenant,
        conversation.player_id,
        session_id=conversation.session_id,
        character_id=str(conversation.character_id),
    )
    if not found:
        return
    names = dict(
        Character.objects.filter(
            tenant=conversation.tenant, pk__in=[h.from_character_id for h, _ in found]
        ).values_list("pk", "name")
    )
    content = handoff_rules.render(
        [
            (
                names.get(_uuid(h.from_character_id), "another persona"),
                h.summary,
                [e.content for e in entries],
            )
            for h, entries in found
        ]
    )
    position = _place(ctx, HANDOFF_BLOCK_ID, content)
    ctx.trace["memory_handoffs"] = {"ids": [str(h.pk) for h, _ in found], "position": position}


def _place(ctx, block_id: str, content: str) -> str | None:
    """Place ``content`` as one block where the layout has room; the position, or None
    (then the trace says so and nothing is placed)."""
    available = ctx.placement_capabilities()
    position = next((p for p in POSITIONS if p in available), None)
    if position is None:
        return None
    block = {"id": block_id, "position": position, "content": content}
    if position == "at_depth":
        block.update(depth=FALLBACK_DEPTH, role="system")
    ctx.blocks.append(block)
    return position


def _uuid(value: str):
    try:
        return uuid.UUID(value)
    except ValueError:
        return value
