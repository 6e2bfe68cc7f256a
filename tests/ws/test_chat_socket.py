"""The streamed chat turn over the real ASGI app, Redis channel layer and scripted model."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.asgi import application
from console.tickets import issue_ticket
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall, Turn
from roleplay.turns.priority import STARTS
from roleplay.turns.run import settle

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


class Socket(WebsocketCommunicator):
    """A player's socket that, on disconnect, also waits for the turns it started: their
    post-turn writes must not run while the test's database is flushed."""

    async def disconnect(self, code=1000, timeout=1):
        await super().disconnect(code, timeout)
        await settle()


async def connect(conversation):
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    comm = Socket(application, f"/ws/conversations/{conversation.id}/?ticket={ticket}")
    connected, _ = await comm.connect()
    assert connected
    return comm


async def receive_until(comm, kind, timeout=10):
    events = []
    while True:
        event = json.loads(await comm.receive_from(timeout=timeout))
        events.append(event)
        if event["type"] in (kind, "error"):
            return events


async def test_a_reply_that_opens_with_the_character_s_label_loses_it(conversation, llm):
    llm.enqueue(Reply(content="\n**Mira:**  The lamp is lit.", chunks=6))
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "c1", "content": "Hi"})
    )
    events = await receive_until(comm, "turn.completed")
    deltas = [e for e in events if e["type"] == "delta"]
    assert [d["seq"] for d in deltas] == list(range(len(deltas)))
    assert "".join(d["text"] for d in deltas) == "The lamp is lit."
    assert events[-1]["content"] == "The lamp is lit."
    rows = await sync_to_async(list)(
        Message.objects.filter(session_id=str(conversation.id), role="assistant")
    )
    assert [m.content for m in rows] == ["The lamp is lit."]
    await comm.disconnect()


async def test_turn_streams_and_stores(conversation, llm):
    llm.enqueue(Reply(content="The lamp is lit. Sit down.", chunks=5))
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "c1", "content": "Hi"})
    )
    events = await receive_until(comm, "turn.completed")
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn.started"
    assert kinds[-1] == "turn.completed"
    deltas = [e for e in events if e["type"] == "delta"]
    assert [d["seq"] for d in deltas] == list(range(len(deltas)))
    assert "".join(d["text"] for d in deltas) == "The lamp is lit. Sit down."
    started, done = events[0], events[-1]
    assert done["assistant_message_id"] == started["assistant_message_id"]
    assert done["usage"]["output_tokens"] > 0
    rows = await sync_to_async(list)(
        Message.objects.filter(session_id=str(conversation.id)).order_by("ts")
    )
    assert [(m.role, m.content, m.status) for m in rows] == [
        ("user", "Hi", "complete"),
        ("assistant", "The lamp is lit. Sit down.", "complete"),
    ]
    assert str(rows[1].id) == started["assistant_message_id"]
    turn = await Turn.objects.aget(pk=started["turn_id"])
    assert turn.status == "complete" and turn.trace["prompt"]["messages"] >= 3
    assert await ModelCall.objects.filter(turn=turn, outcome="ok").acount() == 1
    # The actor prompt: system definition, the first message as opening, then the input.
    sent = llm.requests[-1]["messages"]
    assert sent[0]["role"] == "system" and "Mira" in sent[0]["content"]
    assert sent[1] == {"role": "assistant", "content": "Welcome.", "name": "Mira"} or (
        sent[1]["role"] == "assistant" and sent[1]["content"] == "Welcome."
    )
    assert sent[-1]["content"] == "Hi"
    await comm.disconnect()


async def test_a_reasoning_model_s_scratchpad_is_neither_streamed_nor_stored(conversation, llm):
    llm.enqueue(Reply(content="<think>Be brief; she is tired.</think>\n\nSit. Rest.", chunks=6))
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "r1", "content": "Hi"})
    )
    events = await receive_until(comm, "turn.completed")
    deltas = "".join(e["text"] for e in events if e["type"] == "delta")
    assert deltas == events[-1]["content"] == "Sit. Rest."
    reply = await Message.objects.aget(session_id=str(conversation.id), role="assistant")
    assert reply.content == "Sit. Rest."
    await comm.disconnect()


async def test_duplicate_client_id_starts_no_second_turn(conversation, llm):
    comm = await connect(conversation)
    msg = {"type": "user_message", "client_message_id": "same", "content": "Hello"}
    await comm.send_to(text_data=json.dumps(msg))
    await receive_until(comm, "turn.completed")
    await comm.send_to(text_data=json.dumps(msg))
    again = json.loads(await comm.receive_from(timeout=5))
    assert again["type"] == "turn.started" and again["duplicate"] is True
    assert await Turn.objects.filter(conversation=conversation).acount() == 1
    assert len(llm.requests) == 1
    await comm.disconnect()


