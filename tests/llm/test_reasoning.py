"""A reasoning model's scratchpad is taken off a complete answer, and only a scratchpad;
what is taken off is kept as the reply's reasoning."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roleplay.llm.providers.openai_compat import OpenAICompatProvider
from roleplay.llm.reasoning import StreamFilter, split_reasoning, strip_reasoning, with_reasoning
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.llm.types import ModelRequest, ProviderConfig, StreamDone, TextDelta


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


@pytest.mark.parametrize(
    ("content", "reasoning"),
    [
        ("<think>\n weigh the options \n</think>\n\nAnswer.", "weigh the options"),
        ("first I check the scene</think>\nThe answer.", "first I check the scene"),
        ("<think>a</think><think>b</think>c", "a"),
        ("no scratchpad", ""),
        ("<think>cut short", ""),
        ("She said <think>aloud</think>.", ""),
    ],
)
def test_split_reasoning_keeps_what_it_takes_off(content: str, reasoning: str) -> None:
    assert split_reasoning(content) == (reasoning, strip_reasoning(content))


def test_a_preset_that_sends_reasoning_back_puts_the_block_first() -> None:
    assert with_reasoning("Sit.", "she is tired") == "<think>\nshe is tired\n</think>\nSit."
    assert with_reasoning("Sit.", "") == "Sit."


def _streamed(pieces: list[str]) -> tuple[str, str]:
    scratch = StreamFilter()
    answer = "".join(scratch.feed(piece) for piece in pieces) + scratch.finish()
    return scratch.reasoning, answer


_WORDS = st.sampled_from(
    ["<think>", "</think>", "<THINKING>", "</thinking>", "<reasoning>", "</reasoning>",
     "<thi", "nk>", "</", "<b>", " ", "\n", "plan", "Yes."]
)  # fmt: skip


@given(st.lists(_WORDS, max_size=12).map("".join), st.data())
def test_any_split_of_the_stream_gives_what_the_whole_gives(content: str, data) -> None:
    """Cut anywhere, the stream keeps the same reasoning and answer; and a stream that
    opens with a block agrees with the complete answer's split."""
    cuts = sorted(data.draw(st.lists(st.integers(0, len(content)), max_size=6)))
    pieces = [content[i:j] for i, j in zip([0, *cuts], [*cuts, len(content)], strict=True)]
    whole = _streamed([content])
    assert _streamed(pieces) == whole
    if content.lstrip().lower().startswith(("<think>", "<thinking>", "<reasoning>")):
        reasoning, answer = split_reasoning(content)
        if reasoning or answer != content:  # a block that closes
            assert whole == (reasoning, answer)


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
    assert result.reasoning == "They want three."


STREAMED = [
    ("<think>plan the scene</think>\n\nThe door creaks.", "The door creaks."),
    ("  <Thinking>a</thinking>  B", "B"),
    ("The door creaks.", "The door creaks."),
    ("<b>bold</b> and <think>aside</think>", "<b>bold</b> and <think>aside</think>"),
    ("<table> rows", "<table> rows"),
    ("<think>cut short", "<think>cut short"),
    ("   ", "   "),
    ("<think>only a scratchpad</think>", ""),
]


@pytest.mark.parametrize(("content", "answer"), STREAMED)
def test_stream_filter_whatever_the_pieces(content: str, answer: str) -> None:
    """Every way of cutting the stream in two or three gives the same answer."""
    cuts = [(i, j) for i in range(len(content) + 1) for j in range(i, len(content) + 1)]
    for i, j in cuts:
        scratch = StreamFilter()
        pieces = [content[:i], content[i:j], content[j:]]
        out = "".join(scratch.feed(piece) for piece in pieces) + scratch.finish()
        assert out == answer, (i, j)


def test_a_passing_stream_costs_nothing_more() -> None:
    scratch = StreamFilter()
    assert scratch.feed("Hi") == "Hi" and scratch.passing
    assert scratch.feed("<think>") == "<think>"


@pytest.mark.asyncio
@pytest.mark.parametrize("chunks", [1, 3, 40])
async def test_a_streamed_reply_comes_without_its_scratchpad(chunks: int) -> None:
    content = "<think>She is wary; keep it short.</think>\n\nThe lantern gutters. *She waits.*"
    with ScriptedOpenAIServer() as server:
        server.enqueue(Reply(content=content, chunks=chunks))
        provider = OpenAICompatProvider(
            ProviderConfig(provider="openai_compatible", model="m", base_url=server.base_url)
        )
        try:
            events = [
                event
                async for event in provider.stream(
                    ModelRequest([{"role": "user", "content": "hi"}])
                )
            ]
        finally:
            await provider.aclose()
    deltas = [event.text for event in events if isinstance(event, TextDelta)]
    done = events[-1]
    assert isinstance(done, StreamDone)
    assert "".join(deltas) == done.result.content == "The lantern gutters. *She waits.*"
    assert all(deltas)
    assert done.result.reasoning == "She is wary; keep it short."


@pytest.mark.asyncio
@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
@pytest.mark.parametrize("streamed", [True, False])
async def test_reasoning_a_server_sends_apart_is_kept(field: str, streamed: bool) -> None:
    with ScriptedOpenAIServer() as server:
        server.enqueue(
            Reply(content="Sit. Rest.", reasoning="She is tired.", reasoning_field=field)
        )
        provider = OpenAICompatProvider(
            ProviderConfig(provider="openai_compatible", model="m", base_url=server.base_url)
        )
        request = ModelRequest([{"role": "user", "content": "hi"}])
        try:
            if streamed:
                events = [event async for event in provider.stream(request)]
                done = events[-1]
                assert isinstance(done, StreamDone)
                result = done.result
                assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "Sit. Rest."
            else:
                result = await provider.complete(request)
        finally:
            await provider.aclose()
    assert (result.reasoning, result.content) == ("She is tired.", "Sit. Rest.")


def test_the_reasoning_so_far_is_the_open_block_until_it_closes():
    scratchpad = StreamFilter()
    assert scratchpad.feed("  <think>Be br") == "" and scratchpad.so_far == "Be br"
    assert scratchpad.feed("ief; she is") == "" and scratchpad.so_far == "Be brief; she is"
    assert scratchpad.feed(" tired.</think>\n\nSit.") == "Sit."
    assert scratchpad.so_far == scratchpad.reasoning == "Be brief; she is tired."
    plain = StreamFilter()
    assert plain.feed("Hello there.") == "Hello there." and plain.so_far == ""
