"""The chat page's newer socket frames and events, with the real ASGI app and scripted model:
``delete_message`` (one message), ``select_opening`` (the card's greetings), the finish
reason of a reply cut short, and the title a conversation gets from its first exchange (on
``turn.completed``)."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from memory import services as message_store
from roleplay.llm.scripted_server import Reply
from roleplay.models import Conversation
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, stored, until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@sync_to_async
def save_history(conversation, *lines):
    return [
        message_store.save_message(
            conversation.tenant, conversation.session_id, role=role, content=text
        )
        for role, text in lines
    ]


def without_history_changed(events: list[dict]) -> list[dict]:
    return [e for e in events if e["type"] != "history.changed"]


async def test_delete_message_removes_that_message_only(conversation, llm):
    rows = await save_history(
        conversation, ("user", "One"), ("assistant", "A."), ("user", "Two"), ("assistant", "B.")
    )
    comm = await connect(conversation)
    await send(comm, type="delete_message", message_id=str(rows[1].id))
    [event] = await until(comm, "messages.deleted")
    assert event == {"type": "messages.deleted", "message_ids": [str(rows[1].id)]}
    assert await stored(conversation) == [("user", "One"), ("user", "Two"), ("assistant", "B.")]

    # The deletion's ``history.changed`` goes out through the hub and may come after it.
    await send(comm, type="delete_message", message_id=str(rows[1].id))
    [error] = without_history_changed(await until(comm, "messages.deleted"))
    assert error["type"] == "error" and error["code"] == "message_not_found"
    await send(comm, type="delete_message")
    [error] = without_history_changed(await until(comm, "messages.deleted"))
    assert error["code"] == "invalid_message"
    await comm.disconnect()


@sync_to_async
def give_greetings(character):
    character.alternate_greetings = ["Second hello.", "Third hello."]
    character.save(update_fields=["alternate_greetings"])


async def test_select_opening(conversation, character, llm):
    await give_greetings(character)
    comm = await connect(conversation)
    await send(comm, type="select_opening", index=1)
    [event] = await until(comm, "conversation.updated")
    assert event["type"] == "conversation.updated"
    assert (event["greeting_index"], event["greetings"], event["opening"]) == (
        1,
        3,
        "Second hello.",
    )
    fresh = await Conversation.objects.aget(pk=conversation.pk)
    assert fresh.greeting_index == 1

    for bad in (-1, True, "1"):
        await send(comm, type="select_opening", index=bad)
        [error] = await until(comm, "conversation.updated")
        assert error["code"] == "invalid_message"
    await send(comm, type="select_opening", index=9)
    [error] = await until(comm, "conversation.updated")
    assert error["code"] == "opening_not_found"
    assert (await Conversation.objects.aget(pk=conversation.pk)).greeting_index == 1
    await comm.disconnect()


async def test_a_reply_cut_at_the_token_limit_says_so(conversation, llm):
    llm.enqueue(Reply(content="The lamp is", chunks=2, finish_reason="length"))
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="c1", content="Tell me a story")
    events = await until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    assert events[-1]["finish_reason"] == "length"

    llm.enqueue(Reply(content=" lit.", chunks=1))
    await send(comm, type="continue", client_message_id="k1")
    events = await until(comm, "turn.completed")
    assert events[-1]["finish_reason"] == "stop"
    await comm.disconnect()


async def test_the_first_exchange_titles_the_conversation(conversation, llm):
    llm.enqueue(Reply(content="*Mira nods.* The gate opens at dawn.", chunks=2))
    comm = await connect(conversation)
    text = "Where does the **old road** lead, past the copper gate and the harbour walls?"
    await send(comm, type="user_message", client_message_id="c1", content=text)
    done = (await until(comm, "turn.completed"))[-1]
    title = "Where does the old road lead, past the copper gate and the…"
    assert done["type"] == "turn.completed" and done["title"] == title
    assert (await Conversation.objects.aget(pk=conversation.pk)).title == title

    # Given once: the next turn neither changes it nor says it again.
    llm.enqueue(Reply(content="Yes.", chunks=1))
    await send(comm, type="user_message", client_message_id="c2", content="Is that so, Mira?")
    done = (await until(comm, "turn.completed"))[-1]
    assert done["type"] == "turn.completed" and "title" not in done
    assert (await Conversation.objects.aget(pk=conversation.pk)).title == title
    await comm.disconnect()


async def test_a_title_is_given_once(conversation, llm):
    from roleplay.conversations.services import titles as conversation_titles

    await save_history(
        conversation, ("user", "Hi"), ("assistant", "*Mira waves.* Hello there, traveller.")
    )
    give = sync_to_async(conversation_titles.give_title)
    assert await give(conversation) == "Mira waves. Hello there, traveller."
    # A later call, or one after a person titled the conversation, leaves the title alone.
    assert await give(conversation) is None
    await Conversation.objects.filter(pk=conversation.pk).aupdate(title="")
    fresh = await Conversation.objects.aget(pk=conversation.pk)
    await Conversation.objects.filter(pk=conversation.pk).aupdate(title="Mine")
    assert await give(fresh) is None
    assert (await Conversation.objects.aget(pk=conversation.pk)).title == "Mine"