async def test_second_message_while_generating_is_rejected(conversation, llm):
    llm.enqueue(Reply(content="slow reply " * 10, chunks=10, chunk_delay=0.05))
    comm = await connect(conversation)
    first = {"type": "user_message", "client_message_id": "a", "content": "One"}
    await comm.send_to(text_data=json.dumps(first))
    started = json.loads(await comm.receive_from(timeout=5))
    assert started["type"] == "turn.started"
    second = {"type": "user_message", "client_message_id": "b", "content": "Two"}
    await comm.send_to(text_data=json.dumps(second))
    events = await receive_until(comm, "turn.completed")
    errors = [e for e in events if e["type"] == "error"]
    assert errors and errors[0]["code"] == "turn_in_progress"
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    assert events[-1]["content"] == ("slow reply " * 10)
    contents = await sync_to_async(list)(
        Message.objects.filter(session_id=str(conversation.id)).values_list("content", flat=True)
    )
    assert "Two" not in contents and "One" in contents
    await comm.disconnect()


async def test_every_turn_start_is_counted_out_of_the_priority_gate(conversation, llm):
    """Completed, failed, duplicate and rejected starts all leave the gate open."""
    llm.enqueue(
        Reply(content="slow reply " * 5, chunks=5, chunk_delay=0.05),
        Reply(status=400),
    )
    comm = await connect(conversation)
    for client_id in ("a", "b"):  # b arrives while a generates: turn_in_progress
        await comm.send_to(
            text_data=json.dumps(
                {"type": "user_message", "client_message_id": client_id, "content": "Hi"}
            )
        )
    await receive_until(comm, "turn.completed")
    await receive_until(comm, "turn.completed")
    await comm.send_to(  # a duplicate of a
        text_data=json.dumps({"type": "user_message", "client_message_id": "a", "content": "Hi"})
    )
    assert json.loads(await comm.receive_from(timeout=5))["duplicate"] is True
    await comm.send_to(  # fails at the model: an error event, no delta
        text_data=json.dumps({"type": "user_message", "client_message_id": "c", "content": "Hi"})
    )
    assert (await receive_until(comm, "turn.completed"))[-1]["type"] == "error"
    await asyncio.sleep(0.05)
    assert STARTS.starting == 0
    await comm.disconnect()


async def test_two_sockets_see_the_same_stream(conversation, llm):
    llm.enqueue(Reply(content="shared words for both", chunks=4))
    a = await connect(conversation)
    b = await connect(conversation)
    await a.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "x", "content": "hi"})
    )
    ea = await receive_until(a, "turn.completed")
    eb = await receive_until(b, "turn.completed")
    assert [e["type"] for e in ea] == [e["type"] for e in eb]
    assert "".join(e.get("text", "") for e in eb) == "shared words for both"
    await a.disconnect()
    await b.disconnect()


async def test_cancel_keeps_partial_text(conversation, llm):
    llm.enqueue(Reply(content="word " * 200, chunks=200, chunk_delay=0.02))
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "k", "content": "go"})
    )
    started = json.loads(await comm.receive_from(timeout=5))
    first_delta = json.loads(await comm.receive_from(timeout=5))
    assert first_delta["type"] == "delta"
    await comm.send_to(text_data=json.dumps({"type": "cancel"}))
    events = await receive_until(comm, "never")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_cancelled"
    turn = await Turn.objects.aget(pk=started["turn_id"])
    assert turn.status == "cancelled"
    message = await Message.objects.aget(pk=started["assistant_message_id"])
    assert message.status == "cancelled" and message.content.startswith("word")
    await comm.disconnect()


async def test_model_failure_marks_partial_failed(conversation, llm):
    llm.enqueue(Reply(content="partial then cut " * 5, chunks=10, cut_after=3))
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "f", "content": "go"})
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "error"
    started = events[0]
    message = await Message.objects.aget(pk=started["assistant_message_id"])
    assert message.status == "failed" and message.content
    await comm.disconnect()


TEXT = "invalid_text"


@pytest.mark.parametrize(
    "frame,code",
    [
        ("not json", "invalid_json"),
        ("[1,2]", "invalid_message"),
        (json.dumps({"type": "dance"}), "unknown_type"),
        (
            json.dumps({"type": "user_message", "client_message_id": "e", "content": ""}),
            "empty_content",
        ),
        (
            json.dumps({"type": "user_message", "client_message_id": "e", "content": "   "}),
            "empty_content",
        ),
        (json.dumps({"type": "user_message", "content": "hi"}), "invalid_message"),
        (
            json.dumps({"type": "user_message", "client_message_id": "e", "content": "x" * 17000}),
            "content_too_long",
        ),
        # Each of these closed the socket with 1011 (an exception in the consumer): JSON
        # nested past the interpreter's limit, and text the database cannot store.
        ('{"a":' * 3000 + "1" + "}" * 3000, "invalid_json"),
        ("[" * 5000 + "]" * 5000, "invalid_json"),
        ('{"type": "user_message", "client_message_id": "e", "content": NaN}', "invalid_json"),
        ('{"type": "user_message", "client_message_id": "e", "content": "\\ud800"}', TEXT),
        ('{"type": "user_message", "client_message_id": "\\udfff", "content": "hi"}', TEXT),
        ('{"type": "user_message", "client_message_id": "a\\u0000", "content": "hi"}', TEXT),
        ('{"type": "edit", "message_id": "x", "content": "hi\\ud800"}', "invalid_text"),
        ('{"type": "group.trigger", "character": "\\ud800"}', "invalid_text"),
        ('{"type": "cancel", "\\ud800": 1}', "invalid_text"),
    ],
)
async def test_bad_frames_get_errors_and_socket_stays_usable(conversation, llm, frame, code):
    comm = await connect(conversation)
    await comm.send_to(text_data=frame)
    event = json.loads(await comm.receive_from(timeout=5))
    assert event["type"] == "error" and event["code"] == code
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "ok", "content": "hi"})
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    assert await Message.objects.filter(session_id=str(conversation.id)).acount() == 2
    await comm.disconnect()


