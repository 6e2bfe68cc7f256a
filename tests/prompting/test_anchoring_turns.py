"""Anchoring through real turns over the socket (``prompting.anchoring``): the lore a
conversation keeps calling up stays where the first turn sent it, so each Actor request the
model server receives starts with the whole request before it, and the
turn's trace keeps the anchors the next turn reads. (The lore is longer than an exchange:
``anchoring``'s rule.)"""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory import services as message_store
from roleplay.models import Turn
from roleplay.prompting import trimming
from tests.ws.test_chat_socket import connect, receive_until
from worldbook import services
from worldbook.engine.schema import BookIn

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

LORE = "The lamp must never go out; " + "the keeper trims its wick at dusk. " * 6


def seed_history(tenant, conversation, count: int = 20) -> None:
    """A conversation with a past: the anchors count its stored messages."""
    for i in range(count):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Message {i} about the harbour, the boats and the weather today." * 2
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)


def bind(tenant, character):
    entry = {"id": "lamp", "keys": ["lamp"], "content": LORE}
    book, _ = services.create_book(
        tenant, BookIn.model_validate({"name": "Lighthouse", "entries": [entry]})
    )
    services.put_bindings(tenant, str(character.id), [{"book_id": str(book.id)}])


async def say(comm, text: str, cid: str) -> Turn:
    frame = {"type": "user_message", "client_message_id": cid, "content": text}
    await comm.send_to(text_data=json.dumps(frame))
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed", events[-1]
    return await Turn.objects.aget(pk=events[-1]["turn_id"])


def actor_requests(llm) -> list[list[dict]]:
    return [r["messages"] for r in llm.requests if r.get("model") == "scripted-model"]


async def test_lore_called_up_again_stays_where_it_was(tenant, character, conversation, llm):
    await sync_to_async(bind)(tenant, character)
    await sync_to_async(seed_history)(tenant, conversation)
    comm = await connect(conversation)
    try:
        first = await say(comm, "Is the lamp lit?", "a1")
        second = await say(comm, "And the lamp oil?", "a2")
        third = await say(comm, "Check the lamp again.", "a3")
    finally:
        await comm.disconnect()
    requests = actor_requests(llm)
    assert len(requests) == 3
    one, two, three = requests
    # Turn 1 sent the lore at the marker, right after the player's message.
    assert LORE in one[-1]["content"] and one[-2]["content"] == "Is the lamp lit?"
    # Turns 2 and 3 start with the whole request before them, its input included: the lore
    # stayed where it was, and is sent once.
    assert two[: len(one)] == one and three[: len(two)] == two
    assert sum(LORE in str(m["content"]) for m in three) == 1
    anchors = [dict(t.trace["prompt"]["anchors"]) for t in (first, second, third)]
    starts = [a.pop(trimming.KEY) for a in anchors]  # where the history started (trimming)
    assert all(len(a) == 1 for a in anchors)
    assert anchors[0] == anchors[1] == anchors[2]  # the same place all along
    assert starts[0][0] == starts[1][0] == starts[2][0]  # the history kept its start


async def test_a_full_window_keeps_its_first_message_from_turn_to_turn(
    conversation, model_config, llm
):
    """Past the window, the history is cut with slack once and then starts at the same
    message (``trimming``): each request starts with the whole request before it."""
    model_config.context_limit = 1024
    await model_config.asave()
    await sync_to_async(seed_history)(conversation.tenant, conversation, 40)
    comm = await connect(conversation)
    try:
        turns = [await say(comm, f"Question {n} about the lamp?", f"w{n}") for n in range(4)]
    finally:
        await comm.disconnect()
    requests = actor_requests(llm)
    assert len(requests) == 4
    firsts = {r[2]["content"] for r in requests}  # after the system message and the opening
    assert len(firsts) == 1, firsts
    for earlier, later in zip(requests, requests[1:], strict=False):
        assert later[: len(earlier)] == earlier
    dropped = [t.trace["prompt"]["dropped_history"] for t in turns]
    assert dropped[0] > 0 and len(set(dropped)) == 1
