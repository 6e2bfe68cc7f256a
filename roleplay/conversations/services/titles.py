"""A conversation's title from its first exchange, so lists and the chat page show what each
conversation is about instead of "(untitled)".

No model is asked: the title is the player's first message, or the character's first reply
when that message is too short to tell conversations apart ("Hi"), with the Markdown marks
taken out and cut at a word to :data:`TITLE_CHARS` characters. It is given once, to a
conversation without a title, as a compare-and-set: a title a person sets meanwhile wins.
"""

from __future__ import annotations

import re

from memory.models import Message
from roleplay.models import Conversation

TITLE_CHARS = 60
# A first message shorter than this ("Hi", "Hello!") says little: the reply says more.
MIN_MESSAGE_CHARS = 12
MARKS = re.compile(r"[*_`~#>]+|^\s*[-+]\s+|\[|\]\([^)]*\)", re.MULTILINE)


def title_from(text: str) -> str:
    """``text`` as a one-line title: Markdown marks dropped, white space folded, at most
    :data:`TITLE_CHARS` characters, cut at a word and ended with "…" when shortened."""
    line = " ".join(MARKS.sub("", text).split())
    if len(line) <= TITLE_CHARS:
        return line
    cut = line[:TITLE_CHARS].rsplit(" ", 1)[0] if " " in line[:TITLE_CHARS] else line[:TITLE_CHARS]
    return cut.rstrip(" ,;:-–—") + "…"


def _first_exchange(conversation: Conversation) -> tuple[str, str]:
    """(the player's first message, the first reply) of the conversation, "" when missing."""
    rows = Message.objects.filter(
        tenant=conversation.tenant, session_id=conversation.session_id, archived=False
    ).order_by("ts")
    first = {role: "" for role in ("user", "assistant")}
    for role in first:
        found = rows.filter(role=role).values_list("content", flat=True).first()
        first[role] = title_from(found or "")
    return first["user"], first["assistant"]


def give_title(conversation: Conversation) -> str | None:
    """Title an untitled conversation from its first exchange; the title given, or None when
    it has one already (or nothing to take it from)."""
    if conversation.title:
        return None
    asked, answered = _first_exchange(conversation)
    title = asked if len(asked) >= MIN_MESSAGE_CHARS or not answered else answered
    if not title:
        return None
    given = Conversation.objects.filter(pk=conversation.pk, title="").update(title=title)
    if not given:
        return None
    conversation.title = title
    return title
