"""Messages reshaped for servers whose chat template takes only some orders of roles. Pure.

The chat templates of many open models (Mistral, Gemma, Llama 2...) raise unless, after
one leading system message, user and assistant take turns starting with the user; some
take no system message at all. A prompt here has system blocks at depth (an author's
note, a worldbook entry), openings before any user message and, after a continue, a
system nudge at the end. SillyTavern calls the fix "prompt post-processing"; the levels:

- ``strict``: the leading system messages become one; a later system message becomes a
  user message (its text kept); consecutive messages of one role are joined with a blank
  line; when the first message after the system one is not the user's, a user message
  :data:`START` comes first.
- ``no_system``: as ``strict``, then the system text opens the first user message.

Messages with tool calls, tool results and content that is not text are kept as they
are and never joined. :func:`refusal_level` reads a server's refusal: the level that
answers it, or None when the refusal is about something else.
"""

from __future__ import annotations

import re
from typing import Any

AS_SENT, STRICT, NO_SYSTEM = "as_sent", "strict", "no_system"
LEVELS = (AS_SENT, STRICT, NO_SYSTEM)
START = "[Start a new chat]"

# The words of chat templates (Hugging Face's Mistral, Gemma, Llama 2, Qwen) and of APIs
# that check the order themselves.
_ORDER_WORDS = re.compile(
    r"roles must alternate|must alternate between|conversation must start with|"
    r"first message must (?:use|be)|must start with a user|"
    r"system message must be at the beginning|expected (?:a )?user message",
    re.IGNORECASE,
)
_SYSTEM_WORDS = re.compile(
    r"system role (?:is )?not supported|only user and assistant roles|"
    r"system messages? (?:are|is) not (?:supported|allowed)",
    re.IGNORECASE,
)


def refusal_level(said: str, current: str) -> str | None:
    """The level a refusal asks for beyond ``current``, or None when it is not about the
    order of roles (or ``current`` already does all it could)."""
    if _SYSTEM_WORDS.search(said):
        wanted = NO_SYSTEM
    elif _ORDER_WORDS.search(said):
        wanted = NO_SYSTEM if current == STRICT else STRICT
    else:
        return None
    return wanted if LEVELS.index(wanted) > LEVELS.index(current) else None


def reshape(messages: list[dict[str, Any]], level: str) -> list[dict[str, Any]]:
    """``messages`` at ``level`` (new dicts; the input is not changed)."""
    if level == AS_SENT:
        return messages
    system: list[str] = []
    rest = list(messages)
    while rest and _is_text(rest[0], "system"):
        system.append(rest.pop(0)["content"])
    shaped: list[dict[str, Any]] = []
    for message in rest:
        if _is_text(message, "system"):
            message = {"role": "user", "content": message["content"]}
        last = shaped[-1] if shaped else None
        if last is not None and _joinable(last, message):
            joined = f"{last['content']}\n\n{message['content']}"
            shaped[-1] = {"role": last["role"], "content": joined}
        else:
            shaped.append(dict(message))
    if not shaped or shaped[0].get("role") != "user":
        shaped.insert(0, {"role": "user", "content": START})
    text = "\n\n".join(part for part in system if part)
    if level == NO_SYSTEM:
        if text and _is_text(shaped[0], "user"):
            shaped[0] = {"role": "user", "content": f"{text}\n\n{shaped[0]['content']}"}
        elif text:
            shaped.insert(0, {"role": "user", "content": text})
        return shaped
    return ([{"role": "system", "content": text}] if text else []) + shaped


def _is_text(message: dict[str, Any], role: str) -> bool:
    return (
        message.get("role") == role
        and isinstance(message.get("content"), str)
        and not message.get("tool_calls")
    )


def _joinable(last: dict[str, Any], message: dict[str, Any]) -> bool:
    role = message.get("role")
    return role in ("user", "assistant") and _is_text(last, role) and _is_text(message, role)
