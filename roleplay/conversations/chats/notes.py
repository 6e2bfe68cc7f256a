"""A SillyTavern chat's own author's note (its header's ``chat_metadata``) and ours
(``roleplay.prompting.notes``), both ways. Pure.

SillyTavern keeps ``note_prompt`` (the text), ``note_interval`` (every n-th user message;
0 never), ``note_depth``, ``note_position`` (0 after the main prompt, 1 in the chat at the
depth, 2 before the main prompt) and ``note_role`` (0 system, 1 user, 2 assistant).
"""

from __future__ import annotations

from typing import Any

from roleplay.prompting.notes import note_problems

_POSITIONS = {0: "after_prompt", 1: "in_chat", 2: "before_prompt"}
_ROLES = {0: "system", 1: "user", 2: "assistant"}


def note_from_metadata(metadata: Any) -> dict[str, Any] | None:
    """Our note for a chat's ``chat_metadata``; None when it has none, or one we cannot
    keep (a value out of range is left out rather than guessed)."""
    if not isinstance(metadata, dict):
        return None
    content = metadata.get("note_prompt")
    if not isinstance(content, str) or not content.strip():
        return None
    note = {
        "content": content,
        "position": _POSITIONS.get(_int(metadata.get("note_position"), 1), "in_chat"),
        "depth": _int(metadata.get("note_depth"), 4),
        "frequency": _int(metadata.get("note_interval"), 1),
        "role": _ROLES.get(_int(metadata.get("note_role"), 0), "system"),
    }
    return None if note_problems(note) else note


def metadata_from_note(note: Any) -> dict[str, Any]:
    """The ``chat_metadata`` of a conversation's own note (empty when it has none)."""
    if not isinstance(note, dict) or not str(note.get("content") or "").strip():
        return {}
    positions = {name: number for number, name in _POSITIONS.items()}
    roles = {name: number for number, name in _ROLES.items()}
    return {
        "note_prompt": note["content"],
        "note_interval": note.get("frequency", 1),
        "note_position": positions.get(note.get("position", "in_chat"), 1),
        "note_depth": note.get("depth", 4),
        "note_role": roles.get(note.get("role", "system"), 0),
    }


def _int(value: Any, default: int) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return default
