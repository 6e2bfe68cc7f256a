"""The local model: planning a request (pure, no model), and smoke tests of the provider with
the bundled gemma-3-270m served by its own process (skipped when llama-cpp-python or the
model package is missing)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from roleplay.llm.errors import ModelCancelled
from roleplay.llm.local_server import PlanError, plan
from roleplay.llm.provider import ModelClient
from roleplay.llm.providers import build_provider
from roleplay.llm.providers.llama_local import (
    LlamaLocalProvider,
    local_model_available,
    model_cache_dir,
)
from roleplay.llm.types import CallRecord, ModelRequest, ProviderConfig, StreamDone, TextDelta

needs_model = pytest.mark.skipif(
    not local_model_available(), reason="llama-cpp-python or the bundled model is not installed"
)

CONFIG = ProviderConfig(
    provider="llama_cpp",
    model="gemma-3-270m",
    context_limit=2048,
    max_output_tokens=24,
    temperature=0.7,
    extra={"seed": 7},
)
MESSAGES = [
    {"role": "system", "content": "A quiet evening at the Copper Kettle tavern."},
    {"role": "user", "content": "Good evening! What is on the menu tonight?"},
    {"role": "assistant", "name": "Alice", "content": ""},
]
MOOD_SCHEMA = {
    "type": "object",
    "properties": {
        "mood": {"type": "string", "enum": ["happy", "sad", "angry"]},
        "intensity": {"type": "integer", "minimum": 1, "maximum": 5},
    },
    "required": ["mood", "intensity"],
    "additionalProperties": False,
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "set_mood",
            "description": "Change the character's mood.",
            "parameters": MOOD_SCHEMA,
        },
    },
    {"name": "wait", "parameters": {"type": "object", "properties": {}}},
]


def test_build_provider_picks_the_local_provider() -> None:
    assert isinstance(build_provider(CONFIG), LlamaLocalProvider)


def test_model_cache_dir_honours_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROLEPLAY_MODEL_CACHE", "/srv/models")
    assert model_cache_dir() == Path("/srv/models")
    monkeypatch.delenv("ROLEPLAY_MODEL_CACHE")
    assert model_cache_dir() == Path.home() / ".cache" / "roleplay" / "models"


def request(**fields: object) -> dict:
    return {"messages": MESSAGES, **fields}


def test_plain_plan_is_a_transcript_that_stops_at_other_speakers() -> None:
    chosen = plan(request())
    assert chosen.mode == "text" and chosen.schema is None
    assert chosen.prompt.endswith("User: Good evening! What is on the menu tonight?\nAlice:")
    assert "\nUser:" in chosen.stop


def test_json_schema_plan_constrains_output() -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "m", "schema": MOOD_SCHEMA}}
    chosen = plan(request(response_format=response_format))
    assert chosen.mode == "json" and chosen.schema == MOOD_SCHEMA
    assert chosen.prompt.endswith("\nAlice:")


def test_tool_plan_offers_each_tool_with_its_arguments() -> None:
    chosen = plan(request(tools=TOOLS))
    assert chosen.mode == "tools"
    assert chosen.schema is not None
    names = [alt["properties"]["name"]["const"] for alt in chosen.schema["anyOf"]]
    assert names == ["set_mood", "wait"]
    assert chosen.schema["anyOf"][0]["properties"]["arguments"] == MOOD_SCHEMA

    only_wait = {"type": "function", "function": {"name": "wait"}}
    forced = plan(request(tools=TOOLS, tool_choice=only_wait))
    assert forced.schema is not None and len(forced.schema["anyOf"]) == 1
    assert plan(request(tools=TOOLS, tool_choice="none")).mode == "text"
    with pytest.raises(PlanError):
        plan(request(tools=TOOLS, tool_choice={"type": "function", "function": {"name": "x"}}))


@pytest.mark.parametrize(
    "body",
    [{}, {"messages": "hi"}, {"messages": [1]}, {"messages": [], "tools": [{"x": 1}]}],
)
def test_malformed_requests_are_refused_before_the_model(body: dict) -> None:
    with pytest.raises(PlanError):
        plan(body)


@needs_model
@pytest.mark.asyncio
async def test_short_completion_from_the_bundled_model() -> None:
    records: list[CallRecord] = []
    client = ModelClient(build_provider(CONFIG), recorder=records.append, purpose="smoke")
    deltas: list[str] = []
    done: StreamDone | None = None
    async for event in client.stream(ModelRequest(MESSAGES)):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        else:
            done = event
    assert done is not None
    result = done.result
    assert result.content.strip()
    assert "".join(deltas) == result.content
    assert "\nUser:" not in result.content
    assert result.usage.input_tokens > 10
    assert 0 < result.usage.output_tokens <= CONFIG.max_output_tokens
    assert result.usage.total_tokens == result.usage.input_tokens + result.usage.output_tokens
    assert [(r.outcome, r.purpose) for r in records] == [("ok", "smoke")]


@needs_model
@pytest.mark.asyncio
async def test_json_schema_output_parses_and_matches() -> None:
    response_format = {"type": "json_schema", "json_schema": {"name": "m", "schema": MOOD_SCHEMA}}
    config = ProviderConfig(
        provider="llama_cpp", model="gemma-3-270m", context_limit=2048, max_output_tokens=64
    )
    result = await build_provider(config).complete(
        ModelRequest(MESSAGES, response_format=response_format)
    )
    data = json.loads(result.content)
    assert set(data) == {"mood", "intensity"}
    assert data["mood"] in {"happy", "sad", "angry"}
    assert isinstance(data["intensity"], int)


@needs_model
@pytest.mark.asyncio
async def test_tool_call_output_names_a_declared_tool() -> None:
    config = ProviderConfig(
        provider="llama_cpp", model="gemma-3-270m", context_limit=2048, max_output_tokens=64
    )
    result = await build_provider(config).complete(
        ModelRequest(
            MESSAGES,
            tools=TOOLS,
            tool_choice={"type": "function", "function": {"name": "set_mood"}},
        )
    )
    assert result.finish_reason == "tool_calls"
    [call] = result.tool_calls
    assert call.name == "set_mood"
    assert call.arguments["mood"] in {"happy", "sad", "angry"}


@needs_model
@pytest.mark.asyncio
async def test_cancel_stops_local_generation() -> None:
    config = ProviderConfig(
        provider="llama_cpp", model="gemma-3-270m", context_limit=2048, max_output_tokens=400
    )
    provider = build_provider(config)
    cancel = asyncio.Event()
    seen: list[str] = []
    with pytest.raises(ModelCancelled):
        async for event in provider.stream(
            ModelRequest(
                [{"role": "user", "content": "Tell me a very long story about a dragon."}]
            ),
            cancel=cancel,
        ):
            assert isinstance(event, TextDelta)
            seen.append(event.text)
            cancel.set()
    assert len(seen) == 1
    # the model is free again: the worker stopped between tokens and released it
    follow_up = await asyncio.wait_for(provider.complete(ModelRequest(MESSAGES, max_tokens=4)), 120)
    assert follow_up.usage.output_tokens <= 4


async def _cached_tokens_of_two_turns(prompt_cache: str) -> list[int]:
    """Two requests whose prompts share a long prefix (one conversation, one more turn)."""
    config = ProviderConfig(
        provider="llama_cpp",
        model="gemma-3-270m",
        context_limit=2048,
        max_output_tokens=4,
        prompt_cache=prompt_cache,
        prompt_cache_mb=64,
        extra={"seed": 7},
    )
    provider = build_provider(config)
    history = [
        {"role": "system", "content": "The Copper Kettle tavern, late. " * 20},
        {"role": "user", "content": "Good evening! What is on the menu tonight?"},
        {"role": "assistant", "name": "Alice", "content": "Stew, bread and cider."},
    ]
    first = await provider.complete(ModelRequest([*history, {"role": "user", "content": "Hi."}]))
    second = await provider.complete(
        ModelRequest([*history, {"role": "user", "content": "Some stew, please."}])
    )
    assert second.usage.input_tokens > 150
    return [first.usage.cached_tokens, second.usage.cached_tokens]


@needs_model
@pytest.mark.asyncio
async def test_the_bundled_model_reports_the_prompt_prefix_it_did_not_process_again() -> None:
    first, second = await _cached_tokens_of_two_turns("auto")
    assert first == 0  # a fresh process: nothing held yet
    assert second > 150  # the shared system message and first exchange


@needs_model
@pytest.mark.asyncio
async def test_the_bundled_model_without_a_prompt_cache_processes_every_prompt_whole() -> None:
    assert await _cached_tokens_of_two_turns("off") == [0, 0]


async def _cached_tokens_after_another_prompt(cache_mb: int) -> int:
    """A conversation's turn, an unrelated long prompt, then the conversation's next turn:
    what the next turn found of its prefix."""
    config = ProviderConfig(
        provider="llama_cpp",
        model="gemma-3-270m",
        context_limit=2048,
        max_output_tokens=2,
        prompt_cache_mb=cache_mb,
        extra={"seed": 7},
    )
    provider = build_provider(config)
    scene = {"role": "system", "content": "The Copper Kettle tavern, late. " * 20}
    await provider.complete(ModelRequest([scene, {"role": "user", "content": "Hi."}]))
    other = {"role": "system", "content": "Summarise the harbour ledger in one line. " * 20}
    await provider.complete(ModelRequest([other, {"role": "user", "content": "Go."}]))
    again = await provider.complete(ModelRequest([scene, {"role": "user", "content": "Ale?"}]))
    return again.usage.cached_tokens


@needs_model
@pytest.mark.asyncio
async def test_the_prompt_cache_brings_a_conversation_back_after_another_prompt() -> None:
    assert await _cached_tokens_after_another_prompt(64) > 120  # the scene, held
    assert await _cached_tokens_after_another_prompt(0) < 10  # the context alone: lost
