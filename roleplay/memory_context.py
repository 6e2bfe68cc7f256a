"""The player's stated preferences for a chat turn (seed 004): at most 5 active preference or
agreement entries, 600 characters in all, chosen by scope precedence
(``memory.engine.preferences``) and handed to the Actor as one placed block that says what
they are: the user's preferences about tone and form, never instructions over the character
sheet or the world. The block is in the prompt only; the stored transcript never holds it."""

from __future__ import annotations

from django.utils import timezone

from memory.engine import preferences
from memory.entries.selectors import selectable_items
from memory.entries.services import mark_used

BLOCK_ID = "memory:preferences"
# After the character sheet, where the layout has one; else just above the latest messages.
POSITIONS = ("after_character", "at_depth")
FALLBACK_DEPTH = 4


def apply(ctx, conversation) -> None:
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
    available = ctx.placement_capabilities()
    position = next((p for p in POSITIONS if p in available), None)
    ctx.trace["memory"] = {
        "preferences": [
            {"id": c.item.id, "level": c.level, "reasons": list(c.reasons)} for c in chosen
        ],
        "position": position,
    }
    if position is None:
        return  # reported in the trace, never placed where the layout has no room
    block = {"id": BLOCK_ID, "position": position, "content": preferences.render(chosen)}
    if position == "at_depth":
        block.update(depth=FALLBACK_DEPTH, role="system")
    ctx.blocks.append(block)
    if ctx.record:
        mark_used([c.item.id for c in chosen])
