"""Messages reshaped for chat templates that take only some orders of roles, and a server
that refuses the order getting the reshaped prompt from then on."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from roleplay.llm.errors import ModelBadRequest
from roleplay.llm.provider import ModelClient
from roleplay.llm.providers import build_provider
from roleplay.llm.roles import NO_SYSTEM, START, STRICT, refusal_level, reshape
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.llm.types import ModelRequest, ProviderConfig

PROMPT = [
    {"role": "system", "content": "You are Mira."},
    {"role": "system", "content": "Greyport is a harbour."},
    {"role": "assistant", "content": "Welcome."},
    {"role": "user", "content": "Hi."},
    {"role": "system", "content": "[Author's note: keep it short]"},
    {"role": "user", "content": "Is the lamp lit?"},
    {"role": "assistant", "content": "It is."},
]


def test_strict_keeps_one_system_message_and_alternates():
    assert reshape(PROMPT, STRICT) == [
        {"role": "system", "content": "You are Mira.\n\nGreyport is a harbour."},
        {"role": "user", "content": START},
        {"role": "assistant", "content": "Welcome."},
        {"role": "user", "content": "Hi.\n\n[Author's note: keep it short]\n\nIs the lamp lit?"},
        {"role": "assistant", "content": "It is."},
    ]


def test_no_system_opens_the_first_user_message_with_the_system_text():
    shaped = reshape(PROMPT, NO_SYSTEM)
    assert shaped[0] == {
        "role": "user",
        "content": f"You are Mira.\n\nGreyport is a harbour.\n\n{START}",
    }
    assert [m["role"] for m in shaped] == ["user", "assistant", "user", "assistant"]


def test_tool_calls_and_results_are_kept_as_they_are():
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "c", "type": "function",
            "function": {"name": "f", "arguments": "{}"}}]}  # fmt: skip
    result = {"role": "tool", "tool_call_id": "c", "content": "done"}
    messages = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}, call, result]
    assert reshape(messages, STRICT) == messages
    assert PROMPT[2] == {"role": "assistant", "content": "Welcome."}  # the input is unchanged


@pytest.mark.parametrize(
    ("said", "current", "level"),
    [
        ("Conversation roles must alternate user/assistant/user/assistant/...", "as_sent", STRICT),
        ("After the optional system message, conversation roles must alternate user/assis"
         "tant/user/assistant/...", "strict", NO_SYSTEM),
        ("System role not supported", "as_sent", NO_SYSTEM),
        ("Only user and assistant roles are supported!", "strict", NO_SYSTEM),
        ("System message must be at the beginning.", "as_sent", STRICT),
        ("Conversation roles must alternate", "no_system", None),
        ("maximum context length is 4096 tokens", "as_sent", None),
    ],
)  # fmt: skip
def test_refusals_are_read(said, current, level):
    assert refusal_level(said, current) == level


roles = st.sampled_from(["system", "user", "assistant"])
texts = st.text(min_size=0, max_size=5)


@given(st.lists(st.fixed_dictionaries({"role": roles, "content": texts}), max_size=12))
def test_every_prompt_alternates_after_reshaping(messages):
    for level in (STRICT, NO_SYSTEM):
        shaped = reshape(messages, level)
        body = shaped[1:] if shaped and shaped[0]["role"] == "system" else shaped
        assert all(m["role"] != "system" for m in body)
        assert [m["role"] for m in body] == ["user", "assistant"] * (len(body) // 2) + (
            ["user"] if len(body) % 2 else []
        )
        if level == NO_SYSTEM:
            assert shaped[0]["role"] == "user"


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


def strict_template(request: dict) -> Reply:
    """A server whose chat template raises unless the roles alternate (vLLM's 400)."""
    order = [m["role"] for m in request["messages"] if m["role"] != "system"]
    if request["messages"][1:] and any(m["role"] == "system" for m in request["messages"][1:]):
        return Reply(status=400, error_body={"object": "error", "message": "Conversation "
                     "roles must alternate user/assistant/user/assistant/..."})  # fmt: skip
    if order[0] != "user" or any(a == b for a, b in zip(order, order[1:], strict=False)):
        return Reply(status=400, error_body={"object": "error", "message": "Conversation "
                     "roles must alternate user/assistant/user/assistant/..."})  # fmt: skip
    return Reply(content="Yes, it is lit.")


def client(server, role_order="auto") -> ModelClient:
    config = ProviderConfig(
        provider="openai_compatible",
        model="m",
        base_url=server.base_url,
        timeout_ms=5000,
        role_order=role_order,
    )
    return ModelClient(build_provider(config), retry_base_delay=0.001)


@pytest.mark.asyncio
async def test_a_server_that_refuses_the_order_gets_it_reshaped_from_then_on(server):
    server.default = Reply.from_callable(strict_template)
    model = client(server)
    first = await model.complete(ModelRequest(PROMPT))
    assert first.content == "Yes, it is lit."
    assert len(server.requests) == 2  # refused once, then reshaped
    second = await model.complete(ModelRequest(PROMPT))
    assert second.content == "Yes, it is lit." and len(server.requests) == 3
    assert server.requests[-1]["messages"] == reshape(PROMPT, STRICT)


@pytest.mark.asyncio
async def test_a_configured_order_is_sent_from_the_first_request(server):
    server.default = Reply(content="ok")
    await client(server, "no_system").complete(ModelRequest(PROMPT))
    assert server.requests[0]["messages"] == reshape(PROMPT, NO_SYSTEM)


@pytest.mark.asyncio
async def test_a_refusal_about_something_else_is_not_retried(server):
    server.default = Reply(status=400, error_body={"error": {"message": "bad seed"}})
    with pytest.raises(ModelBadRequest):
        await client(server).complete(ModelRequest(PROMPT))
    assert len(server.requests) == 1


def llama_cpp_python(request: dict) -> Reply:
    """llama.cpp's Python server with a strict template: a stream it cannot start is an
    empty 200; without streaming the template's refusal is a 500."""
    refused = strict_template(request)
    if refused.status == 200:
        return refused
    if request.get("stream"):
        return Reply(empty_stream=True)
    return refused


@pytest.mark.asyncio
async def test_an_empty_stream_is_asked_again_without_streaming(server):
    server.default = Reply.from_callable(llama_cpp_python)
    model = client(server)
    events = [event async for event in model.stream(ModelRequest(PROMPT))]
    assert events[-1].result.content == "Yes, it is lit."
    assert [r.get("stream", False) for r in server.requests] == [True, False, False]
    assert server.requests[-1]["messages"] == reshape(PROMPT, STRICT)
    events = [event async for event in model.stream(ModelRequest(PROMPT))]
    assert events[-1].result.content == "Yes, it is lit."
    assert server.requests[-1]["stream"] is True  # reshaped from then on, and streamed
    assert len(server.requests) == 4


@pytest.mark.asyncio
async def test_an_empty_stream_over_the_window_is_the_window_s_error(server):
    from roleplay.llm.errors import ModelContextExceeded

    def answer(request: dict) -> Reply:
        if request.get("stream"):
            return Reply(empty_stream=True)
        message = "This model's maximum context length is 4096 tokens."
        error = {"message": message, "code": "context_length_exceeded"}
        return Reply(status=400, error_body={"error": error})

    server.default = Reply.from_callable(answer)
    with pytest.raises(ModelContextExceeded):
        async for _ in client(server).stream(ModelRequest(PROMPT)):
            pass
    assert len(server.requests) == 2  # not retried
