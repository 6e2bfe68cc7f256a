"""The speaking character's view of its group, for the Actor prompt: the other members'
names and short descriptions, all cards joined into one (SillyTavern's ``join`` mode; the
default ``swap`` uses the speaker's card alone), and history lines that name who spoke."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

SHORT_DESCRIPTION = 200
MEMBERS_HEADING = "[Other characters in this conversation]"
# SillyTavern's group nudge: the reply is one member's, not the whole scene's.
NUDGE = "[Write the next reply only as {name}.]"


@dataclass(frozen=True)
class Sheet:
    """A member's card fields the group's prompt reads."""

    id: str
    name: str
    description: str = ""
    personality: str = ""
    scenario: str = ""


def short(text: str, limit: int = SHORT_DESCRIPTION) -> str:
    """The first paragraph of ``text``, cut at a word within ``limit`` characters."""
    first = (text or "").strip().split("\n\n", 1)[0].strip()
    first = " ".join(first.split())
    if len(first) <= limit:
        return first
    cut = first[:limit].rsplit(" ", 1)[0] or first[:limit]
    return cut.rstrip(",;:. ") + "…"


def members_block(speaker_id: str, sheets: Sequence[Sheet]) -> str:
    """The other members, one line each (``- Name: short description``); empty when the
    speaker is alone."""
    lines = []
    for sheet in sheets:
        if sheet.id == speaker_id:
            continue
        described = short(sheet.description)
        lines.append(f"- {sheet.name}: {described}" if described else f"- {sheet.name}")
    return "\n".join([MEMBERS_HEADING, *lines]) if lines else ""


def nudge(name: str) -> str:
    return NUDGE.format(name=name)


def joined(sheets: Sequence[Sheet], field: str) -> str:
    """One card field of every member, each under its name (``join`` mode); members whose
    field is empty are left out."""
    parts = [
        f"{sheet.name}: {value.strip()}"
        for sheet in sheets
        if (value := getattr(sheet, field) or "").strip()
    ]
    return "\n".join(parts)


def named(
    role: str, content: str, speaker: str | None, current: str, names: Mapping[str, str]
) -> str:
    """A history line as the speaking character reads it: another member's reply starts
    with that member's name; the speaker's own replies and the player's lines stay as
    they are."""
    if role != "assistant" or speaker is None or speaker == current:
        return content
    name = names.get(speaker)
    return f"{name}: {content}" if name else content
