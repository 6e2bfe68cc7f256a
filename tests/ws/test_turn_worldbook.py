"""A chat turn reads the character's bound worldbooks and places the selected entries."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from tests.worldbook.api.test_smoke import GREYPORT
from tests.ws.test_chat_socket import connect, receive_until
from worldbook import services
from worldbook.engine.schema import BookIn

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def _bind(tenant, character, entries_extra=()):
    book_payload = {**GREYPORT, "entries": [*GREYPORT["entries"], *entries_extra]}
    book, _ = services.create_book(tenant, BookIn.model_validate(book_payload))
    services.put_bindings(tenant, str(character.id), [{"book_id": str(book.id), "revision": None}])
    return book


async def test_turn_places_selected_entries(conversation, character, tenant, llm):
    depth_entry = {
        "id": "fog",
        "title": "Fog",
        "content": "Fog rolls in from the harbour every night.",
        "keys": ["fog"],
        "position": "at_depth",
        "depth": 1,
    }
    book = await sync_to_async(_bind)(tenant, character, [depth_entry])
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps(
            {
                "type": "user_message",
                "client_message_id": "w1",
                "content": "我把铜钥匙递给守卫 in the fog",
            }
        )
    )
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    messages = llm.requests[-1]["messages"]
    system = messages[0]["content"]
    assert "灰港是一座蒸汽城市" in system and "铜钥匙只能开启" not in system
    assert system.index("灰港是一座蒸汽城市") < system.index("You are Mira")
    # The constant entry stays in the system message; the keyword entry changes with the
    # conversation, so the cache-aware layout sends it after the history and the input.
    assert messages[-1] == {"role": "system", "content": messages[-1]["content"]}
    assert "铜钥匙只能开启" in messages[-1]["content"]
    assert any(m["content"] == depth_entry["content"] for m in messages[1:-1])
    turn = await Turn.objects.aget(pk=events[0]["turn_id"])
    wb = turn.trace["worldbook"]
    assert wb["books"] == [{"book_id": str(book.id), "revision": 1}]
    reasons = {s["id"].split(":")[-1]: s["reason"] for s in wb["selected"]}
    assert reasons == {"greyport-background": "constant", "copper-key": "keyword", "fog": "keyword"}
    await comm.disconnect()


async def test_turn_without_bindings_skips_selection(conversation, llm):
    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": "w2", "content": "hi"})
    )
    events = await receive_until(comm, "turn.completed")
    turn = await Turn.objects.aget(pk=events[0]["turn_id"])
    assert "worldbook" not in turn.trace
    await comm.disconnect()


async def test_continue_selects_with_the_reply_it_goes_on_from(
    conversation, character, tenant, llm
):
    """A continue turn has no new player input: the worldbook selects with the text being
    continued (here it names the copper key, 铜钥匙) and the turn completes."""
    from tests.ws.test_rewrites import chat, send, until

    await sync_to_async(_bind)(tenant, character)
    comm = await connect(conversation)
    await chat(comm, llm, "c1", "Hello", "她举起铜钥匙")
    llm.enqueue(Reply(content=" to the guard.", chunks=2))
    await send(comm, type="continue", client_message_id="k1")
    events = await until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    turn = await Turn.objects.aget(pk=events[-1]["turn_id"])
    reasons = {s["id"].split(":")[-1]: s["reason"] for s in turn.trace["worldbook"]["selected"]}
    assert reasons.get("copper-key") == "keyword"
    await comm.disconnect()
