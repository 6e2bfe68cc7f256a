"""The author's note of a character or a conversation, as stored in their ``author_note``.

SillyTavern users know it: a short text kept in front of the model by inserting it into the
history ``depth`` messages from its end, on every ``frequency``-th player message. A
conversation's note replaces its character's; an empty object means none. Worldbook entries
placed ``author_note_top``/``author_note_bottom`` are merged into it. Pure.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from roleplay.prompting.assembly import AuthorNote

MAX_NOTE_CHARS = 20_000


class AuthorNoteSpec(BaseModel):
    """The stored shape (validated on every write; the API documents this class)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(default="", max_length=MAX_NOTE_CHARS)
    depth: int = Field(default=4, ge=0, le=1000)
    frequency: int = Field(default=1, ge=0, le=1000)
    role: Literal["system", "user", "assistant"] = "system"


def parse_note(data: Any) -> AuthorNoteSpec | None:
    """The note in ``data`` (a stored dict), or None when there is none."""
    if not data:
        return None
    return AuthorNoteSpec.model_validate(data)


def effective_note(conversation_note: Any, character_note: Any) -> AuthorNote | None:
    """The conversation's note when it has content, else the character's."""
    for data in (conversation_note, character_note):
        spec = parse_note(data)
        if spec is not None and spec.content.strip():
            return AuthorNote(spec.content, spec.depth, spec.frequency, spec.role)
    return None
