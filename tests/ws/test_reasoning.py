"""A reasoning model's scratchpad over the chat socket, with the real ASGI app, Redis channel
layer and scripted model server: kept beside the reply (per alternative), shown by the
events and the REST door, and sent back to the model only when the preset asks."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from memory.models import Message, MessageAlternative
from roleplay.llm.scripted_server import Reply
from roleplay.presets.services import create_preset
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def turn(comm, llm, client_id: str, text: str, reply: Reply) -> dict:
    llm.enqueue(reply)
    await send(comm, type="user_message", client_message_id=client_id, content=text)
    events = await until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    deltas = "".join(e["text"] for e in events if e["type"] == "delta")
    assert deltas == events[-1]["content"]  # the scratchpad never streams
    return events[-1]


def assistant_texts(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m["role"] == "assistant"]


THINK = Reply(content="<think>Be brief; she is tired.</think>\n\nSit. Rest.", chunks=6)
APART = Reply(content="Sit. Rest.", reasoning="Be brief; she is tired.")


@pytest.mark.parametrize("reply", [THINK, APART], ids=["think_block", "reasoning_content"])
async def test_reasoning_is_kept_beside_the_reply_and_not_sent_back(conversation, llm, reply):
    comm = await connect(conversation)
    done = await turn(comm, llm, "c1", "Hi", reply)
    assert (done["content"], done["reasoning"]) == ("Sit. Rest.", "Be brief; she is tired.")
    stored = await Message.objects.aget(pk=done["assistant_message_id"])
    assert (stored.content, stored.reasoning) == ("Sit. Rest.", "Be brief; she is tired.")
    await turn(comm, llm, "c2", "And now?", Reply(content="Now we wait."))
    sent = llm.requests[-1]
    assert "Sit. Rest." in assistant_texts(sent)
    assert all("she is tired" not in str(m["content"]) for m in sent["messages"])
    await comm.disconnect()


async def test_a_preset_that_asks_sends_the_reasoning_back(conversation, llm, model_config):
    preset = await sync_to_async(create_preset)(
        conversation.tenant, name="thinking", reasoning_in_prompt=True
    )
    model_config.preset = preset
    await model_config.asave(update_fields=["preset"])
    comm = await connect(conversation)
    await turn(comm, llm, "c1", "Hi", APART)
    await turn(comm, llm, "c2", "And now?", Reply(content="Now we wait."))
    assert "<think>\nBe brief; she is tired.\n</think>\nSit. Rest." in assistant_texts(
        llm.requests[-1]
    )
    await comm.disconnect()


async def test_each_alternative_keeps_its_own_reasoning(conversation, llm):
    comm = await connect(conversation)
    first = await turn(comm, llm, "c1", "Hi", APART)
    message_id = first["assistant_message_id"]
    llm.enqueue(Reply(content="Stand up.", reasoning="She should move."))
    await send(comm, type="regenerate", client_message_id="r1")
    done = (await until(comm, "turn.completed"))[-1]
    assert (done["content"], done["reasoning"]) == ("Stand up.", "She should move.")
    [shown] = await until(comm, "message.updated")
    assert shown["reasoning"] == "She should move."
    alternatives = await sync_to_async(list)(
        MessageAlternative.objects.filter(message_id=message_id).values_list(
            "index", "content", "reasoning"
        )
    )
    assert alternatives == [
        (0, "Sit. Rest.", "Be brief; she is tired."),
        (1, "Stand up.", "She should move."),
    ]
    await send(comm, type="select_alternative", message_id=message_id, index=0)
    [updated] = await until(comm, "message.updated")
    assert (updated["content"], updated["reasoning"]) == ("Sit. Rest.", "Be brief; she is tired.")
    stored = await Message.objects.aget(pk=message_id)
    assert stored.reasoning == "Be brief; she is tired."
    await comm.disconnect()


async def test_a_reply_without_reasoning_has_none(conversation, llm):
    comm = await connect(conversation)
    done = await turn(comm, llm, "c1", "Hi", Reply(content="Plain."))
    assert done["reasoning"] == ""
    assert (await Message.objects.aget(pk=done["assistant_message_id"])).reasoning == ""
    await comm.disconnect()


@pytest.mark.parametrize("form", ["reasoning_content", "think_block"])
async def test_a_reply_cut_short_keeps_the_reasoning_it_had_given(conversation, llm, form):
    from roleplay.llm.scripted_server import split_content

    thought, answer = "Be brief; she is tired.", "Sit down by the fire and rest a while. " * 4
    if form == "think_block":
        content = f"<think>{thought}</think>\n\n{answer}"
        reply = Reply(content=content, chunks=12, cut_after=8)
    else:
        sent = len(split_content(thought, None)) + 3  # the reasoning, then three of the answer
        reply = Reply(content=answer, chunks=10, reasoning=thought, cut_after=sent)
    llm.enqueue(reply)
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="cut", content="Hi")
    events = await until(comm, "turn.completed")
    assert events[-1]["type"] == "error"
    message = await Message.objects.aget(pk=events[0]["assistant_message_id"])
    assert message.status == "failed" and message.content and thought not in message.content
    assert message.reasoning == thought
    await comm.disconnect()
