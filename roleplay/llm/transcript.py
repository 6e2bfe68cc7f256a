"""Chat messages rendered as a plain transcript, for base (not instruction-tuned) models.

A base model continues text; it has never seen chat templates. Shown a scene description
followed by ``Name: line`` turns and ending with ``Alice:``, it writes Alice's next line,
and we stop it when it starts someone else's turn (``\\nUser:``). This is how the bundled
gemma-3-270m is driven.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DEFAULT_USER = "User"
DEFAULT_CHARACTER = "Character"
TOOL_SPEAKER = "Tool"


@dataclass(frozen=True)
class Transcript:
    """The prompt text, the speaker it ends on, and where generation must stop."""

    prompt: str
    speaker: str
    stop: list[str]


def message_text(content: Any) -> str:
    """Plain text of a message's content: a string, or OpenAI-style content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        texts = []
        for part in content:
            if isinstance(part, Mapping) and part.get("type") == "text":
                texts.append(str(part.get("text") or ""))
            elif isinstance(part, str):
                texts.append(part)
        return "".join(texts)
    return str(content)


def _speaker(message: Mapping[str, Any], user_name: str, character_name: str) -> str:
    name = message.get("name")
    if isinstance(name, str) and name.strip():
        return _clean_name(name)
    role = message.get("role")
    if role == "assistant":
        return character_name
    if role == "tool":
        return TOOL_SPEAKER
    return user_name


def _clean_name(name: str) -> str:
    """A speaker name fit for a ``Name:`` prefix: one line, no colon."""
    return " ".join(name.replace(":", " ").split()) or DEFAULT_USER


def render_transcript(
    messages: Sequence[Mapping[str, Any]],
    *,
    character_name: str | None = None,
    user_name: str = DEFAULT_USER,
    continue_last: bool = False,
) -> Transcript:
    """Render ``messages`` as ``system text``, blank line, ``Name: text`` lines, ``<Char>:``.

    ``continue_last``: the last message is a reply to go on from, so the transcript ends
    with its open line (``Name: text``, no newline) and the model extends it.

    The speaker to continue is ``character_name`` if given, else the ``name`` of the last
    assistant message, else "Character". System messages are narration: leading ones form
    the header, later ones appear in place as bracketed lines. Stop sequences cover every
    other speaker seen (and "User"), plus the character itself starting a second turn.
    """
    user_name = _clean_name(user_name)
    if character_name is None:
        character_name = DEFAULT_CHARACTER
        for message in messages:
            if message.get("role") == "assistant" and isinstance(message.get("name"), str):
                if message["name"].strip():
                    character_name = message["name"]
    speaker = _clean_name(character_name)

    header: list[str] = []
    lines: list[str] = []
    speakers = {user_name}
    opened: str | None = None
    if continue_last and messages and messages[-1].get("role") == "assistant":
        last = messages[-1]
        opened = f"{_speaker(last, user_name, speaker)}: {message_text(last.get('content'))}"
        messages = messages[:-1]
    for message in messages:
        text = message_text(message.get("content")).strip()
        if not text:
            continue
        if message.get("role") == "system":
            if lines:
                lines.append(f"[{text}]")
            else:
                header.append(text)
            continue
        name = _speaker(message, user_name, speaker)
        speakers.add(name)
        lines.append(f"{name}: {text}")
    lines.append(opened if opened is not None else f"{speaker}:")

    prompt = "\n".join(lines)
    if header:
        prompt = "\n\n".join(header) + "\n\n" + prompt
    stop = sorted({f"\n{name}:" for name in speakers | {speaker}})
    return Transcript(prompt=prompt, speaker=speaker, stop=stop)
