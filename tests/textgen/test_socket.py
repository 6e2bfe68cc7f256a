"""A chat turn over the socket on text-completion servers: a KoboldCpp-shaped and a
llama.cpp-``/completion``-shaped scripted server stream the reply token by token, and the
request each received carries the prompt rendered through the config's instruct template (or
the model's own Jinja chat template, imported over REST), its
stop strings and its samplers under the server's own names."""

from __future__ import annotations

from pathlib import Path

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.configs.services import update_model_config
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, stored, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@sync_to_async
def text_completion(model_config, llm, **fields):
    update_model_config(model_config, provider="text_completion", base_url=llm.root_url, **fields)


@sync_to_async
def calls():
    return list(ModelCall.objects.values_list("outcome", "error_code", "output_tokens"))


async def turn(conversation, content: str) -> list[dict]:
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="c1", content=content)
    events = await until(comm, "turn.completed")
    await comm.disconnect()
    return events


async def until_failed(conversation, content: str) -> list[dict]:
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="c1", content=content)
    events = await until(comm, "turn.completed", "turn.failed")
    await comm.disconnect()
    return events


async def test_a_koboldcpp_server_streams_a_turn_rendered_through_alpaca(
    conversation, character, model_config, llm
):
    samplers = {"top_k": 40, "repetition_penalty": 1.15, "dry_multiplier": 0.8, "min_p": 0.05}
    await text_completion(model_config, llm, wire="koboldcpp", instruct_template="alpaca",
                          **samplers)  # fmt: skip
    llm.enqueue(Reply(content="The lamp is lit.\n### Instruction:\nmore", chunks=5))
    events = await turn(conversation, "Is the lamp lit?")
    deltas = [e["text"] for e in events if e["type"] == "delta"]
    assert len(deltas) >= 2 and "".join(deltas) == "The lamp is lit."
    assert events[-1]["content"] == "The lamp is lit."
    (sent,) = llm.requests
    assert sent["path"] == "/api/extra/generate/stream"
    prompt = sent["prompt"]
    assert "### Instruction:\nIs the lamp lit?\n\n" in prompt
    assert prompt.endswith("### Response:\n")  # Alpaca names speakers only when forced
    assert sent["top_k"] == 40 and sent["rep_pen"] == 1.15 and sent["min_p"] == 0.05
    assert sent["dry_multiplier"] == 0.8 and "mirostat" not in sent
    assert "\n### Instruction:" in sent["stop_sequence"]
    assert sent["max_length"] == model_config.max_output_tokens
    assert await stored(conversation) == [
        ("user", "Is the lamp lit?"), ("assistant", "The lamp is lit."),
    ]  # fmt: skip
    assert await calls() == [("ok", None, events[-1]["usage"]["output_tokens"])]


async def test_a_llamacpp_server_streams_a_turn_rendered_through_chatml(
    conversation, model_config, llm
):
    await text_completion(model_config, llm, wire="llamacpp", instruct_template="chatml",
                          mirostat_mode=2, mirostat_tau=5.0, typical_p=0.95,
                          repetition_penalty_range=128)  # fmt: skip
    llm.enqueue(Reply(content="Yes, since dusk.", chunks=4))
    events = await turn(conversation, "Is the lamp lit?")
    assert "".join(e["text"] for e in events if e["type"] == "delta") == "Yes, since dusk."
    (sent,) = llm.requests
    assert sent["path"] == "/completion" and sent["stream"] is True
    assert sent["prompt"].startswith("<|im_start|>system\n")
    assert "<|im_start|>user\nIs the lamp lit?<|im_end|>\n" in sent["prompt"]
    assert sent["prompt"].endswith("<|im_start|>assistant\n")
    assert sent["stop"][0] == "<|im_end|>" and sent["n_predict"] == model_config.max_output_tokens
    assert sent["mirostat"] == 2 and sent["mirostat_tau"] == 5.0 and sent["typical_p"] == 0.95
    assert sent["repeat_last_n"] == 128 and "top_k" not in sent


async def test_a_server_error_is_the_chat_turns_coded_error(conversation, model_config, llm):
    await text_completion(model_config, llm, wire="llamacpp")
    llm.default = Reply(status=401)
    events = await until_failed(conversation, "Hello?")
    failed = [e for e in events if e["type"] in ("turn.failed", "error")]
    assert failed and "model_auth_error" in str(failed[-1])


async def test_a_llamacpp_server_streams_a_turn_rendered_by_the_models_own_template(
    conversation, model_config, llm, api_client_for, tenant
):
    source = (Path(__file__).parent / "chat_templates" / "gemma3.jinja").read_text()
    file = {"chat_template": source, "bos_token": "<bos>", "eos_token": "<eos>"}
    api = await sync_to_async(api_client_for)(tenant)
    response = await sync_to_async(api.post)(
        "/api/v1/instruct-templates/", {"name": "Gemma 3", "file": file}, format="json"
    )
    assert response.status_code == 201, response.content
    await text_completion(model_config, llm, wire="llamacpp", instruct_template="Gemma 3")
    llm.enqueue(Reply(content="Since dusk.<end_of_turn>\n<start_of_turn>user\nNo", chunks=4))
    events = await turn(conversation, "Is the lamp lit?")
    assert "".join(e["text"] for e in events if e["type"] == "delta") == "Since dusk."
    (sent,) = llm.requests
    prompt = sent["prompt"]
    assert sent["path"] == "/completion"
    # Gemma takes no system message: it opens the first user turn.
    assert prompt.startswith("<bos><start_of_turn>user\n") and prompt.count("<bos>") == 1
    assert "Is the lamp lit?<end_of_turn>\n" in prompt and "<start_of_turn>system" not in prompt
    assert prompt.endswith("<start_of_turn>model\n")
    assert sent["stop"][:2] == ["<eos>", "<end_of_turn>"]
    assert await stored(conversation) == [
        ("user", "Is the lamp lit?"), ("assistant", "Since dusk."),
    ]  # fmt: skip
