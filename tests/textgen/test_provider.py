"""The text-completion provider against the scripted server's KoboldCpp, llama.cpp and
OpenAI-completions routes: the rendered prompt (through an instruct template or the model's
own Jinja template), stops and samplers the server received,
streamed tokens, the local stop cut, and the chat provider's errors, retries and cancel."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from roleplay.llm.errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelBadResponse,
    ModelCancelled,
    ModelContextExceeded,
    ModelServerError,
)
from roleplay.llm.provider import ModelClient
from roleplay.llm.providers import build_provider
from roleplay.llm.scripted_server import Reply, ScriptedOpenAIServer
from roleplay.llm.types import CallRecord, ModelRequest, ProviderConfig, StreamDone, TextDelta
from roleplay.textgen.configs import template_body

MESSAGES = [
    {"role": "system", "content": "You are Alice."},
    {"role": "user", "content": "Hi"},
]
CHATML_PROMPT = (
    "<|im_start|>system\nYou are Alice.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n"
    "<|im_start|>assistant\n"
)


@pytest.fixture
def server() -> Iterator[ScriptedOpenAIServer]:
    with ScriptedOpenAIServer() as srv:
        yield srv


def client(server, wire, records=None, template="chatml", **samplers) -> ModelClient:
    base = server.base_url if wire == "openai_completions" else server.root_url
    config = ProviderConfig(
        provider="text_completion", model="m", base_url=base, timeout_ms=5000, wire=wire,
        template=template_body(template, None), samplers=samplers, max_output_tokens=64,
        context_limit=4096, temperature=0.7, top_p=0.9,
    )  # fmt: skip
    recorder = records.append if records is not None else None
    return ModelClient(build_provider(config), recorder=recorder, retry_base_delay=0.001)


async def collect(model: ModelClient, cancel=None, **kwargs) -> tuple[list[str], StreamDone]:
    request = ModelRequest(MESSAGES, char_name="Alice", user_name="Ann", **kwargs)
    deltas, done = [], None
    async for event in model.stream(request, cancel=cancel):
        if isinstance(event, TextDelta):
            deltas.append(event.text)
        elif isinstance(event, StreamDone):
            done = event
    assert done is not None
    return deltas, done


def test_koboldcpp_streams_the_rendered_prompt_with_its_own_sampler_names(server):
    server.enqueue(Reply(content="Hello there, Ann.", chunks=4))
    model = client(server, "koboldcpp", top_k=40, repetition_penalty=1.1, dry_multiplier=0.8,
                   xtc_probability=0.5, mirostat_mode=2)  # fmt: skip
    deltas, done = asyncio.run(collect(model))
    assert len(deltas) == 4 and "".join(deltas) == "Hello there, Ann."
    assert done.result.content == "Hello there, Ann."
    (sent,) = server.requests
    assert sent["path"] == "/api/extra/generate/stream"
    assert sent["prompt"] == CHATML_PROMPT
    assert sent["max_length"] == 64 and sent["max_context_length"] == 4096
    assert sent["stop_sequence"][0] == "<|im_end|>" and "\nAnn:" in sent["stop_sequence"]
    assert sent["top_k"] == 40 and sent["rep_pen"] == 1.1 and sent["mirostat"] == 2
    assert sent["dry_multiplier"] == 0.8 and sent["xtc_probability"] == 0.5
    assert "min_p" not in sent and "typical" not in sent and "rep_pen_range" not in sent
    assert sent["temperature"] == 0.7 and sent["top_p"] == 0.9


def test_koboldcpp_without_streaming(server):
    server.enqueue(Reply(content="Whole reply."))
    result = asyncio.run(
        client(server, "koboldcpp").complete(ModelRequest(MESSAGES, char_name="A", user_name="U"))
    )
    assert result.content == "Whole reply."
    assert server.requests[0]["path"] == "/api/v1/generate"


def test_llamacpp_completion_streams_with_n_predict_cache_prompt_and_usage(server):
    server.enqueue(Reply(content="One two three", cached_tokens=5))
    model = client(server, "llamacpp", template="alpaca", min_p=0.05,
                   repetition_penalty_range=256, typical_p=0.9)  # fmt: skip
    deltas, done = asyncio.run(collect(model))
    assert "".join(deltas) == "One two three"
    (sent,) = server.requests
    assert sent["path"] == "/completion" and sent["stream"] is True
    # Alpaca names speakers only when forced (SillyTavern's shipped file)
    assert sent["prompt"].endswith("### Instruction:\nHi\n\n### Response:\n")
    assert sent["n_predict"] == 64 and sent["cache_prompt"] is True
    assert sent["min_p"] == 0.05 and sent["repeat_last_n"] == 256 and sent["typical_p"] == 0.9
    assert "\n### Instruction:" in sent["stop"]
    usage = done.result.usage
    assert usage.output_tokens > 0 and usage.cached_tokens == 5


def test_openai_completions_streams_choices_text(server):
    server.enqueue(Reply(content="Fine, thanks."))
    deltas, done = asyncio.run(collect(client(server, "openai_completions", top_k=20)))
    assert "".join(deltas) == "Fine, thanks."
    (sent,) = server.requests
    assert sent["path"].endswith("/v1/completions")
    assert sent["model"] == "m" and sent["max_tokens"] == 64 and sent["top_k"] == 20
    assert done.result.usage.input_tokens > 0


def test_a_stop_string_is_cut_locally_and_the_stream_closed(server):
    server.enqueue(Reply(content="Sure thing.<|im_end|>\n<|im_start|>user\nMore", chunks=9))
    deltas, done = asyncio.run(collect(client(server, "koboldcpp")))
    assert "".join(deltas) == "Sure thing."
    assert done.result.content == "Sure thing." and done.result.finish_reason == "stop"


@pytest.mark.parametrize("streamed", [True, False])
def test_a_leading_think_block_is_kept_as_reasoning(server, streamed):
    server.enqueue(Reply(content="<think>Greet her back.</think>\nHello, Ann.", chunks=5))
    model = client(server, "koboldcpp")
    if streamed:
        deltas, done = asyncio.run(collect(model))
        assert "".join(deltas) == "Hello, Ann."
        result = done.result
    else:
        request = ModelRequest(MESSAGES, char_name="Alice", user_name="Ann")
        result = asyncio.run(model.complete(request))
    assert (result.reasoning, result.content) == ("Greet her back.", "Hello, Ann.")


@pytest.mark.parametrize("wire", ["koboldcpp", "llamacpp", "openai_completions"])
def test_a_server_error_is_retried_then_coded_as_for_chat(server, wire):
    server.enqueue(Reply(status=503), Reply(status=503), Reply(status=503))
    records: list[CallRecord] = []
    with pytest.raises(ModelServerError):
        asyncio.run(collect(client(server, wire, records)))
    assert len(server.requests) == 3
    assert records[0].outcome == "error" and records[0].error_code == "model_server_error"
    assert records[0].attempts == 3


def test_a_retry_after_an_error_succeeds(server):
    server.enqueue(Reply(status=500), Reply(content="Back."))
    deltas, done = asyncio.run(collect(client(server, "llamacpp")))
    assert "".join(deltas) == "Back." and done.result.attempts == 2


TOO_LONG = "the request exceeds the available context size"


@pytest.mark.parametrize(
    "reply, error",
    [
        (Reply(status=401), ModelAuthError),
        (Reply(status=400, error_body={"error": {"message": TOO_LONG}}), ModelContextExceeded),
        (Reply(malformed=True), ModelBadResponse),
    ],
)  # fmt: skip
def test_client_errors_have_the_chat_providers_codes(server, reply, error):
    server.enqueue(reply, reply, reply)
    with pytest.raises(error):
        asyncio.run(collect(client(server, "llamacpp")))


def test_cancel_aborts_a_hanging_server(server):
    server.enqueue(Reply(hang=True))

    async def run():
        cancel = asyncio.Event()
        asyncio.get_running_loop().call_later(0.2, cancel.set)
        await collect(client(server, "koboldcpp"), cancel=cancel)

    with pytest.raises(ModelCancelled):
        asyncio.run(run())
    assert server.wait_for_disconnects(1)


def test_a_continue_sends_the_reply_so_far_without_a_new_turn(server):
    server.enqueue(Reply(content=" on."))
    messages = [*MESSAGES, {"role": "assistant", "content": "And so"}]
    request = ModelRequest(messages, continue_final_message=True, char_name="A", user_name="U")
    asyncio.run(client(server, "llamacpp").complete(request))
    assert server.requests[0]["prompt"].endswith("<|im_start|>assistant\nAnd so")


def test_a_jinja_template_renders_the_prompt_the_llamacpp_server_receives(server):
    source = (Path(__file__).parent / "chat_templates" / "gemma2.jinja").read_text()
    body = {"jinja": {"template": source, "bos_token": "<bos>", "eos_token": "<eos>"}}
    config = ProviderConfig(provider="text_completion", model="m", base_url=server.root_url,
                            timeout_ms=5000, wire="llamacpp", template=body)  # fmt: skip
    server.enqueue(Reply(content="Hello, Ann.<end_of_turn>\n<start_of_turn>user\n", chunks=5))
    deltas, done = asyncio.run(collect(ModelClient(build_provider(config))))
    assert "".join(deltas) == "Hello, Ann." and done.result.finish_reason == "stop"
    (sent,) = server.requests
    assert sent["path"] == "/completion"
    assert sent["prompt"] == (
        "<bos><start_of_turn>user\nYou are Alice.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    )
    assert sent["stop"] == ["<eos>", "<end_of_turn>", "\nAnn:"]


def test_a_chat_the_jinja_template_still_refuses_is_a_bad_request(server):
    body = {"jinja": {"template": "{% if 'Hi' in messages[-1].content %}"
                                  "{{ raise_exception('no greetings') }}{% endif %}"}}  # fmt: skip
    config = ProviderConfig(provider="text_completion", model="m", base_url=server.root_url,
                            timeout_ms=5000, wire="llamacpp", template=body)  # fmt: skip
    with pytest.raises(ModelBadRequest, match="refused the chat: no greetings"):
        asyncio.run(collect(ModelClient(build_provider(config), retry_base_delay=0.001)))
    assert server.requests == []
