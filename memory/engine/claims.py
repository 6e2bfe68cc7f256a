"""The prepare/commit memory service's rules (seed 000's external runtime), pure.

``prepare`` takes the rendered character system message and the formal chat (user and
assistant messages) ending with the current user message; it answers a ``claim_id``, the
``memory`` text for this turn, the ``turn`` (the user messages in the chat) and
``state_through_round`` (the rounds memory already holds). ``commit`` hands back the same
claim with the round's user input and assistant text; a repeat of the same commit is
answered the same, a different one is a conflict.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

from memory.errors import MemoryInvalid

MAX_MESSAGES = 500
MAX_TEXT_CHARS = 100_000
CLAIM_TTL_S = 15 * 60  # a prepared claim is committed within this, else 409 claim_expired
ROLES = ("user", "assistant")
SOURCE_IDS = ("request_id", "scene_id", "model_config_id", "prompt_id")


def check_chat(messages: Sequence[dict[str, Any]]) -> list[tuple[str, str]]:
    """The formal chat as ``(role, content)``; a leading system message is left out (it is
    the character's, given apart). Raises 422 ``last_message_not_user`` unless the chat ends
    with the current user message."""
    chat = [(m["role"], m["content"]) for m in messages]
    if chat and chat[0][0] == "system":
        chat = chat[1:]
    for index, (role, _content) in enumerate(chat):
        if role not in ROLES:
            raise MemoryInvalid(
                "invalid_chat",
                f"messages[{index}]: the formal chat holds user and assistant messages only",
                {"field": f"messages[{index}].role"},
            )
    if not chat or chat[-1][0] != "user":
        raise MemoryInvalid(
            "last_message_not_user",
            "the chat must end with the current user message",
            {"field": "messages"},
        )
    return chat


def turn_of(chat: Sequence[tuple[str, str]]) -> int:
    """The turn being prepared: how many user messages the chat holds."""
    return sum(1 for role, _ in chat if role == "user")


def commit_digest(user: str, assistant: str) -> str:
    """What tells a repeated commit from a different one."""
    return hashlib.sha256(f"{user}\x00{assistant}".encode("utf-8", "surrogatepass")).hexdigest()
