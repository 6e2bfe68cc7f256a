"""The chat socket's frames, fuzzed: every frame ``type`` the consumer knows, each field it
reads set to values an attacker sends (``fuzzing.hostile_frames``), and frames that are not
frame objects at all. For each example, on one socket:

- every answer is a JSON object with a ``type``; an ``error`` has a non-empty ``code``;
- the socket is never closed by the server (an exception in the consumer closes it with
  1011), and it still answers a frame after the hostile ones (a sentinel of unknown type).

Before the frame reader shared the API body's bounds, a frame nested 3,000 levels deep, or
with ``"content": "\\ud800"``, closed the socket with 1011.
"""

from __future__ import annotations

import json
import os

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.contract.fuzzing import frame_fields, hostile_frames

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES = int(os.environ.get("FUZZ_SOCKET_EXAMPLES", "80"))
SENTINEL = json.dumps({"type": "fuzz.sentinel"})


def test_the_fuzzer_knows_the_frames_fields():
    assert {"client_message_id", "content", "message_id", "index"} <= set(frame_fields())


def test_fuzz_socket_frames(conversation, llm):
    from console.asgi import application
    from console.tickets import issue_ticket
    from memory.models import Message
    from roleplay.sockets.consumers import ConversationConsumer
    from roleplay.turns.run import settle

    for ts, role, content in ((1, "user", "hello"), (2, "assistant", "Welcome in.")):
        Message.objects.create(
            tenant=conversation.tenant,
            session_id=str(conversation.id),
            role=role,
            content=content,
            ts=ts,
        )
    message_ids = [
        str(pk)
        for pk in Message.objects.filter(session_id=str(conversation.id)).values_list(
            "pk", flat=True
        )
    ]
    ids = {
        "message_id": message_ids,
        "assistant_message_id": message_ids,
        "character": [str(conversation.character_id), conversation.character.name],
        "client_message_id": ["fuzz-1"],
        "content": ["hello"],
    }
    frames = hostile_frames(sorted(ConversationConsumer.FRAMES), frame_fields(), ids)

    async def exchange(sent: list[str | bytes]) -> None:
        ticket, _ = issue_ticket(conversation)
        path = f"/ws/conversations/{conversation.id}/?ticket={ticket}"
        comm = WebsocketCommunicator(application, path)
        connected, _ = await comm.connect()
        assert connected
        for frame in [*sent, SENTINEL]:
            if isinstance(frame, bytes):
                await comm.send_to(bytes_data=frame)
            else:
                await comm.send_to(text_data=frame)
        while True:
            output = await comm.receive_output(timeout=20)
            assert output["type"] == "websocket.send", (output, sent)
            event = json.loads(output["text"])
            assert isinstance(event, dict) and isinstance(event.get("type"), str), event
            if event["type"] == "error":
                assert isinstance(event.get("code"), str) and event["code"], event
                if event["code"] == "unknown_type" and "fuzz.sentinel" in event["message"]:
                    break
        await comm.disconnect()
        await settle()

    @settings(
        max_examples=EXAMPLES,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(sent=st.lists(frames, min_size=1, max_size=3))
    def run(sent):
        async_to_sync(exchange)(sent)

    run()


# Handshakes an attacker makes: ids no conversation has, in every spelling, and cookies no
# browser sends. Each is refused (or, for the real id with no credentials, refused too);
# none may raise in the app. A session cookie holding a NUL failed every handshake with
# the database's DataError before ``console.sessions``.
HANDSHAKE_PATHS = ["{id}", "{ID}", "%7B{id}%7D", "urn:uuid:{id}", "%00", "x" * 3000, "-1"]


def test_fuzz_socket_handshakes(conversation):
    from console.asgi import application
    from tests.contract.fuzzing import ODD_COOKIES

    async def handshake(path: str, cookie: str) -> tuple[bool, int | None]:
        headers = [(b"cookie", cookie.encode("latin-1"))]
        comm = WebsocketCommunicator(application, path, headers=headers)
        connected, code = await comm.connect(timeout=10)
        if connected:
            await comm.disconnect()
        return connected, code

    cid = str(conversation.id)
    for turn, spelling in enumerate(HANDSHAKE_PATHS):
        path = f"/ws/conversations/{spelling.format(id=cid, ID=cid.upper())}/"
        connected, code = async_to_sync(handshake)(path, ODD_COOKIES[turn % len(ODD_COOKIES)])
        assert (connected, code) == (False, 4404), path[:80]
