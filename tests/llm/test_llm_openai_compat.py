"""The OpenAI-compatible provider against the scripted server, through the real SDK path."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from console.tokens import count_messages, count_tokens
from roleplay.llm.errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelBadResponse,
    ModelContentFiltered,
    ModelContextExceeded,
    ModelRateLimited,
    ModelServerError,
)
from roleplay.llm.provider import ModelClient
from roleplay.llm.providers import build_provider
from roleplay.llm.providers.openai_answers import call_parts
from roleplay.llm.providers.openai_compat import OpenAICompatProvider
from roleplay.llm.providers.openai_errors import refused_params
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.llm.types import CallRecord, ModelRequest, ProviderConfig, StreamDone, TextDelta

MESSAGES = [
    {"role": "system", "content": "You are Alice, a fox in a tavern."},
    {"role": "user", "content": "Hello there, who are you?"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "set_mood",
            "description": "Change the character's mood.",
            "parameters": {
                "type": "object",
                "properties": {"mood": {"type": "string"}},
                "required": ["mood"],
            },
        },
    },
    {  # the bare function shape is accepted too
        "name": "roll_dice",
        "parameters": {"type": "object", "properties": {"sides": {"type": "integer"}}},
    },
]
TWO_CALLS = [
    {"id": "call_a", "name": "set_mood", "arguments": {"mood": "cheerful"}},
    {"id": "call_b", "name": "roll_dice", "arguments": {"sides": 20}},
]


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


def make_client(
    server: ScriptedOpenAIServer, records: list[CallRecord] | None = None, **extra: object
) -> ModelClient:
    config = ProviderConfig(
        provider="openai_compatible",
        model="scripted-model",
        base_url=server.base_url,
        timeout_ms=5000,
        extra=dict(extra),
    )
    recorder = records.append if records is not None else None
    return ModelClient(build_provider(config), recorder=recorder, retry_base_delay=0.001)


async def collect(client: ModelClient, **kwargs: object) -> tuple[list[str], StreamDone]:
    deltas: list[str] = []
    done: StreamDone | None = None
    cancel = kwargs.pop("cancel", None)
    request = ModelRequest(MESSAGES, **kwargs)  # type: ignore[arg-type]
    async for event in client.stream(request, cancel=cancel):  # type: ignore[arg-type]
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        else:
            done = event
    assert done is not None
    return deltas, done


def test_build_provider_picks_the_http_provider(server: ScriptedOpenAIServer) -> None:
    config = ProviderConfig(provider="openai_compatible", model="m", base_url=server.base_url)
    assert isinstance(build_provider(config), OpenAICompatProvider)


@pytest.mark.asyncio
async def test_plain_completion_returns_content_and_server_usage(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(Reply(content="I am Alice, keeper of the Copper Kettle."))
    records: list[CallRecord] = []
    result = await make_client(server, records).complete(ModelRequest(MESSAGES), purpose="actor")

    assert result.content == "I am Alice, keeper of the Copper Kettle."
    assert result.tool_calls == []
    assert result.finish_reason == "stop"
    assert result.attempts == 1
    assert result.model == "scripted-model"
    assert result.usage.input_tokens == count_messages(MESSAGES)
    assert result.usage.output_tokens == count_tokens(result.content)
    assert result.usage.total_tokens == result.usage.input_tokens + result.usage.output_tokens

    body = server.requests[0]
    assert body["messages"] == MESSAGES
    assert body["model"] == "scripted-model"
    assert body["max_tokens"] == 1024
    assert body["temperature"] == 0.8
    assert "stream" not in body and "tools" not in body
    assert [(r.purpose, r.outcome, r.error_code, r.attempts) for r in records] == [
        ("actor", "ok", None, 1)
    ]
    assert records[0].usage == result.usage


@pytest.mark.asyncio
async def test_call_overrides_and_extra_params_reach_the_server(
    server: ScriptedOpenAIServer,
) -> None:
    client = make_client(server, min_p=0.05, repetition_penalty=1.1)
    await client.complete(ModelRequest(MESSAGES, max_tokens=77, temperature=0.2))
    body = server.requests[0]
    assert body["max_tokens"] == 77
    assert body["temperature"] == 0.2
    assert body["min_p"] == 0.05 and body["repetition_penalty"] == 1.1


@pytest.mark.asyncio
async def test_stream_deltas_reassemble_the_content(server: ScriptedOpenAIServer) -> None:
    text = "The tavern door creaks open, and a cold wind follows you in."
    server.enqueue(Reply(content=text, chunks=7))
    deltas, done = await collect(make_client(server))

    assert len(deltas) == 7
    assert "".join(deltas) == text == done.result.content
    assert done.result.usage.output_tokens == count_tokens(text)
    assert done.result.usage.input_tokens == count_messages(MESSAGES)
    body = server.requests[0]
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}


@pytest.mark.asyncio
async def test_usage_is_counted_locally_when_the_server_sends_none(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(Reply(content="no usage here", usage={}), Reply(content="nor here", usage={}))
    client = make_client(server)
    result = await client.complete(ModelRequest(MESSAGES))
    assert result.usage.input_tokens == count_messages(MESSAGES)
    assert result.usage.output_tokens == count_tokens("no usage here")
    _, done = await collect(client)
    assert done.result.usage.output_tokens == count_tokens("nor here")


@pytest.mark.asyncio
async def test_reported_usage_is_taken_verbatim(server: ScriptedOpenAIServer) -> None:
    usage = {"prompt_tokens": 111, "completion_tokens": 22, "total_tokens": 133}
    server.enqueue(Reply(content="x", usage=usage), Reply(content="y", usage=usage))
    client = make_client(server)
    result = await client.complete(ModelRequest(MESSAGES))
    assert (result.usage.input_tokens, result.usage.output_tokens) == (111, 22)
    _, done = await collect(client)
    assert done.result.usage.total_tokens == 133


@pytest.mark.asyncio
async def test_parallel_tool_calls_in_json_mode(server: ScriptedOpenAIServer) -> None:
    server.enqueue(Reply(tool_calls=TWO_CALLS))
    result = await make_client(server).complete(ModelRequest(MESSAGES, tools=TOOLS))

    assert [(c.id, c.name, c.arguments) for c in result.tool_calls] == [
        ("call_a", "set_mood", {"mood": "cheerful"}),
        ("call_b", "roll_dice", {"sides": 20}),
    ]
    assert result.finish_reason == "tool_calls"
    assert result.content == ""
    body = server.requests[0]
    assert [t["function"]["name"] for t in body["tools"]] == ["set_mood", "roll_dice"]
    assert all(t["type"] == "function" for t in body["tools"])
    assert body["tool_choice"] == "auto"
    assert body["parallel_tool_calls"] is True


@pytest.mark.asyncio
async def test_parallel_tool_calls_are_assembled_from_stream_fragments(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(Reply(content="Let me check.", tool_calls=TWO_CALLS))
    deltas, done = await collect(
        make_client(server), tools=TOOLS, tool_choice="required", parallel_tool_calls=False
    )

    assert "".join(deltas) == "Let me check."
    calls = done.result.tool_calls
    assert [(c.id, c.name, c.arguments) for c in calls] == [
        ("call_a", "set_mood", {"mood": "cheerful"}),
        ("call_b", "roll_dice", {"sides": 20}),
    ]
    assert done.result.finish_reason == "tool_calls"
    body = server.requests[0]
    assert body["tool_choice"] == "required"
    assert body["parallel_tool_calls"] is False


@pytest.mark.asyncio
@pytest.mark.parametrize("pieces", ["repeat", "no_index"])
async def test_tool_call_pieces_of_other_servers_are_assembled(
    server: ScriptedOpenAIServer, pieces: str
) -> None:
    """llama.cpp's Python server repeats the id and the whole name in every piece; other
    servers leave ``index`` out. Either way each call is whole once, with its own name."""
    server.enqueue(Reply(content="", tool_calls=TWO_CALLS, tool_pieces=pieces))
    deltas, done = await collect(make_client(server), tools=TOOLS, tool_choice="auto")
    assert [(c.id, c.name, c.arguments) for c in done.result.tool_calls] == [
        ("call_a", "set_mood", {"mood": "cheerful"}),
        ("call_b", "roll_dice", {"sides": 20}),
    ]


@pytest.mark.asyncio
async def test_json_schema_response_format_is_passed_through(
    server: ScriptedOpenAIServer,
) -> None:
    response_format = {
        "type": "json_schema",
        "json_schema": {
            "name": "verdict",
            "strict": True,
            "schema": {
                "type": "object",
                "properties": {"ok": {"type": "boolean"}},
                "required": ["ok"],
                "additionalProperties": False,
            },
        },
    }
    server.enqueue(Reply(content='{"ok": true}'))
    result = await make_client(server).complete(
        ModelRequest(MESSAGES, response_format=response_format)
    )
    assert result.content == '{"ok": true}'
    assert server.requests[0]["response_format"] == response_format


@pytest.mark.asyncio
async def test_invalid_tool_arguments_are_a_bad_response_and_retried(
    server: ScriptedOpenAIServer,
) -> None:
    broken = Reply(tool_calls=[{"id": "c1", "name": "set_mood", "arguments": "{mood: oops"}])
    server.enqueue(broken, broken, broken)
    records: list[CallRecord] = []
    with pytest.raises(ModelBadResponse):
        await make_client(server, records).complete(ModelRequest(MESSAGES, tools=TOOLS))
    assert len(server.requests) == 3
    assert [(r.outcome, r.error_code, r.attempts) for r in records] == [
        ("error", "model_bad_response", 3)
    ]


@pytest.mark.asyncio
async def test_a_server_refusing_stream_options_is_asked_again_without(
    server: ScriptedOpenAIServer,
) -> None:
    refused = {"error": {"message": "Unrecognized request argument supplied: stream_options"}}
    server.enqueue(Reply(status=400, error_body=refused), Reply(content="Hello there."))
    records: list[CallRecord] = []
    client = make_client(server, records)
    deltas, done = await collect(client)
    assert "".join(deltas) == done.result.content == "Hello there."
    first, second = server.requests
    assert first["stream_options"] == {"include_usage": True} and "stream_options" not in second
    assert [(r.outcome, r.attempts) for r in records] == [("ok", 1)]
    server.enqueue(Reply(content="Again."))  # the same provider remembers: one request
    await collect(client)
    assert len(server.requests) == 3 and "stream_options" not in server.requests[2]


@pytest.mark.asyncio
async def test_a_server_refusing_parallel_tool_calls_with_422_is_asked_again_without(
    server: ScriptedOpenAIServer,
) -> None:
    refused = {
        "detail": [{"loc": ["body", "parallel_tool_calls"], "msg": "extra fields not permitted"}]
    }
    server.enqueue(Reply(status=422, error_body=refused), Reply(tool_calls=TWO_CALLS))
    result = await make_client(server).complete(ModelRequest(MESSAGES, tools=TOOLS))
    assert [c.name for c in result.tool_calls] == ["set_mood", "roll_dice"]
    assert "parallel_tool_calls" not in server.requests[1] and "tools" in server.requests[1]


@pytest.mark.asyncio
async def test_a_reasoning_model_s_refusals_are_met_one_after_another(
    server: ScriptedOpenAIServer,
) -> None:
    # how OpenAI's reasoning models answer parameters they do not take, one at a time
    tokens = "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
    tokens += "'max_completion_tokens' instead."
    heat = "Unsupported value: 'temperature' does not support 0.8 with this model."
    server.enqueue(
        Reply(status=400, error_body={"error": {"message": tokens}}),
        Reply(status=400, error_body={"error": {"message": heat}}),
        Reply(content="Fine."),
    )
    records: list[CallRecord] = []
    result = await make_client(server, records).complete(ModelRequest(MESSAGES))
    assert result.content == "Fine." and [r.outcome for r in records] == ["ok"]
    last = server.requests[-1]
    assert last["max_completion_tokens"] == 1024
    assert "max_tokens" not in last and "temperature" not in last


@pytest.mark.parametrize(
    ("said", "found"),
    [
        ("Unrecognized request argument supplied: stream_options", {"stream_options": None}),
        ("temperature must be at most 2", {}),
        ("Unsupported value: 'temperature'", {"temperature": None}),
        ("use max_completion_tokens", {"max_tokens": "max_completion_tokens"}),
        ("top_k is not known", {}),
    ],
)
def test_refused_params(said: str, found: dict[str, str | None]) -> None:
    params = {"model": "m", "temperature": 0.8, "max_tokens": 9, "stream_options": {}}
    assert refused_params(params, said) == found


@pytest.mark.asyncio
async def test_a_refusal_that_names_no_optional_parameter_is_not_sent_again(
    server: ScriptedOpenAIServer,
) -> None:
    server.enqueue(Reply(status=400, error_body={"error": {"message": "bad temperature"}}))
    with pytest.raises(ModelBadRequest):
        await make_client(server).complete(ModelRequest(MESSAGES, tools=TOOLS))
    assert len(server.requests) == 1


def test_tool_arguments_sent_as_an_object_are_taken_as_json() -> None:
    # the protocol sends a JSON string; some servers send the object itself
    wire = {"id": "c1", "function": {"name": "set_mood", "arguments": {"mood": "wry é"}}}
    call_id, name, arguments = call_parts(wire)
    assert (call_id, name) == ("c1", "set_mood")
    assert json.loads(arguments) == {"mood": "wry é"}
    with pytest.raises(ModelBadResponse):
        call_parts({"id": "c2", "function": {"name": "set_mood", "arguments": ["mood"]}})


@pytest.mark.asyncio
@pytest.mark.parametrize("streamed", [False, True])
async def test_json_of_the_wrong_shape_is_a_bad_response(
    server: ScriptedOpenAIServer, streamed: bool
) -> None:
    # Valid JSON the SDK no longer validates for us: a tool name that is not a string.
    broken = Reply(
        tool_calls=[{"id": "c1", "name": 7, "arguments": "{}"}],
        usage={"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    )
    server.enqueue(broken, broken, broken)
    records: list[CallRecord] = []
    client = make_client(server, records)
    with pytest.raises(ModelBadResponse):
        if streamed:
            await collect(client, tools=TOOLS)
        else:
            await client.complete(ModelRequest(MESSAGES, tools=TOOLS))
    assert [(r.outcome, r.error_code, r.attempts) for r in records] == [
        ("error", "model_bad_response", 3)
    ]


def test_extra_params_cannot_replace_the_request_itself(server: ScriptedOpenAIServer) -> None:
    provider = build_provider(
        ProviderConfig(
            provider="openai_compatible",
            model="m",
            base_url=server.base_url,
            extra={"messages": [], "model": "other", "stream": False, "top_k": 40},
        )
    )
    assert isinstance(provider, OpenAICompatProvider)
    params = provider._params(ModelRequest(MESSAGES))
    assert params["messages"] == MESSAGES and params["model"] == "m" and params["top_k"] == 40


@pytest.mark.asyncio
@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (Reply(status=400), ModelBadRequest),
        (Reply(status=404), ModelBadRequest),
        (Reply(status=401), ModelAuthError),
        (Reply(status=403), ModelAuthError),
        (
            Reply(status=400, error_body={"error": {"message": "no", "code": "content_filter"}}),
            ModelContentFiltered,
        ),
        (Reply(content="[redacted]", finish_reason="content_filter"), ModelContentFiltered),
        # llama.cpp's Python server refusing a json_schema response_format, with a 500
        (
            Reply(status=500, error_body={"error": {
                "message": "1 validation error:\n {'type': 'literal_error', 'loc': ('body', "
                "'response_format', 'type'), 'msg': \"Input should be 'text' or "
                "'json_object'\", 'input': 'json_schema'}",
                "type": "internal_server_error", "param": None, "code": None}}),
            ModelBadRequest,
        ),
        # llama.cpp's Python server, in OpenAI's words and code
        (
            Reply(status=400, error_body={"error": {
                "message": "This model's maximum context length is 4096 tokens. However, you "
                "requested 7030 tokens (7010 in the messages, 20 in the completion).",
                "type": "invalid_request_error", "param": "messages",
                "code": "context_length_exceeded"}}),
            ModelContextExceeded,
        ),
        # llama.cpp's C++ server
        (
            Reply(status=400, error_body={"error": {
                "code": 400, "type": "exceed_context_size_error",
                "message": "the request exceeds the available context size, try increasing it"}}),
            ModelContextExceeded,
        ),
        # vLLM, by its words only
        (
            Reply(status=400, error_body={"object": "error", "message": "This model's maximum "
                  "context length is 2048 tokens. However, you requested 3000 tokens."}),
            ModelContextExceeded,
        ),
    ],
)  # fmt: skip
async def test_permanent_failures_are_mapped_and_not_retried(
    server: ScriptedOpenAIServer, reply: Reply, error: type[Exception]
) -> None:
    server.enqueue(reply)
    records: list[CallRecord] = []
    with pytest.raises(error) as caught:
        await make_client(server, records).complete(ModelRequest(MESSAGES))
    assert len(server.requests) == 1
    assert records[0].outcome == "error"
    assert records[0].error_code == caught.value.code  # type: ignore[attr-defined]
    assert records[0].attempts == 1


@pytest.mark.asyncio
async def test_transient_status_codes_map_to_retryable_errors(
    server: ScriptedOpenAIServer,
) -> None:
    provider = make_client(server).provider
    server.enqueue(Reply(status=429, retry_after=7), Reply(status=503))
    with pytest.raises(ModelRateLimited) as limited:
        await provider.complete(ModelRequest(MESSAGES))
    assert limited.value.retryable and limited.value.retry_after == 7.0
    assert limited.value.status == 429
    with pytest.raises(ModelServerError) as failed:
        await provider.complete(ModelRequest(MESSAGES))
    assert failed.value.retryable and failed.value.status == 503


@pytest.mark.asyncio
async def test_dynamic_replies_see_the_request(server: ScriptedOpenAIServer) -> None:
    server.default = Reply.from_callable(
        lambda request: Reply(content=f"you said: {request['messages'][-1]['content']}")
    )
    result = await make_client(server).complete(ModelRequest([{"role": "user", "content": "ping"}]))
    assert result.content == "you said: ping"


@pytest.mark.asyncio
async def test_one_provider_serves_several_event_loops(server: ScriptedOpenAIServer) -> None:
    """Celery and async_to_sync run calls on fresh loops; the HTTP pool must follow."""
    client = make_client(server)
    first = await client.complete(ModelRequest(MESSAGES))

    def on_another_loop() -> str:
        return asyncio.run(client.complete(ModelRequest(MESSAGES))).content

    second = await asyncio.to_thread(on_another_loop)
    assert first.content == second == "OK"
