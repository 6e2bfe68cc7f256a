"""Reading a conversation out as a chat file (``GET /api/v1/conversations/{id}/export``
and the console's download): SillyTavern ``.jsonl`` or an OpenAI message array.

A read: every stored user and character message (archived ones too: they are the
conversation's past, only kept out of the prompt) in order, each reply's alternatives, the
character's openings with the names filled, and the player's name as the conversation
shows it; a group's reply carries its speaker's name (``metadata.speaker``), as
SillyTavern's group chats do. The file is written by the pure
``roleplay.conversations.chats.write``; what ``roleplay.conversations.chats.read`` reads
back is the same conversation.
"""

from __future__ import annotations

import re
from collections import defaultdict

from images import signing
from images.selectors import slots_by_message
from memory import selectors as message_reads
from memory.models import MessageAlternative
from roleplay.characters.downloads import FileOut
from roleplay.characters.selectors import greeting_choices, greeting_for
from roleplay.conversations.chats.names import fill_names
from roleplay.conversations.chats.notes import metadata_from_note
from roleplay.conversations.chats.write import CONTENT_TYPES, EXTENSIONS, Chat, Line, write_chat
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for

ROLES = ("user", "assistant")
_UNSAFE = re.compile(r"[^\w. -]+")


def export_chat(tenant, conversation: Conversation, fmt: str) -> FileOut:
    character = conversation.character
    user = persona_for(conversation).name
    messages = [
        m
        for m in message_reads.get_full_history(tenant, conversation.session_id)
        if m.role in ROLES
    ]
    alternatives: defaultdict[str, list[str]] = defaultdict(list)
    rows = MessageAlternative.objects.filter(
        tenant=tenant, message_id__in=[m.pk for m in messages]
    ).order_by("message_id", "index")
    for message_id, content in rows.values_list("message_id", "content"):
        alternatives[str(message_id)].append(content)
    replies = [m.pk for m in messages if m.role == "assistant"]
    pictures = slots_by_message(tenant, replies) if replies else {}
    lines = [
        Line(
            role=m.role,
            content=m.content,
            sent_ms=m.ts,
            images=_drawn(pictures.get(m.pk, ())),
            name=_speaker_name(m.metadata),
            **_swipes(alternatives.get(str(m.pk), []), m.selected_alternative),
        )
        for m in messages
    ]
    openings: tuple[str, ...] = ()
    if greeting_for(conversation).strip():
        openings = tuple(
            fill_names(text, character=character.name, user=user)
            for _, text in greeting_choices(character)
        )
    chat = Chat(
        user_name=user,
        character_name=character.name,
        created_ms=int(conversation.created_at.timestamp() * 1000),
        openings=openings,
        opening=conversation.greeting_index or 0,
        lines=lines,
        metadata=metadata_from_note(conversation.author_note),
    )
    stem = _UNSAFE.sub("_", f"{character.name} - {conversation.title or 'chat'}").strip()
    return FileOut(write_chat(chat, fmt), CONTENT_TYPES[fmt], f"{stem[:120]}.{EXTENSIONS[fmt]}")


def _speaker_name(metadata) -> str | None:
    speaker = metadata.get("speaker") if isinstance(metadata, dict) else None
    name = speaker.get("name") if isinstance(speaker, dict) else None
    return name if isinstance(name, str) and name else None


def _swipes(texts: list[str], selected: int) -> dict:
    if len(texts) < 2 or not 0 <= selected < len(texts):
        return {}
    return {"alternatives": tuple(texts), "selected": selected}


def _drawn(slots) -> tuple[str, ...]:
    """The links of a message's drawn pictures (``extra.image`` in SillyTavern's file)."""
    return tuple(
        signing.url_for(s.tenant_id, s.file) for s in slots if s.status == "ready" and s.file
    )