async def test_socket_auth(conversation, other_tenant):
    comm = WebsocketCommunicator(application, f"/ws/conversations/{conversation.id}/")
    connected, code = await comm.connect()
    assert not connected
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    comm = WebsocketCommunicator(
        application, f"/ws/conversations/{conversation.id}/?ticket={ticket}"
    )
    assert (await comm.connect())[0]
    await comm.disconnect()
    # one-time: the same ticket cannot be used twice
    comm = WebsocketCommunicator(
        application, f"/ws/conversations/{conversation.id}/?ticket={ticket}"
    )
    assert not (await comm.connect())[0]
    # a forged ticket fails
    comm = WebsocketCommunicator(application, f"/ws/conversations/{conversation.id}/?ticket=abc")
    assert not (await comm.connect())[0]
    await asyncio.sleep(0)


async def test_abandoned_turn_does_not_block_the_conversation(conversation, llm):
    """A running turn whose process died (lease expired) is failed, and chat goes on."""
    from datetime import timedelta

    from django.utils import timezone

    stale = await Turn.objects.acreate(
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        client_message_id="ghost",
        user_message_id="00000000-0000-0000-0000-000000000001",
        assistant_message_id="00000000-0000-0000-0000-000000000002",
        lease_expires_at=timezone.now() - timedelta(seconds=1),
    )
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "n1", "content": "hi"})
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    await stale.arefresh_from_db()
    assert stale.status == "failed" and stale.error_code == "turn_abandoned"
    await comm.disconnect()


async def test_context_overflow_is_an_error_event(conversation, model_config, llm):
    """An input that cannot fit the model's window fails the turn with context_overflow."""
    model_config.context_limit = 300
    model_config.max_output_tokens = 100
    await model_config.asave()
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps(
            {"type": "user_message", "client_message_id": "big", "content": "word " * 1500}
        )
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "context_overflow"
    assert len(llm.requests) == 0
    await comm.disconnect()


async def _handshake(path: str, headers=()) -> tuple[bool, int | None]:
    comm = WebsocketCommunicator(application, path, headers=list(headers))
    connected, code = await comm.connect()
    if connected:
        await comm.disconnect()
    return connected, code


@sync_to_async
def _session_cookie(user) -> list[tuple[bytes, bytes]]:
    client = Client()
    client.force_login(user)
    return [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


@pytest.mark.parametrize(
    "bad_id",
    ["not-a-uuid", "1", "x" * 300, "%00", "123e4567-e89b-12d3-a456-42661417400", "...",
     "..%2F..%2Fetc%2Fpasswd", "a%2Fb", "%2F", "a/b"],
)  # fmt: skip
async def test_a_malformed_id_is_refused_like_an_unknown_one(conversation, operator_user, bad_id):
    """Whatever the credentials, a conversation id that is not a UUID gets the answer an
    unknown conversation gets: the handshake closed with 4404, not a server error."""
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    session = await _session_cookie(operator_user)
    unknown = uuid.uuid4()
    for query, headers in ((f"?ticket={ticket}", ()), ("", session), ("", ())):
        refused = await _handshake(f"/ws/conversations/{bad_id}/{query}", headers)
        assert refused == await _handshake(f"/ws/conversations/{unknown}/{query}", headers)
        assert refused == (False, 4404)
    # The same credentials do open the real conversation: the refusals were about the id.
    # (The ticket was not used up by the refused attempts.)
    assert (await _handshake(f"/ws/conversations/{conversation.id}/", session))[0]
    assert (await _handshake(f"/ws/conversations/{conversation.id}/?ticket={ticket}"))[0]


@pytest.mark.parametrize(
    "path", ["/ws/", "/ws/nothing/", "/ws/conversations/", "/ws/conversations//", "/..%2F..%2F"]
)
async def test_a_socket_on_an_unknown_path_is_refused(path):
    assert await _handshake(path) == (False, 4404)
