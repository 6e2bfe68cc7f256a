"""Regex scripts through the socket door: the streamed ``delta`` events carry the model's
text as it came (they are sent before the reply is complete), while ``turn.completed`` and the
stored reply carry the AI-output scripts' result; the player's message is stored after the
user-input scripts."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.regex_scripts.services import create_script, set_allowed
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, stored, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@sync_to_async
def scripts_on(conversation, character):
    tenant = conversation.tenant
    create_script(tenant, scope="character", character=character, script={
        "scriptName": "no shouting", "findRegex": "/!+/g", "replaceString": ".",
        "placement": [1, 2]})  # fmt: skip
    set_allowed(character, True)


async def test_deltas_are_raw_and_the_completed_reply_is_scripted(conversation, character, llm):
    await scripts_on(conversation, character)
    llm.enqueue(Reply(content="The gate opens!! At dawn!", chunks=3))
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="c1", content="Open it!!!")
    events = await until(comm, "turn.completed")
    streamed = "".join(e["text"] for e in events if e["type"] == "delta")
    assert streamed == "The gate opens!! At dawn!"
    assert events[-1]["content"] == "The gate opens. At dawn."
    assert await stored(conversation) == [
        ("user", "Open it."), ("assistant", "The gate opens. At dawn."),
    ]  # fmt: skip
    await comm.disconnect()


async def test_the_completed_reply_carries_what_display_only_scripts_show(
    conversation, character, llm
):
    @sync_to_async
    def display_script():
        create_script(conversation.tenant, scope="character", character=character, script={
            "scriptName": "bold keeper", "findRegex": "/keeper/g",
            "replaceString": "**KEEPER**", "placement": [2], "markdownOnly": True})  # fmt: skip
        set_allowed(character, True)

    await display_script()
    llm.enqueue(Reply(content="The keeper nods.", chunks=2))
    llm.enqueue(Reply(content="The lamp is lit.", chunks=2))
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="d1", content="Hello")
    completed = (await until(comm, "turn.completed"))[-1]
    assert completed["content"] == "The keeper nods."  # stored as the model wrote it
    assert completed["display"] == "The **KEEPER** nods."
    await send(comm, type="user_message", client_message_id="d2", content="And?")
    untouched = (await until(comm, "turn.completed"))[-1]
    assert "display" not in untouched  # nothing to show differently
    await comm.disconnect()
