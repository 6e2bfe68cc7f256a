"""The ``auto_reply`` socket frame refuses bad input with an ``error`` and stores nothing."""

from __future__ import annotations

import json
import uuid

import pytest

from memory.models import Message
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def _answer(comm, frame):
    await comm.send_to(text_data=json.dumps({"type": "auto_reply", **frame}))
    return json.loads(await comm.receive_from(timeout=10))


@pytest.mark.parametrize(
    "frame",
    [
        {},
        {"assistant_message_id": 5, "language": "en"},
        {"assistant_message_id": "not-a-uuid", "language": "en"},
        {"assistant_message_id": str(uuid.uuid4())},
        {"assistant_message_id": str(uuid.uuid4()), "language": ""},
        {"assistant_message_id": str(uuid.uuid4()), "language": "x" * 41},
        {"assistant_message_id": str(uuid.uuid4()), "language": ["en"]},
        {"assistant_message_id": str(uuid.uuid4()), "language": "en", "wait_ms": -1},
        {"assistant_message_id": str(uuid.uuid4()), "language": "en", "wait_ms": 120001},
        {"assistant_message_id": str(uuid.uuid4()), "language": "en", "wait_ms": True},
        {"assistant_message_id": str(uuid.uuid4()), "language": "en", "wait_ms": "5"},
    ],
)
async def test_bad_frames_are_refused(conversation, llm, frame):
    comm = await connect(conversation)
    event = await _answer(comm, frame)
    assert event["type"] == "error" and event["code"] == "invalid_message", event
    assert await Message.objects.acount() == 0
    await comm.disconnect()


async def test_a_conversation_without_agent_v2_says_so(conversation, llm):
    comm = await connect(conversation)
    event = await _answer(comm, {"assistant_message_id": str(uuid.uuid4()), "language": "en"})
    assert event["code"] == "auto_reply_not_configured"
    assert "assistant_message_id" in event
    await comm.disconnect()
