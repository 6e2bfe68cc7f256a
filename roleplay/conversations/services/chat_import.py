"""A chat file from another tool becomes a new conversation (``roleplay.conversations.chats.read``).

In one transaction: the conversation is started (the same service, so the same rules on
player, character, persona and scenario), then every message is written with its
alternatives, in the file's order, and the messages are sent to the recall index once the
transaction commits. Nothing is written when the file is refused.

- **The opening.** A file's first reply before any user message is usually the character's
  greeting. When its text is one of the character's openings (with ``{{char}}`` and
  ``{{user}}`` filled the way the file names them), the conversation takes that opening
  (``greeting_index``) instead of storing it twice; otherwise it is kept as a message, the
  conversation has no opening of its own (``greeting_index`` null, so the history starts
  as the file does) and the report says ``opening: "stored"``.
- **The author's note** a SillyTavern chat keeps in its header (``chat_metadata``) becomes
  the conversation's own note (``roleplay.conversations.chats.notes``).
- **Times.** A message keeps the file's send time; each ``ts`` is at least one more than
  the one before (the store's rule), and messages without a time follow the one before.
  A file without times, or with times that would run past now, is placed just before now.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from memory.models import Message, MessageAlternative, MessageStatus
from memory.services import capped_reasoning
from roleplay.characters.selectors import greeting_choices
from roleplay.conversations.chats.names import fill_names
from roleplay.conversations.chats.notes import note_from_metadata
from roleplay.conversations.chats.read import ChatFile, ChatMessage, read_chat
from roleplay.conversations.services.conversations import start_conversation, update_conversation
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for
from roleplay.turns.records import index_on_commit


@dataclass(frozen=True)
class ImportedChat:
    conversation: Conversation
    report: dict


def import_chat(
    tenant,
    data: bytes,
    *,
    character,
    player,
    persona=None,
    scenario=None,
    title: str = "",
    file_name: str = "",
) -> ImportedChat:
    """``title`` empty: the file's name without its extension."""
    chat = read_chat(data)
    with transaction.atomic():
        note = note_from_metadata(chat.metadata)
        conversation = start_conversation(
            tenant,
            character=character,
            player=player,
            persona=persona,
            scenario=scenario,
            title=title or title_of(file_name),
            author_note=note,
        )
        messages = list(chat.messages)
        opening = opening_of(chat, conversation)
        # The file's own first message stands: no opening of the character's before it.
        conversation = update_conversation(conversation, greeting_index=opening)
        if opening is not None:
            messages = messages[1:]
        ids = write_messages(tenant, conversation, messages)
        index_on_commit(conversation.pk, ids)
    report = chat.report()
    report["stored_messages"] = len(ids)
    report["opening"] = "greeting" if opening is not None else "stored"
    report["author_note"] = note is not None
    if opening is not None:
        report["greeting_index"] = opening
    return ImportedChat(conversation, report)


def title_of(file_name: str) -> str:
    """A conversation's title from its file's name: the name without folder or extension."""
    stem = file_name.rsplit("/", 1)[-1].rsplit(".", 1)[0].strip()
    return stem[:200] if stem and stem != "upload" else "Imported chat"


def opening_of(chat: ChatFile, conversation: Conversation, character: str = "") -> int | None:
    """The character's opening the file's first reply is, if it comes before any user
    message; None otherwise. ``character``: the name the file gives the character, when
    its header does not (a SillyTavern group chat's says ``unused``)."""
    first = chat.messages[0]
    if first.role != "assistant":
        return None
    user = _named(chat.user_name) or persona_for(conversation).name
    character = character or _named(chat.character_name) or conversation.character.name
    wanted = _plain(first.content)
    for index, text in greeting_choices(conversation.character):
        if _plain(fill_names(text, character=character, user=user)) == wanted:
            return index
    return None


def _named(name: str) -> str:
    return "" if name == "unused" else name


def _plain(text: str) -> str:
    return " ".join(text.split())


def write_messages(
    tenant, conversation: Conversation, messages: list[ChatMessage], speakers=None
) -> list[str]:
    """Write the messages and their alternatives in two statements; their ids.
    ``speakers``: each message's ``metadata.speaker`` (a group's reply), or None."""
    now = timezone.now()
    rows, alternatives = [], []
    speakers = speakers or [None] * len(messages)
    for message, ts, speaker in zip(messages, _timestamps(messages), speakers, strict=True):
        row = Message(
            tenant=tenant,
            id=uuid.uuid4(),
            session_id=conversation.session_id,
            role=message.role,
            content=message.content,
            reasoning=capped_reasoning(message.reasoning),
            status=MessageStatus.COMPLETE,
            metadata={
                "imported": True,
                **({"name": message.name} if message.name else {}),
                **({"speaker": speaker} if speaker else {}),
            },
            ts=ts,
            selected_alternative=message.selected,
            created_at=now,
        )
        rows.append(row)
        alternatives += [
            MessageAlternative(
                tenant=tenant, message=row, index=index, content=text,
                reasoning=_alternative_reasoning(message, index, row.reasoning),
            )
            for index, text in enumerate(message.alternatives)
        ]  # fmt: skip
    Message.objects.bulk_create(rows, batch_size=1000)
    MessageAlternative.objects.bulk_create(alternatives, batch_size=1000)
    return [str(row.pk) for row in rows]


def _alternative_reasoning(message: ChatMessage, index: int, selected_reasoning: str) -> str:
    """The selected alternative's scratchpad is the message's (``extra.reasoning``); the
    others' are their own when the file gives them (``swipe_info``)."""
    if index == message.selected:
        return selected_reasoning
    own = message.alternative_reasoning
    return capped_reasoning(own[index]) if own else ""


def _timestamps(messages: list[ChatMessage]) -> list[int]:
    """Strictly increasing ``ts``: the file's times where it gives them, unless they would
    run past now (a clock that was wrong), then none of them."""
    now = int(time.time() * 1000)
    placed = _placed(messages, now, with_times=True)
    return placed if not placed or placed[-1] <= now else _placed(messages, now, with_times=False)


def _placed(messages: list[ChatMessage], now: int, *, with_times: bool) -> list[int]:
    out: list[int] = []
    previous = now - len(messages) - 1
    for message in messages:
        sent = message.sent_ms if with_times else None
        wanted = sent if sent is not None else previous + 1
        previous = wanted if not out else max(wanted, previous + 1)
        out.append(previous)
    return out
