"""Regenerate, continue, edit, pick an alternative and delete over the chat socket, with the
real ASGI app, Redis channel layer and scripted model server."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory.models import Message, MessageAlternative, MessageEdit
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def send(comm, **frame):
    await comm.send_to(text_data=json.dumps(frame))


async def until(comm, *kinds, timeout=10) -> list[dict]:
    events = []
    while True:
        event = json.loads(await comm.receive_from(timeout=timeout))
        events.append(event)
        if event["type"] in (*kinds, "error"):
            return events


async def stored(conversation) -> list[tuple[str, str]]:
    rows = await sync_to_async(list)(
        Message.objects.filter(session_id=str(conversation.id)).order_by("ts")
    )
    return [(m.role, m.content) for m in rows]


async def chat(comm, llm, client_id: str, text: str, reply: str) -> dict:
    llm.enqueue(Reply(content=reply, chunks=3))
    await send(comm, type="user_message", client_message_id=client_id, content=text)
    events = await until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    return events[-1]


async def test_regenerate_keeps_both_replies_and_shows_the_new_one(conversation, llm):
    comm = await connect(conversation)
    first = await chat(comm, llm, "c1", "Hello", "First answer.")
    llm.enqueue(Reply(content="Second answer.", chunks=2))
    await send(comm, type="regenerate", client_message_id="r1")
    events = await until(comm, "turn.completed")
    started, done = events[0], events[-1]
    assert started["kind"] == "regenerate" and started["user_message_id"] is None
    assert started["assistant_message_id"] == first["assistant_message_id"]
    assert done["content"] == "Second answer."
    assert await stored(conversation) == [("user", "Hello"), ("assistant", "Second answer.")]
    alternatives = await sync_to_async(list)(
        MessageAlternative.objects.filter(message_id=first["assistant_message_id"]).values_list(
            "index", "content"
        )
    )
    assert alternatives == [(0, "First answer."), (1, "Second answer.")]
    # The model was asked to answer "Hello" again, without the reply being replaced.
    sent = llm.requests[-1]["messages"]
    assert sent[-1]["content"] == "Hello"
    assert all(m["content"] != "First answer." for m in sent)
    turn = await Turn.objects.aget(pk=started["turn_id"])
    assert turn.kind == "regenerate" and turn.status == "complete"
    # Every page learns the message now has two alternatives and shows the second.
    [shown] = await until(comm, "message.updated")
    assert shown["message_id"] == first["assistant_message_id"]
    assert (shown["content"], shown["selected_alternative"], shown["alternatives"]) == (
        "Second answer.",
        1,
        2,
    )

    await send(comm, type="select_alternative", message_id=first["assistant_message_id"], index=0)
    [updated] = await until(comm, "message.updated")
    assert updated["content"] == "First answer." and updated["selected_alternative"] == 0
    assert updated["alternatives"] == 2
    assert await stored(conversation) == [("user", "Hello"), ("assistant", "First answer.")]
    await comm.disconnect()


async def test_continue_extends_the_last_reply(conversation, llm):
    comm = await connect(conversation)
    first = await chat(comm, llm, "c1", "Tell me", "The gate opens")
    llm.enqueue(Reply(content=" at dawn.", chunks=2))
    await send(comm, type="continue", client_message_id="k1")
    events = await until(comm, "turn.completed")
    deltas = "".join(e["text"] for e in events if e["type"] == "delta")
    assert deltas == " at dawn."
    assert events[-1]["content"] == "The gate opens at dawn."
    assert events[-1]["assistant_message_id"] == first["assistant_message_id"]
    assert await stored(conversation) == [
        ("user", "Tell me"),
        ("assistant", "The gate opens at dawn."),
    ]
    sent = llm.requests[-1]["messages"]
    # The reply to go on from, then the request to continue it.
    assert sent[-2]["role"] == "assistant" and sent[-2]["content"] == "The gate opens"
    assert sent[-1]["role"] == "system" and "Continue" in sent[-1]["content"]
    [shown] = await until(comm, "message.updated")
    assert shown["content"] == "The gate opens at dawn."
    await comm.disconnect()


async def test_edit_is_recorded_and_announced_and_can_regenerate(conversation, llm):
    comm = await connect(conversation)
    first = await chat(comm, llm, "c1", "Hi there", "Welcome back.")
    user_id = (await Turn.objects.aget(pk=first["turn_id"])).user_message_id
    llm.enqueue(Reply(content="Ah, the lighthouse.", chunks=2))
    await send(
        comm,
        type="edit",
        message_id=str(user_id),
        content="Tell me about the lighthouse",
        regenerate=True,
        client_message_id="e1",
    )
    events = await until(comm, "turn.completed")
    updated = next(e for e in events if e["type"] == "message.updated")
    assert updated["edited"] is True and updated["content"] == "Tell me about the lighthouse"
    assert events[-1]["content"] == "Ah, the lighthouse."
    assert await stored(conversation) == [
        ("user", "Tell me about the lighthouse"),
        ("assistant", "Ah, the lighthouse."),
    ]
    assert llm.requests[-1]["messages"][-1]["content"] == "Tell me about the lighthouse"
    edit = await MessageEdit.objects.aget(message_id=user_id)
    assert edit.editor == f"player:{conversation.player_id}" and edit.previous_hash != edit.new_hash
    await comm.disconnect()


async def test_delete_the_last_exchange_and_roll_back_to_a_message(conversation, llm):
    comm = await connect(conversation)
    one = await chat(comm, llm, "c1", "One", "Reply one.")
    await chat(comm, llm, "c2", "Two", "Reply two.")
    await send(comm, type="delete")
    deleted = (await until(comm, "messages.deleted"))[-1]  # after history.changed, if any
    assert len(deleted["message_ids"]) == 2
    assert await stored(conversation) == [("user", "One"), ("assistant", "Reply one.")]
    await send(comm, type="delete", message_id=one["assistant_message_id"])
    deleted = (await until(comm, "messages.deleted"))[-1]  # after history.changed, if any
    assert deleted["message_ids"] == [one["assistant_message_id"]]
    assert await stored(conversation) == [("user", "One")]
    await comm.disconnect()


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ({"type": "regenerate", "client_message_id": "x"}, "nothing_to_rewrite"),
        ({"type": "continue", "client_message_id": "x"}, "nothing_to_rewrite"),
        ({"type": "regenerate"}, "invalid_message"),
        ({"type": "edit", "message_id": "nope", "content": "x"}, "message_not_found"),
        ({"type": "edit", "message_id": 5, "content": "x"}, "invalid_message"),
        ({"type": "edit", "message_id": "x", "content": ""}, "empty_content"),
        (
            {"type": "edit", "message_id": "x", "content": "y", "regenerate": "yes"},
            "invalid_message",
        ),
        ({"type": "select_alternative", "message_id": "x", "index": -1}, "invalid_message"),
        ({"type": "select_alternative", "message_id": "x", "index": True}, "invalid_message"),
    ],
)
async def test_bad_frames_get_an_error_and_change_nothing(conversation, llm, frame, code):
    comm = await connect(conversation)
    await send(comm, **frame)
    [error] = await until(comm, "error")
    assert error["type"] == "error" and error["code"] == code, error
    assert await stored(conversation) == []
    await comm.disconnect()


async def test_a_foreign_message_is_not_found(conversation, llm, other_tenant):
    from memory import services as message_store

    foreign = await sync_to_async(message_store.save_message)(
        other_tenant, str(conversation.id), role="user", content="not yours"
    )
    comm = await connect(conversation)
    await send(comm, type="edit", message_id=str(foreign.id), content="mine now")
    [error] = await until(comm, "error")
    assert error["code"] == "message_not_found"
    assert (await Message.objects.aget(pk=foreign.pk)).content == "not yours"
    await comm.disconnect()


async def test_changes_wait_for_a_running_reply(conversation, llm):
    comm = await connect(conversation)
    first = await chat(comm, llm, "c1", "Hi", "Hello.")
    llm.enqueue(Reply(content="a slow reply " * 5, chunks=10, chunk_delay=0.2))
    await send(comm, type="user_message", client_message_id="c2", content="And?")
    await until(comm, "turn.started")
    await send(comm, type="edit", message_id=first["assistant_message_id"], content="changed")
    events = await until(comm, "turn.completed")
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["code"] == "turn_in_progress"
    if events[-1]["type"] == "error":  # the refusal came first; the turn still ends
        events = await until(comm, "turn.completed")
    assert (await Message.objects.aget(pk=first["assistant_message_id"])).content == "Hello."
    await comm.disconnect()


async def test_a_repeated_regenerate_client_id_starts_nothing_new(conversation, llm):
    comm = await connect(conversation)
    await chat(comm, llm, "c1", "Hi", "Hello.")
    llm.enqueue(Reply(content="Again.", chunks=1))
    await send(comm, type="regenerate", client_message_id="r1")
    await until(comm, "message.updated")
    await send(comm, type="regenerate", client_message_id="r1")
    [again] = await until(comm, "turn.started")
    assert again["duplicate"] is True
    assert await MessageAlternative.objects.acount() == 2
    await comm.disconnect()
