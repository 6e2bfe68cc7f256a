"""Every WebSocket route of ``roleplay.sockets.routing``, by tenant and by role, over the real ASGI
app (Channels auth, sessions, the Redis channel layer).

- another tenant's object in the path is refused before the handshake completes (the same
  refusal as an unknown or malformed id), for a console session and for an API ticket;
- a viewer may watch a conversation but not write to it: a message is answered with a
  ``forbidden`` error and nothing is stored.
"""

from __future__ import annotations

import json
import uuid

import pytest
from asgiref.sync import sync_to_async
from channels.testing import WebsocketCommunicator

from console.asgi import application
from tests.matrix.routes import socket_routes
from tests.matrix.tables import path_for

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

SOCKETS = socket_routes()
REFUSED = 4404  # the consumer's close code for "no such conversation"


def _session(client) -> list[tuple[bytes, bytes]]:
    return [(b"cookie", f"sessionid={client.cookies['sessionid'].value}".encode())]


async def _open(path: str, headers=()):
    """``(communicator, accepted, close code)``; the communicator is open when accepted."""
    communicator = WebsocketCommunicator(application, path, headers=list(headers))
    accepted, code = await communicator.connect(timeout=10)
    return communicator, accepted, code


async def _refused(path: str, headers=()) -> bool:
    _, accepted, code = await _open(path, headers)
    return not accepted and code == REFUSED


async def _accepted(path: str, headers=()) -> bool:
    communicator, accepted, _ = await _open(path, headers)
    if accepted:
        await communicator.disconnect()
    return accepted


@pytest.mark.parametrize("route", SOCKETS, ids=str)
async def test_another_tenants_object_is_refused(route, mine, theirs, console_client):
    me = _session(await sync_to_async(console_client)(mine.tenant, "admin"))
    assert await _refused(path_for(route, theirs), me)
    for value in (uuid.uuid4(), "not-a-uuid", "9" * 40):  # unknown and malformed: the same
        assert await _refused(route.path(**dict.fromkeys(route.params, value)), me), value
    assert await _accepted(path_for(route, mine), me)


@pytest.mark.parametrize("route", SOCKETS, ids=str)
async def test_a_ticket_opens_only_its_own_conversation(route, mine, theirs):
    from console.tickets import issue_ticket

    ticket, _ = await sync_to_async(issue_ticket)(theirs.objects.conversation)
    assert await _refused(f"{path_for(route, mine)}?ticket={ticket}")
    assert await _accepted(f"{path_for(route, theirs)}?ticket={ticket}")


@pytest.mark.parametrize("route", SOCKETS, ids=str)
async def test_a_viewer_watches_but_cannot_write(route, mine, console_client):
    from memory.models import Message

    viewer = await sync_to_async(console_client)(mine.tenant, "viewer")
    before = await Message.objects.acount()
    communicator, accepted, _ = await _open(path_for(route, mine), _session(viewer))
    assert accepted
    frame = {"type": "user_message", "client_message_id": "v1", "content": "Hello"}
    await communicator.send_to(text_data=json.dumps(frame))
    event = json.loads(await communicator.receive_from(timeout=10))
    assert event["type"] == "error" and event["code"] == "forbidden", event
    await communicator.disconnect()
    assert await Message.objects.acount() == before


@pytest.mark.parametrize("route", SOCKETS, ids=str)
async def test_a_player_opens_only_their_own_conversations(route, mine, settings):
    """A player signed in on /app/ opens their own conversation and nobody else's: another
    player's of the same tenant is refused like a foreign tenant's."""
    from django.test import Client

    from roleplay.accounts import services
    from roleplay.conversations.services.conversations import start_conversation

    settings.PLAYER_APP_TENANT = mine.tenant.name

    def player_with_chat(email: str):
        account = services.create_account(mine.tenant, email=email, password="pw-sock-123456")
        chat = start_conversation(
            mine.tenant, player=account.player, character=mine.objects.character
        )
        client = Client()
        assert (
            client.post("/app/login/", {"email": email, "password": "pw-sock-123456"}).status_code
            == 302
        )
        return client, chat

    me, my_chat = await sync_to_async(player_with_chat)("me@example.com")
    _, their_chat = await sync_to_async(player_with_chat)("them@example.com")
    assert await _accepted(route.path(**dict.fromkeys(route.params, my_chat.id)), _session(me))
    assert await _refused(route.path(**dict.fromkeys(route.params, their_chat.id)), _session(me))
    assert await _refused(path_for(route, mine), _session(me))  # an operator's player's chat
