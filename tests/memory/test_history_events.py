"""A change of a conversation's history made through any door (a rollback or a trim through
the REST API, an edit) reaches the sockets open on it at once, as ``history.changed``:
the player's page and the operator's read the transcript again."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory import services as message_store
from tests.ws.test_chat_socket import connect, receive_until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def _say(tenant, conversation):
    return [
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
        for role, text in (("user", "Open the gate."), ("assistant", "It creaks open."))
    ]


async def test_a_rollback_and_a_trim_through_the_api_reach_the_open_sockets(
    api, tenant, conversation
):
    said = await sync_to_async(_say)(tenant, conversation)
    player, operator = await connect(conversation), await connect(conversation)
    path = f"/api/v1/conversations/{conversation.pk}/messages"
    answer = await sync_to_async(api.post)(
        f"{path}/rollback", {"timestamps": [said[-1].ts]}, format="json"
    )
    assert answer.status_code == 200 and answer.json()["deleted"] == 1
    for comm in (player, operator):
        events = await receive_until(comm, "history.changed")
        assert events[-1] == {"type": "history.changed", "reason": "deleted"}
    answer = await sync_to_async(api.post)(f"{path}/archive", {"keep_recent": 0}, format="json")
    assert answer.status_code == 200 and answer.json()["archived"] == 1
    events = await receive_until(player, "history.changed")
    assert events[-1] == {"type": "history.changed", "reason": "trimmed"}
    await player.disconnect()
    await operator.disconnect()


async def test_an_edit_through_the_api_says_the_history_changed(api, tenant, conversation):
    said = await sync_to_async(_say)(tenant, conversation)
    comm = await connect(conversation)
    answer = await sync_to_async(api.patch)(
        f"/api/v1/conversations/{conversation.pk}/messages/{said[0].pk}/",
        {"content": "Close the gate."},
        format="json",
    )
    assert answer.status_code == 200, answer.content
    events = [json.loads(await comm.receive_from(timeout=10)) for _ in range(2)]
    assert {e["type"] for e in events} == {"message.updated", "history.changed"}
    assert {"type": "history.changed", "reason": "edited"} in events
    await comm.disconnect()
