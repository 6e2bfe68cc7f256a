"""The player's stated preferences for a chat turn (seed 004), the turn plug-in
``memory_context`` (a ``read`` hook, after ``memory_learning``): at most 5 active preference or
agreement entries, 600 characters in all, chosen by scope precedence
(``memory.engine.preferences``) and handed to the Actor as one placed block that says what
they are: the user's preferences about tone and form, never instructions over the character
sheet or the world. The block is in the prompt only; the stored transcript never holds it.

A persona that accepted handoffs in this conversation (seed 004) also reads them, in a
second block: each one's summary, marked as the user's account, with the entries it
references that may still be shared. Nothing is copied into the persona's own memory.

The memory settings of the character (``memory.configs``) turn both off (``enabled``) and
set the limits. Everything a turn needs of memory is read in one statement
(``memory.turn_reads``), kept in the turn's :class:`MemoryState` slot and shared with the
learning, pack and tools plug-ins; the entries' "last used" is written
after the reply is committed. With
``document_tools`` on, the conversation's JSON memory document is placed too (seed 000),
and the Actor may change it with the tools of ``roleplay.memory_plugin.tools``; changes held for
acceptance are settled first, when the player's new message accepts the replies before it."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field, replace

from django.utils import timezone

from memory.documents import proposals
from memory.documents.selectors import read_document
from memory.engine import handoffs as handoff_rules
from memory.engine import preferences, table
from memory.engine.config import MemoryConfig
from memory.entries.selectors import selectable_items
from memory.entries.services import mark_used
from memory.handoffs.selectors import received
from memory.turn_reads import TurnMemory, turn_memory
from roleplay.models import Character, TurnKind
from roleplay.turns.plugin import TurnPlugin

BLOCK_ID = "memory:preferences"
HANDOFF_BLOCK_ID = "memory:handoffs"
DOCUMENT_BLOCK_ID = "memory:document"
TABLE_BLOCK_ID = "memory:table"
# The document as the Actor reads it each turn, up to this many characters (the rest is a
# ``get_memory`` call away).
DOCUMENT_BLOCK_CHARS = 8000
# The turns that go on from the conversation: the replies before them are accepted.
ACCEPTING_KINDS = (TurnKind.CHAT, TurnKind.AUTO_REPLY)


@dataclass
class MemoryState:
    """The turn's memory read (``ctx.slot(MemoryState)``), shared by the memory plug-ins:
    None until one of them reads it."""

    read: TurnMemory | None = None
    # The preferences placed for the Actor, marked used once the reply is committed.
    used: list = field(default_factory=list)


class MemoryContextPlugin(TurnPlugin):
    name = "memory_context"
    # Learning comes before choosing: a preference stated now applies to this reply; the
    # worldbook's blocks come first in the prompt.
    after = ("worldbook", "memory_learning")

    def read(self, ctx, conversation) -> None:
        apply(ctx, conversation)

    def after_reply(self, ctx):
        used = ctx.slot(MemoryState).used
        return (lambda: mark_used(used)) if used else None


PLUGIN = MemoryContextPlugin()


def turn_read(ctx, conversation) -> TurnMemory:
    """What the turn reads of memory (settings, selectable entries, whether there are
    handoffs or held changes), in one statement, once per turn."""
    state = ctx.slot(MemoryState)
    if state.read is None:
        state.read = turn_memory(
            conversation.tenant_id,
            conversation.player_id,
            str(conversation.character_id),
            conversation.session_id,
        )
    return state.read


def settings_for(ctx, conversation) -> MemoryConfig:
    """The memory settings in force for the turn's character, read once per turn."""
    return turn_read(ctx, conversation).config


def read_settings(ctx) -> MemoryConfig | None:
    """The memory settings if a memory hook of this turn read them, else None."""
    found = ctx.slot(MemoryState).read
    return found.config if found is not None else None


def entries_changed(ctx, conversation) -> None:
    """A hook of this turn wrote entries (the local rules): read the selectable ones again,
    so the reply already follows what the player just said."""
    state = ctx.slot(MemoryState)
    if state.read is not None:
        items = selectable_items(conversation.tenant, conversation.player_id)
        state.read = replace(state.read, items=items)


