"""The author's note of a character or a conversation, as stored in their ``author_note``.

SillyTavern users know it: a short text kept in front of the model, on every ``frequency``-th
player message (0: never), at one of three ``position`` values: ``in_chat`` (inserted into
the history ``depth`` messages from its end), ``before_prompt`` or ``after_prompt`` (just
before or after the preset's main prompt; without one, in the chat). A conversation's note
replaces its character's; an empty object means none. Worldbook entries placed
``author_note_top``/``author_note_bottom`` are merged into it. Pure.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from roleplay.prompting.assembly import AuthorNote

MAX_NOTE_CHARS = 20_000


class AuthorNoteSpec(BaseModel):
    """The stored shape (validated on every write; the API documents this class)."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(default="", max_length=MAX_NOTE_CHARS)
    position: Literal["in_chat", "before_prompt", "after_prompt"] = "in_chat"
    depth: int = Field(default=4, ge=0, le=1000)
    frequency: int = Field(default=1, ge=0, le=1000)
    role: Literal["system", "user", "assistant"] = "system"


def parse_note(data: Any) -> AuthorNoteSpec | None:
    """The note in ``data`` (a stored dict), or None when there is none."""
    if not data:
        return None
    return AuthorNoteSpec.model_validate(data)


def note_problems(data: Any) -> list[str]:
    """What is wrong with ``data`` as a stored note (none for ``{}``)."""
    if data is None or data == {}:
        return []
    if not isinstance(data, dict):
        return ["an object {content, position, depth, frequency, role} or {}"]
    try:
        AuthorNoteSpec.model_validate(data, strict=True)
    except ValidationError as exc:
        return [
            f"{'.'.join(str(x) for x in e['loc']) or 'author_note'}: {e['msg']}"
            for e in exc.errors(include_url=False, include_input=False)
        ]
    if "\x00" in data.get("content", ""):
        return ["content: must not contain NUL characters"]
    return []


def normalise_note(fields: dict[str, Any]) -> None:
    """``fields["author_note"]``, when present and valid, as stored: every field filled in,
    or ``{}`` when it has no content (None too). An invalid note is left for the write's
    rules to report with :func:`note_problems`."""
    if "author_note" not in fields:
        return
    data = fields["author_note"]
    if data is None:
        fields["author_note"] = {}
    elif not note_problems(data):
        spec = parse_note(data)
        fields["author_note"] = spec.model_dump() if spec and spec.content.strip() else {}


def effective_note(conversation_note: Any, character_note: Any) -> AuthorNote | None:
    """The conversation's note when it has content, else the character's."""
    for data in (conversation_note, character_note):
        spec = parse_note(data)
        if spec is not None and spec.content.strip():
            return AuthorNote(spec.content, spec.depth, spec.frequency, spec.role, spec.position)
    return None
