"""A restored tenant works: a chat turn over the socket on a restored conversation reads the
history that turns wrote before the export."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from console.backup.restore import restore_archive
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import Conversation, Turn
from tests.ws.test_chat_socket import connect, receive_until

from .conftest import export_bytes

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def turn(conversation, content: str) -> list[dict]:
    comm = await connect(conversation)
    message = {"type": "user_message", "client_message_id": content[:8], "content": content}
    await comm.send_to(text_data=json.dumps(message))
    events = await receive_until(comm, "turn.completed")
    await comm.disconnect()
    return events


async def test_a_turn_on_a_restored_conversation_reads_its_restored_history(
    conversation, llm, make_tenant
):
    llm.enqueue(Reply(content="The lamp is lit by the old keeper.", chunks=3))
    assert (await turn(conversation, "Who lit the lamp?"))[-1]["type"] == "turn.completed"

    data = await sync_to_async(export_bytes)(conversation.tenant)
    target = await sync_to_async(make_tenant)("restored")
    restored = await sync_to_async(restore_archive)(data, target)
    copy = await sync_to_async(Conversation.objects.get)(tenant=target)
    assert copy.pk != conversation.pk and str(copy.pk) == restored.ids.uuids[str(conversation.pk)]

    llm.clear()
    llm.enqueue(Reply(content="Yes, the keeper again.", chunks=2))
    events = await turn(copy, "And tonight?")
    assert events[-1]["type"] == "turn.completed", events[-1]
    sent = json.dumps(llm.requests[-1]["messages"])
    assert "Who lit the lamp?" in sent and "The lamp is lit by the old keeper." in sent
    stored = await sync_to_async(list)(
        Message.objects.filter(tenant=target, session_id=str(copy.pk))
        .order_by("created_at")
        .values_list("content", flat=True)
    )
    assert stored[-2:] == ["And tonight?", "Yes, the keeper again."]
    assert await sync_to_async(Turn.objects.filter(tenant=target).count)() == 2
