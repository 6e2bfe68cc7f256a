"""What Agent V2's models read (seed 002), pure.

- **Actor**: the turn-start state plus the ledger projection, at most ``maxStateChars +
  2000`` characters, as one placed system block. With no state yet, a conservative default
  note instead (never stored).
- **Background** (orchestrator, specialists, director): the character's name, description
  and definition (the specialists and the director also read the opening message); the
  persona, cut to 4,000 characters and labelled as the user's identity; the last 9 non-empty
  user or assistant messages before this turn; the turn-start state compiled within 6,500
  characters; and the current query in a block of its own. It gets no diary or hook
  variables and never this turn's reply; the worldbook entries the turn selected only with
  the scenario's ``backgroundWorldbook`` (at most 4,000 characters; the seed gives none). The
turn's pre-turn memory pack, when it found one, is given to every model of the turn
(seed 003), the background included.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from roleplay.agentic.engine import ledger
from roleplay.scenarios.config import AgenticV2

ACTOR_EXTRA_CHARS = 2000
BACKGROUND_STATE_CHARS = 6500
PERSONA_CHARS = 4000
RECENT_MESSAGES = 9
LORE_CHARS = 4000  # the selected worldbook entries, with ``backgroundWorldbook`` only
RECALLED_CHARS = 4000  # the turn's pre-turn memory pack (``memory.packs``), when it had one
CUT = " …"
DEFAULT_NOTE = (
    "No continuity notes exist for this conversation yet. Continue from the opening and the "
    "visible dialogue only. Do not invent people, secrets or off-screen events the dialogue "
    "has not shown. Keep the user's autonomy: never decide what the user's character says, "
    "does, thinks or feels."
)
NO_TOOL_LINE = (
    "Ordinary continuation needs no specialist: choosing no tool at all is a normal answer."
)


@dataclass(frozen=True)
class Sheet:
    """What the background reads of the character."""

    name: str
    description: str = ""
    definition: str = ""  # personality, scenario and the rest of the card, as one text
    opening: str = ""


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit - len(CUT), 0)] + CUT


def compile_state(state: str | None, entries: Sequence[dict[str, Any]], *, max_chars: int) -> str:
    """The state and its ledger projection as one text of at most ``max_chars``; the state
    comes first and is never dropped for the ledger."""
    text = (state or "").strip()
    if len(text) >= max_chars:
        return _cut(text, max_chars)
    heading = "\n\nSpecialist notes (newest first):\n"
    room = max_chars - len(text) - len(heading)
    projected = ledger.project(entries, max_chars=room) if room > 0 else []
    if not projected:
        return text
    return text + heading + ledger.render(projected)


def actor_block(
    state: str | None, entries: Sequence[dict[str, Any]], *, max_state_chars: int
) -> str:
    """The Actor's continuity block: the compiled state, or the default note."""
    if not (state or "").strip():
        return DEFAULT_NOTE
    return compile_state(state, entries, max_chars=max_state_chars + ACTOR_EXTRA_CHARS)


def recorded_guidance(snapshot: dict[str, Any]) -> str:
    """The turn-start block a planning run's turn showed the Actor (the auto-reply
    guidance): as recorded by runs that stored it, else compiled again from the run's
    recorded inputs and config, as the turn compiled it (:func:`actor_block`)."""
    if "guidance" in snapshot:
        return str(snapshot["guidance"] or "")
    given, config = snapshot.get("inputs"), snapshot.get("config") or {}
    if not isinstance(given, dict):
        return ""
    limit = int(config.get("maxStateChars", AgenticV2.model_fields["maxStateChars"].default))
    return actor_block(given.get("state"), given.get("entries") or [], max_state_chars=limit)


def recent_dialogue(history: Sequence[tuple[str, str]]) -> list[tuple[str, str]]:
    """The last :data:`RECENT_MESSAGES` non-empty user or assistant messages (messages, not
    turns), oldest first."""
    visible = [
        (role, text) for role, text in history if role in ("user", "assistant") and text.strip()
    ]
    return visible[-RECENT_MESSAGES:]


def materials(
    *,
    role: str,
    sheet: Sheet,
    persona_name: str,
    persona_description: str,
    history: Sequence[tuple[str, str]],
    query: str,
    state: str | None,
    entries: Sequence[dict[str, Any]],
    turn: int,
    revision: int,
    lore: Sequence[str] = (),
    recalled: str = "",
    summary: str = "",
) -> str:
    """The background's shared materials for ``role`` (``orchestrator``, ``specialist`` or
    ``director``): one text, in labelled sections."""
    parts = [f"TURN\n{turn} (continuity state revision {revision})"]
    character = [f"Name: {sheet.name}"]
    if sheet.description.strip():
        character.append(f"Description: {sheet.description.strip()}")
    if sheet.definition.strip():
        character.append(f"Definition: {sheet.definition.strip()}")
    if role != "orchestrator" and sheet.opening.strip():
        character.append(f"Opening message: {sheet.opening.strip()}")
    parts.append("CHARACTER\n" + "\n".join(character))
    identity = f"Name: {persona_name}"
    if persona_description.strip():
        identity += f"\nDescription: {_cut(persona_description.strip(), PERSONA_CHARS)}"
    parts.append("USER IDENTITY (who the user is; not a character to play)\n" + identity)
    if recalled.strip():
        parts.append("RECALLED MEMORY\n" + _cut(recalled.strip(), RECALLED_CHARS))
    notes = _cut("\n\n".join(t.strip() for t in lore if t.strip()), LORE_CHARS)
    if notes:
        parts.append("WORLD NOTES (worldbook entries selected for this turn; not events)\n" + notes)
    compiled = compile_state(state, entries, max_chars=BACKGROUND_STATE_CHARS)
    parts.append("CONTINUITY STATE\n" + (compiled or "(none yet)"))
    lines = [
        f"{'User' if r == 'user' else sheet.name}: {text.strip()}"
        for r, text in recent_dialogue(history)
    ]
    if summary.strip():
        parts.append(
            "EARLIER CONVERSATION (a summary of history no longer shown)\n" + summary.strip()
        )
    parts.append("RECENT DIALOGUE\n" + ("\n".join(lines) or "(none)"))
    parts.append("LATEST USER QUERY\n" + query.strip())
    if role == "orchestrator":
        parts.append(NO_TOOL_LINE)
    return "\n\n".join(parts)
