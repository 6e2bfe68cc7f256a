"""Reading a conversation out as a chat file (``GET /api/v1/conversations/{id}/export``
and the console's download): SillyTavern ``.jsonl`` or an OpenAI message array.

A read: every stored user and character message (archived ones too: they are the
conversation's past, only kept out of the prompt) in order, each reply's alternatives, the
character's openings with the names filled, and the player's name as the conversation
shows it; a group's reply carries its speaker's name (``metadata.speaker``), as
SillyTavern's group chats do. The file is written by the pure
``roleplay.conversations.chats.write``; what ``roleplay.conversations.chats.read`` reads
back is the same conversation. A group's reply also carries its speaker's avatar file
(``original_avatar``), and the group itself goes out as SillyTavern's group file
(:func:`export_group`, read back by ``services.group_import``).
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
from roleplay.conversations.chats.group_file import GroupOut, avatar_file, write_group
from roleplay.conversations.chats.names import fill_names
from roleplay.conversations.chats.notes import metadata_from_note
from roleplay.conversations.chats.write import CONTENT_TYPES, EXTENSIONS, Chat, Line, write_chat
from roleplay.groups.selectors import members_of
from roleplay.models import Character, Conversation
from roleplay.players.selectors import persona_for

ROLES = ("user", "assistant")
_UNSAFE = re.compile(r"[^\w. -]+")
_UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def export_chat(tenant, conversation: Conversation, fmt: str) -> FileOut:
    character = conversation.character
    user = persona_for(conversation).name
    messages = [
        m
        for m in message_reads.get_full_history(tenant, conversation.session_id)
        if m.role in ROLES
    ]
    alternatives: defaultdict[str, list[tuple[str, str]]] = defaultdict(list)
    rows = MessageAlternative.objects.filter(
        tenant=tenant, message_id__in=[m.pk for m in messages]
    ).order_by("message_id", "index")
    for message_id, content, reasoning in rows.values_list("message_id", "content", "reasoning"):
        alternatives[str(message_id)].append((content, reasoning))
    replies = [m.pk for m in messages if m.role == "assistant"]
    pictures = slots_by_message(tenant, replies) if replies else {}
    avatars = _avatars(tenant, messages)
    lines = [
        Line(
            role=m.role,
            content=m.content,
            reasoning=m.reasoning,
            sent_ms=m.ts,
            images=_drawn(pictures.get(m.pk, ())),
            name=_speaker_name(m.metadata),
            avatar=avatars.get(_speaker_id(m.metadata)),
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
    return FileOut(
        write_chat(chat, fmt), CONTENT_TYPES[fmt], f"{chat_stem(conversation)}.{EXTENSIONS[fmt]}"
    )


def export_group(conversation: Conversation) -> FileOut:
    """The conversation's group as SillyTavern's ``groups/<id>.json``: its members as avatar
    files (the conversation's character first), the muted ones disabled, its settings, and
    the chat :func:`export_chat` writes as its one chat (``chat_id``). A one-character
    conversation is a group of one."""
    members = members_of(conversation)
    avatars = [avatar_file(m.character.name) for m in members]
    created_ms = int(conversation.created_at.timestamp() * 1000)
    group = GroupOut(
        id=str(created_ms),
        name=conversation.title or ", ".join(m.character.name for m in members),
        members=tuple(avatars),
        muted=tuple(a for a, m in zip(avatars, members, strict=True) if m.muted),
        group_mode=conversation.group_mode,
        join_cards=conversation.join_cards,
        allow_self_responses=conversation.allow_self_responses,
        auto_delay_ms=conversation.auto_delay_ms,
        chat_id=chat_stem(conversation),
        created_ms=created_ms,
    )
    stem = _UNSAFE.sub("_", group.name).strip()[:120] or "group"
    return FileOut(write_group(group), "application/json", f"{stem}.json")


def chat_stem(conversation: Conversation) -> str:
    """The chat file's name without its extension (a SillyTavern group's ``chat_id``)."""
    title = conversation.title or "chat"
    return _UNSAFE.sub("_", f"{conversation.character.name} - {title}").strip()[:120]


def _avatars(tenant, messages) -> dict[str | None, str]:
    """Speaker id -> that character's avatar file (``Mira.png``), by its current name."""
    ids = {sid for m in messages if (sid := _speaker_id(m.metadata))}
    rows = Character.objects.filter(tenant=tenant, pk__in=ids).values_list("pk", "name")
    return {str(pk): avatar_file(name) for pk, name in rows} if ids else {}


def _speaker_id(metadata) -> str | None:
    speaker = metadata.get("speaker") if isinstance(metadata, dict) else None
    found = speaker.get("id") if isinstance(speaker, dict) else None
    return found if isinstance(found, str) and _UUID.fullmatch(found) else None


def _speaker_name(metadata) -> str | None:
    speaker = metadata.get("speaker") if isinstance(metadata, dict) else None
    name = speaker.get("name") if isinstance(speaker, dict) else None
    return name if isinstance(name, str) and name else None


def _swipes(rows: list[tuple[str, str]], selected: int) -> dict:
    """A reply's alternatives, the selected one, and each one's scratchpad when any has one."""
    if len(rows) < 2 or not 0 <= selected < len(rows):
        return {}
    reasoning = tuple(r for _, r in rows)
    return {
        "alternatives": tuple(text for text, _ in rows),
        "selected": selected,
        "alternative_reasoning": reasoning if any(reasoning) else (),
    }


def _drawn(slots) -> tuple[str, ...]:
    """The links of a message's drawn pictures (``extra.image`` in SillyTavern's file)."""
    return tuple(
        signing.url_for(s.tenant_id, s.file) for s in slots if s.status == "ready" and s.file
    )
