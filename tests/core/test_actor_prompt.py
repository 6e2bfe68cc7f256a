"""The Actor prompt fits history to ``context_limit - max_output_tokens - margin``."""

from __future__ import annotations

import pytest

from console.tokens import count_messages
from roleplay.actor import (
    SAFETY_MARGIN_TOKENS,
    CharacterSheet,
    ContextOverflow,
    PlacedBlock,
    build_actor_prompt,
)

SHEET = CharacterSheet(name="Mira", description="Keeper of the lighthouse.", first_message="Hi.")


def _history(n: int) -> list[dict]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i} " + "word " * 40}
        for i in range(n)
    ]


def test_everything_fits_in_a_large_window():
    prompt = build_actor_prompt(
        SHEET,
        _history(6),
        "Now?",
        context_limit=8192,
        max_output_tokens=256,
        count_messages=count_messages,
    )
    roles = [m["role"] for m in prompt.messages]
    assert roles[0] == "system" and "You are Mira" in prompt.messages[0]["content"]
    assert prompt.messages[1] == {"role": "assistant", "content": "Hi.", "name": "Mira"}
    assert prompt.messages[-1]["content"] == "Now?"
    assert prompt.dropped_history == 0
    assert prompt.prompt_tokens == count_messages(prompt.messages)


def test_oldest_whole_messages_are_dropped_first_and_input_kept():
    history = _history(40)
    prompt = build_actor_prompt(
        SHEET,
        history,
        "Now?",
        context_limit=1200,
        max_output_tokens=200,
        count_messages=count_messages,
    )
    assert prompt.dropped_history > 0
    kept = [m["content"] for m in prompt.messages[2:-1]]
    assert kept == [m["content"] for m in history[prompt.dropped_history :]]
    assert prompt.messages[-1]["content"] == "Now?"
    assert count_messages(prompt.messages) <= 1200 - 200 - SAFETY_MARGIN_TOKENS
    assert prompt.prompt_tokens == count_messages(prompt.messages)


def test_overflow_when_even_the_input_cannot_fit():
    with pytest.raises(ContextOverflow) as info:
        build_actor_prompt(
            SHEET,
            [],
            "word " * 2000,
            context_limit=1024,
            max_output_tokens=256,
            count_messages=count_messages,
        )
    assert info.value.code == "context_overflow"


def test_worldbook_blocks_are_placed_by_position():
    blocks = [
        PlacedBlock("BEFORE", "before_character"),
        PlacedBlock("AFTER", "after_character"),
        PlacedBlock("DEPTH1", "at_depth", depth=1, role="system"),
    ]
    history = _history(4)
    prompt = build_actor_prompt(
        SHEET,
        history,
        "Now?",
        context_limit=8192,
        max_output_tokens=256,
        count_messages=count_messages,
        blocks=blocks,
    )
    system = prompt.messages[0]["content"]
    assert system.index("BEFORE") < system.index("You are Mira") < system.index("AFTER")
    contents = [m["content"] for m in prompt.messages]
    # at_depth 1: one message from the end of the history, before the last history message.
    assert contents.index("DEPTH1") == contents.index(history[-1]["content"]) - 1
    assert prompt.prompt_tokens == count_messages(prompt.messages)
