"""The chat socket: a suspension closes a player's open socket at once (through the
channel layer, whichever process holds it); a suspended player's or a blocked turn gets
its ``error`` event and stores nothing; an operator watching stays connected."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator
from django.test import Client

from console.asgi import application
from console.tickets import issue_ticket
from memory.models import Message
from roleplay.moderation import services
from roleplay.moderation.models import Case
from roleplay.turns.run import settle
from tests.moderation.conftest import BLOCK_VIOLENCE

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def ticket_socket(conversation):
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    comm = WebsocketCommunicator(
        application, f"/ws/conversations/{conversation.id}/?ticket={ticket}"
    )
    connected, _ = await comm.connect()
    assert connected
    return comm


async def operator_socket(conversation, operator_user):
    client = Client()
    await sync_to_async(client.force_login)(operator_user)
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()
    comm = WebsocketCommunicator(application, f"/ws/conversations/{conversation.id}/",
                                 headers=[(b"cookie", cookie)])  # fmt: skip
    connected, _ = await comm.connect()
    assert connected
    return comm


async def test_a_suspension_closes_the_player_s_open_socket(conversation, operator_user):
    player_socket = await ticket_socket(conversation)
    watcher = await operator_socket(conversation, operator_user)
    await sync_to_async(services.sanction)(conversation.player, "ban", reason="abuse")
    event = json.loads(await player_socket.receive_from(timeout=10))
    assert event["type"] == "error" and event["code"] == "player_suspended"
    assert "abuse" in event["message"]
    closed = await player_socket.receive_output(timeout=10)
    assert closed == {"type": "websocket.close", "code": 4423}
    assert await watcher.receive_nothing(timeout=0.3)  # the operator is not the player
    await watcher.disconnect()


async def test_a_new_ticket_of_a_suspended_player_is_closed_at_once(conversation):
    await sync_to_async(services.sanction)(conversation.player, "suspend", reason="x", hours=1)
    comm = await ticket_socket(conversation)
    event = json.loads(await comm.receive_from(timeout=10))
    assert event["code"] == "player_suspended"
    assert (await comm.receive_output(timeout=10))["code"] == 4423


async def test_a_blocked_input_over_the_socket_is_an_error_and_stores_nothing(
    conversation, policy, llm
):
    await sync_to_async(policy)(BLOCK_VIOLENCE)
    comm = await ticket_socket(conversation)
    frame = {"type": "user_message", "client_message_id": "c1", "content": "I stab you"}
    await comm.send_to(text_data=json.dumps(frame))
    event = json.loads(await comm.receive_from(timeout=10))
    assert event["type"] == "error" and event["code"] == "input_blocked"
    assert event["client_message_id"] == "c1"
    count = await sync_to_async(Message.objects.filter(session_id=str(conversation.id)).count)()
    assert count == 0
    assert await sync_to_async(Case.objects.filter(action="block_input").count)() == 1
    await comm.disconnect()
    await settle()


async def test_a_warned_input_over_the_socket_is_told_before_the_reply_streams(
    conversation, policy, llm
):
    await sync_to_async(policy)(BLOCK_VIOLENCE)
    comm = await ticket_socket(conversation)
    frame = {"type": "user_message", "client_message_id": "c1", "content": "buy now, friend"}
    await comm.send_to(text_data=json.dumps(frame))
    events = []
    while not events or events[-1]["type"] not in ("turn.completed", "error"):
        events.append(json.loads(await comm.receive_from(timeout=10)))
    kinds = [e["type"] for e in events]
    assert kinds[:2] == ["turn.started", "moderation.warning"], kinds
    assert "delta" in kinds and kinds[-1] == "turn.completed"
    warning = events[1]
    assert warning["category"] == "spam" and warning["client_message_id"] == "c1"
    assert warning["turn_id"] == events[0]["turn_id"] and warning["message"]
    await comm.disconnect()
    await settle()


async def test_a_hidden_reply_over_the_socket_is_announced_and_completes_empty(
    conversation, policy, llm
):
    from roleplay.llm.scripted_server import Reply

    await sync_to_async(policy)(BLOCK_VIOLENCE, check_reply=True)
    llm.enqueue(Reply(content="entrails everywhere", chunks=2))
    comm = await ticket_socket(conversation)
    frame = {"type": "user_message", "client_message_id": "c1", "content": "look around"}
    await comm.send_to(text_data=json.dumps(frame))
    events = []
    while not events or events[-1]["type"] not in ("turn.completed", "error"):
        events.append(json.loads(await comm.receive_from(timeout=10)))
    hidden = [e for e in events if e["type"] == "message.hidden"]
    assert len(hidden) == 1 and events[-1]["type"] == "turn.completed"
    assert (
        events[-1]["content"] == ""
        and hidden[0]["message_id"] == events[-1]["assistant_message_id"]
    )
    await comm.disconnect()
    await settle()
