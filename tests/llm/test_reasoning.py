"""A reasoning model's scratchpad is taken off a complete answer, and only a scratchpad."""

from __future__ import annotations

import pytest

from roleplay.llm.openai_compat import OpenAICompatProvider
from roleplay.llm.reasoning import strip_reasoning
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.llm.types import ModelRequest, ProviderConfig


@pytest.mark.parametrize(
    ("content", "answer"),
    [
        ('<think>weigh the options\n[1]</think>\n\n["a", "b", "c"]', '["a", "b", "c"]'),
        ("  <THINKING>x</THINKING> ok", "ok"),
        ("<reasoning>\nstep</reasoning>[Agentic RP State]", "[Agentic RP State]"),
        # the chat template opened the block in the prompt: only the closing tag comes back
        ("first I check the scene</think>\nThe answer.", "The answer."),
        ("no scratchpad", "no scratchpad"),
        ("", ""),
        # a block that never closes (cut short) is left for the caller's checks
        ("<think>cut short", "<think>cut short"),
        # a tag inside the answer is the answer's own
        ("She said <think>aloud</think> and left.", "She said <think>aloud</think> and left."),
        ("<think>a</think><think>b</think>c", "<think>b</think>c"),
    ],
)
def test_strip_reasoning(content: str, answer: str) -> None:
    assert strip_reasoning(content) == answer


@pytest.mark.asyncio
async def test_a_complete_answer_comes_without_its_scratchpad() -> None:
    with ScriptedOpenAIServer() as server:
        server.enqueue(Reply(content="<think>They want three.</think>\n1. Go\n2. Stay\n3. Ask"))
        provider = OpenAICompatProvider(
            ProviderConfig(provider="openai_compatible", model="m", base_url=server.base_url)
        )
        try:
            result = await provider.complete(ModelRequest([{"role": "user", "content": "hi"}]))
        finally:
            await provider.aclose()
    assert result.content == "1. Go\n2. Stay\n3. Ask"
