"""The front tool loop over the chat socket: the segments stream as one reply (``seq``
running on, the blank line between them streamed too), and the player's cancel mid-segment
ends the turn as a cancel does today, the text written so far kept."""

from __future__ import annotations

import json

import pytest

from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelConfig, Turn
from roleplay.scenarios.services import create_scenario
from tests.ws.test_chat_socket import connect, receive_until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def call(name: str, **arguments) -> Reply:
    return Reply(tool_calls=[{"name": name, "arguments": arguments}])


def _loop_scenario(tenant, conversation, model_config, base_url):
    ModelConfig.objects.create(
        tenant=tenant,
        name="controller",
        provider="openai_compatible",
        model="controller-model",
        base_url=base_url,
        context_limit=4096,
        max_output_tokens=128,
        timeout_ms=5000,
    )
    scenario = create_scenario(
        tenant,
        name="Looped",
        model_config=model_config,
        preActorDirector={"modelConfigId": "controller", "skills": [{"name": "narrate"}]},
    )
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])


@pytest.fixture
def looped(tenant, conversation, model_config, llm):
    _loop_scenario(tenant, conversation, model_config, llm.base_url)
    return conversation


async def send(comm, key: str, content: str) -> None:
    body = {"type": "user_message", "client_message_id": key, "content": content}
    await comm.send_to(text_data=json.dumps(body))


async def test_two_segments_stream_as_one_reply(looped, llm):
    llm.enqueue(
        call("actor"),
        Reply(content="The guard takes the key.", chunks=3),
        call("actor"),
        Reply(content="He turns it.", chunks=2),
        call("over"),
    )
    comm = await connect(looped)
    await send(comm, "s1", "Go.")
    events = await receive_until(comm, "turn.completed")
    deltas = [e for e in events if e["type"] == "delta"]
    assert [d["seq"] for d in deltas] == list(range(len(deltas)))
    text = "".join(d["text"] for d in deltas)
    assert text == "The guard takes the key.\n\nHe turns it."
    assert events[-1]["type"] == "turn.completed" and events[-1]["content"] == text
    await comm.disconnect()


async def test_cancel_mid_segment_keeps_the_text_written(looped, llm):
    llm.enqueue(
        call("actor"),
        Reply(content="First part.", chunks=2),
        call("actor"),
        Reply(content="word " * 200, chunks=200, chunk_delay=0.02),
    )
    comm = await connect(looped)
    await send(comm, "s2", "Go on.")
    started = json.loads(await comm.receive_from(timeout=5))
    seen = ""
    while "word" not in seen:  # the second segment has begun
        event = json.loads(await comm.receive_from(timeout=5))
        seen += event.get("text", "")
    await comm.send_to(text_data=json.dumps({"type": "cancel"}))
    events = await receive_until(comm, "never")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_cancelled"
    turn = await Turn.objects.aget(pk=started["turn_id"])
    assert turn.status == "cancelled"
    message = await Message.objects.aget(pk=started["assistant_message_id"])
    assert message.status == "cancelled"
    assert message.content.startswith("First part.\n\nword")
    await comm.disconnect()
