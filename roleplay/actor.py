"""The Actor prompt: character definition, opening, fitted history, then the player's input.

Pure: takes plain data and a token counter, returns chat messages. The history budget is
``context_limit - max_output_tokens - safety margin``; the oldest whole messages go first and
the current input is never dropped. Worldbook blocks are placed by position around the
character definition (``before_character`` / ``after_character``) and inside the history
(``at_depth``: that many messages from the end).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

MessageCounter = Callable[[Sequence[dict]], int]
"""Tokens a list of chat messages costs, additively per message (``console.tokens``)."""

SAFETY_MARGIN_TOKENS = 64


class ContextOverflow(Exception):
    code = "context_overflow"


@dataclass
class CharacterSheet:
    name: str
    description: str = ""
    first_message: str = ""
    example_dialogues: str = ""


@dataclass
class PlacedBlock:
    content: str
    position: str = "before_character"
    depth: int = 0
    role: str = "system"


@dataclass
class ActorPrompt:
    messages: list[dict]
    dropped_history: int
    prompt_tokens: int
    budget: int
    notes: list[str] = field(default_factory=list)


def _system_text(sheet: CharacterSheet, blocks: list[PlacedBlock]) -> str:
    before = [b.content for b in blocks if b.position == "before_character"]
    after = [b.content for b in blocks if b.position == "after_character"]
    parts: list[str] = []
    if before:
        parts.append("\n\n".join(before))
    definition = f"You are {sheet.name}, in a roleplay with the user. Stay in character."
    if sheet.description.strip():
        definition += f"\n\n{sheet.description.strip()}"
    parts.append(definition)
    if after:
        parts.append("\n\n".join(after))
    if sheet.example_dialogues.strip():
        parts.append(f"Example dialogue:\n{sheet.example_dialogues.strip()}")
    return "\n\n".join(parts)


def _insert_depth_blocks(history: list[dict], blocks: list[PlacedBlock]) -> list[dict]:
    out = list(history)
    depth_blocks = sorted(
        (b for b in blocks if b.position == "at_depth"), key=lambda b: b.depth, reverse=True
    )
    for block in depth_blocks:
        index = max(len(out) - block.depth, 0)
        out.insert(index, {"role": block.role, "content": block.content})
    return out


def build_actor_prompt(
    sheet: CharacterSheet,
    history: list[dict],
    user_input: str | None,
    *,
    context_limit: int,
    max_output_tokens: int,
    count_messages: MessageCounter,
    user_name: str = "User",
    blocks: list[PlacedBlock] | None = None,
    continuing: str | None = None,
) -> ActorPrompt:
    """Chat messages for the Actor; raises ContextOverflow if even the minimum cannot fit.

    ``user_input`` None: no new input (a continue, or rewriting the opening reply);
    ``continuing``: the reply the model goes on from, as the last message."""
    blocks = blocks or []
    budget = context_limit - max_output_tokens - SAFETY_MARGIN_TOKENS
    head = [{"role": "system", "content": _system_text(sheet, blocks)}]
    if sheet.first_message.strip():
        head.append({"role": "assistant", "content": sheet.first_message, "name": sheet.name})
    tail = []
    if user_input is not None:
        tail.append({"role": "user", "content": user_input, "name": user_name})
    if continuing is not None:
        tail.append({"role": "assistant", "content": continuing, "name": sheet.name})
    named = [
        {**m, "name": sheet.name if m["role"] == "assistant" else user_name}
        if m["role"] in ("user", "assistant")
        else dict(m)
        for m in history
    ]
    # count_messages is additive per message, so cost each message once and drop from the
    # front until the rest fits.
    fixed = count_messages(head + tail) + sum(
        count_messages([{"role": b.role, "content": b.content}]) - 3
        for b in blocks
        if b.position == "at_depth"
    )
    costs = [count_messages([m]) - 3 for m in named]
    total = fixed + sum(costs)
    dropped = 0
    while total > budget and dropped < len(named):
        total -= costs[dropped]
        dropped += 1
    if total > budget:
        raise ContextOverflow(
            f"the prompt needs {total} tokens but the budget is {budget} "
            f"(context_limit {context_limit} - max_output_tokens {max_output_tokens} "
            f"- margin {SAFETY_MARGIN_TOKENS})"
        )
    messages = head + _insert_depth_blocks(named[dropped:], blocks) + tail
    return ActorPrompt(messages, dropped, total, budget)