def apply(ctx, conversation) -> None:
    if ctx.settings.memory_runtime != "internal":  # an external memory service, or none
        return
    read = turn_read(ctx, conversation)
    if read.has_pending and ctx.record and ctx.kind in ACCEPTING_KINDS:
        _settle(ctx, conversation)
    config = read.config
    if not config.enabled:
        return
    _preferences(ctx, read.items, conversation, config)
    if read.has_handoffs:
        _handoffs(ctx, conversation)
    if config.document_tools:
        _document(ctx, conversation, config.document_slot)
    if config.memory_table:
        _table(ctx, conversation)


def _settle(ctx, conversation) -> None:
    """The player went on from the conversation: the replies before this message are
    accepted, so their held document changes are applied (or dropped) before the Actor
    reads the document."""
    settled = proposals.settle(conversation.tenant, conversation.session_id)
    if settled:
        ctx.trace["memory_proposals"] = [
            {k: str(v) if k == "id" else v for k, v in row.items()} for row in settled
        ]


def chosen_preferences(
    items, conversation, config: MemoryConfig, *, text: str = "", character_tags=()
) -> list:
    """The stored preferences the conversation's turn shows now (the selection rules of
    ``memory.engine.preferences``, within the settings' caps), ranked within a level by the
    tags relevant to the turn: those the character's card tags hold or ``text`` (the
    player's message) names."""
    if not items:
        return []
    tags = preferences.turn_tags(
        (tag for item in items for tag in item.tags), text=text, character_tags=character_tags
    )
    return preferences.select(
        items,
        character_id=str(conversation.character_id),
        session_id=conversation.session_id,
        tags=tags,
        now=timezone.now().timestamp(),
        max_entries=config.max_selected,
        max_chars=config.max_selected_chars,
    )


def _preferences(ctx, items, conversation, config: MemoryConfig) -> None:
    chosen = chosen_preferences(
        items,
        conversation,
        config,
        text=ctx.user_input or "",
        character_tags=ctx.character.tags or (),
    )
    if not chosen:
        return
    position = ctx.place(BLOCK_ID, preferences.render(chosen))
    ctx.trace["memory"] = {
        "preferences": [
            {"id": c.item.id, "level": c.level, "reasons": list(c.reasons)} for c in chosen
        ],
        "position": position,
    }
    if position is not None and ctx.record:
        ctx.slot(MemoryState).used = [c.item.id for c in chosen]


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
    position = ctx.place(HANDOFF_BLOCK_ID, content)
    ctx.trace["memory_handoffs"] = {"ids": [str(h.pk) for h, _ in found], "position": position}


def _table(ctx, conversation) -> None:
    """The conversation's memory table and how a reply edits it (seed 000)."""
    current = read_document(conversation.tenant, conversation.session_id, table.SLOT)
    position = ctx.place(TABLE_BLOCK_ID, table.render(current["memory"]))
    ctx.trace["memory_table"] = {"revision": current["revision"], "position": position}


def _document(ctx, conversation, slot: str) -> None:
    """The conversation's memory document, current as of this turn (seed 000: the next
    request reads back the new value and it really is in the model input)."""
    current = read_document(conversation.tenant, conversation.session_id, slot)
    text = json.dumps(current["memory"], ensure_ascii=False, sort_keys=True)
    if len(text) > DOCUMENT_BLOCK_CHARS:
        text = text[:DOCUMENT_BLOCK_CHARS] + " … (cut: call get_memory for all of it)"
    content = (
        f"Your memory of this conversation (JSON, revision {current['revision']}; change it "
        f"with update_memory): {text}"
    )
    position = ctx.place(DOCUMENT_BLOCK_ID, content)
    ctx.trace["memory_document"] = {"revision": current["revision"], "position": position}


def _uuid(value: str):
    try:
        return uuid.UUID(value)
    except ValueError:
        return value
