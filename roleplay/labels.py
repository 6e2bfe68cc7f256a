"""The names people read for the ids the console's pages hold: a conversation's title (else
"Chat with <character>"), with its character and player; a character's name; a message's
first words. Reads only, one query per kind for a page's worth of ids, scoped to the tenant:
an id that names nothing of the tenant's has no label, and the page keeps the raw id in a
"Details" fold.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from dataclasses import dataclass

from django.urls import reverse

from console.scoping import scoped
from memory.models import Message
from roleplay.models import Character, Conversation

SNIPPET_CHARS = 80


@dataclass(frozen=True)
class ConversationLabel:
    id: str
    title: str  # what to call it: its title, else "Chat with <character>"
    character: str
    character_id: str
    player: str
    url: str

    def __str__(self) -> str:
        return self.title


def conversation_title(conversation: Conversation) -> str:
    """The title, or "Chat with <character>" for an untitled conversation."""
    return conversation.title or f"Chat with {conversation.character.name}"


def _uuids(values: Iterable) -> list[uuid.UUID]:
    found = []
    for value in values:
        try:
            found.append(uuid.UUID(str(value)))
        except (TypeError, ValueError):
            continue
    return found


def conversation_labels(tenant, ids: Iterable) -> dict[str, ConversationLabel]:
    """Labels of the tenant's conversations among ``ids`` (conversation ids, the message
    store's session ids), by id as text."""
    rows = scoped(Conversation, tenant).filter(pk__in=_uuids(ids))
    return {
        str(c.pk): ConversationLabel(
            id=str(c.pk),
            title=conversation_title(c),
            character=c.character.name,
            character_id=str(c.character_id),
            player=str(c.player),
            url=reverse("conversation_detail", args=[c.pk]),
        )
        for c in rows.select_related("character", "player")
    }


def character_names(tenant, ids: Iterable) -> dict[str, str]:
    """Names of the tenant's characters (and personas, which are characters too) among
    ``ids``, by id as text."""
    rows = scoped(Character, tenant).filter(pk__in=_uuids(ids)).values_list("pk", "name")
    return {str(pk): name for pk, name in rows}


def message_snippets(tenant, ids: Iterable) -> dict[str, str]:
    """The first words of the tenant's messages among ``ids``, by id as text."""
    rows = scoped(Message, tenant).filter(pk__in=_uuids(ids)).values_list("pk", "content")
    return {str(pk): _snippet(content) for pk, content in rows}


def _snippet(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1].rstrip() + "…"


def name_rows(tenant, rows, *, character: str = "character_id", session: str = "session_id"):
    """``rows`` (objects holding a character id and a conversation's session id) with
    ``character_name`` and ``conversation_label`` set, None when the id names nothing of
    the tenant's (two queries for them all)."""
    rows = list(rows)
    ids = [(str(getattr(r, character, "") or ""), str(getattr(r, session, "") or "")) for r in rows]
    names = character_names(tenant, [c for c, _ in ids])
    conversations = conversation_labels(tenant, [s for _, s in ids])
    for row, (character_id, session_id) in zip(rows, ids, strict=True):
        row.character_name = names.get(character_id)
        row.conversation_label = conversations.get(session_id)
    return rows


def name_evidence(tenant, views: list[dict]) -> list[dict]:
    """Memory evidence views (``memory.views.queue.evidence_view``) with ``conversation``,
    the label of the conversation each quoted message belongs to."""
    found = conversation_labels(tenant, [view["message"].session_id for view in views])
    for view in views:
        view["conversation"] = found.get(view["message"].session_id)
    return views
