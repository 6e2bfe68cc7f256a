"""What a handoff may carry (seed 004), pure: the entries one persona may pass to another,
and the fields a handoff is made of. The services check again on every read: an entry made
private after the handoff was written disappears from it."""

from __future__ import annotations

import re
from typing import Any

from memory.engine.entries import SUPERSEDING_KINDS
from memory.errors import MemoryInvalid

MAX_SUMMARY_CHARS = 2000
MAX_ITEMS = 20
# A persona's id: a character's UUID or another system's id; never free text (it is stored
# unscrubbed, so it must not be able to carry an e-mail address or a key).
PERSONA_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")


def shareable(
    *,
    kind: str,
    scope: str,
    status: str,
    session_id: str,
    share_in_session: bool,
    handoff_session: str,
) -> bool:
    """An active shared preference, or an active entry of the handoff's own conversation that
    was shared with every persona of it. Persona entries and other conversations' never."""
    if status != "active":
        return False
    if scope == "shared":
        return kind in SUPERSEDING_KINDS
    return scope == "session" and share_in_session and session_id == handoff_session


def check_handoff(
    *, from_character_id: str, to_character_id: str, summary: Any, memory_ids: Any
) -> list[str]:
    """The referenced entry ids, deduplicated in order; raises on a bad field."""
    for field, value in (("from_character", from_character_id), ("to_character", to_character_id)):
        if not isinstance(value, str) or not PERSONA_ID.fullmatch(value):
            raise MemoryInvalid(
                "invalid_persona",
                f"{field} is an id: 1-64 of A-Z a-z 0-9 _ . : -, starting with a letter or digit",
                {"field": field},
            )
    if from_character_id == to_character_id:
        raise MemoryInvalid(
            "handoff_to_itself",
            "a handoff goes from one persona to another",
            {"field": "to_character"},
        )
    if not isinstance(summary, str) or len(summary) > MAX_SUMMARY_CHARS:
        raise MemoryInvalid(
            "invalid_summary",
            f"summary is text of at most {MAX_SUMMARY_CHARS} characters",
            {"field": "summary", "max_chars": MAX_SUMMARY_CHARS},
        )
    if not isinstance(memory_ids, list | tuple) or not all(isinstance(i, str) for i in memory_ids):
        raise MemoryInvalid(
            "invalid_memory_ids", "memory_ids is a list of entry ids", {"field": "memory_ids"}
        )
    ids = list(dict.fromkeys(memory_ids))
    if len(ids) > MAX_ITEMS:
        raise MemoryInvalid(
            "too_many_memories",
            f"a handoff references at most {MAX_ITEMS} entries",
            {"field": "memory_ids", "max_items": MAX_ITEMS},
        )
    if not summary.strip() and not ids:
        raise MemoryInvalid(
            "empty_handoff", "a handoff carries a summary or entries", {"field": "summary"}
        )
    return ids


def check_stored_summary(text: str) -> None:
    """The limit holds for the stored (scrubbed) summary too: a placeholder can be longer
    than the secret it replaced."""
    if len(text) > MAX_SUMMARY_CHARS:
        raise MemoryInvalid(
            "invalid_summary",
            f"summary is text of at most {MAX_SUMMARY_CHARS} characters once secrets are "
            "replaced by placeholders",
            {"field": "summary", "max_chars": MAX_SUMMARY_CHARS, "stored_chars": len(text)},
        )


def render(handoffs: list[tuple[str, str, list[str]]]) -> str:
    """The receiving persona's block: per handoff (from persona, summary, entry texts). The
    summary is the player's own account, never the character's experience."""
    lines = [
        "Handed over to you in this conversation (written by the user, not something you lived "
        "through; use it as background):"
    ]
    for from_name, summary, contents in handoffs:
        lines.append(f"- From {from_name}:" + (f" {summary.strip()}" if summary.strip() else ""))
        lines.extend(f"  - {content}" for content in contents)
    return "\n".join(lines)
