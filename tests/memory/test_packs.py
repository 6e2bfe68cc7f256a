"""Pre-turn memory packs: computed after a turn by a real worker and read by the next turn
from Redis without a search; a change of the player's memory makes the next turn miss
rather than read a stale pack; Redis away or a full queue degrade, never fail, a turn."""

from __future__ import annotations

import json
import time

import pytest
import redis
from asgiref.sync import sync_to_async

from memory import packs
from memory.owners import touch
from roleplay.models import Turn
from tests.memory.test_recall import _conversation
from tests.ws.test_chat_socket import connect, receive_until

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

EARLIER = [
    ("user", "I buried the copper key under the old oak by the mill."),
    ("assistant", "I will remember where the copper key lies."),
]


@pytest.fixture(autouse=True)
def empty_refresh_queue():
    """Turns of other tests queue refreshes no worker ran: start from an empty count."""
    packs._client().delete(packs.PENDING_KEY)


async def _say(comm, cid, text):
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": cid, "content": text})
    )
    events = await receive_until(comm, "turn.completed", timeout=30)
    assert events[-1]["type"] == "turn.completed", events[-1]
    return await Turn.objects.aget(pk=events[-1]["turn_id"])


async def _pack_stored(conversation, timeout=30):
    client = packs._client()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        keys = await sync_to_async(client.keys)(f"mempack:*:{conversation.session_id}:*")
        if keys:
            return keys
        time.sleep(0.2)
    return []


async def test_the_next_turn_reads_the_pack_the_last_one_asked_for(
    celery_worker, tenant, player, character, conversation, llm
):
    await sync_to_async(_conversation)(tenant, player, character, EARLIER)
    comm = await connect(conversation)
    first = await _say(comm, "p1", "Where did I hide the copper key?")
    assert first.trace["memory_pack"]["degraded"] is True  # nothing computed yet
    assert await _pack_stored(conversation)
    second = await _say(comm, "p2", "And what should I do now?")
    pack = second.trace["memory_pack"]
    assert pack["status"] == "hit" and pack["items"] >= 1 and not pack["degraded"]
    # The pack changes from turn to turn: the cache-aware layout sends it after the history,
    # just after the player's message, not in the system message at the top.
    messages = llm.requests[-1]["messages"]
    assert packs.HEADER not in messages[0]["content"]
    system = messages[-1]["content"]
    assert messages[-1]["role"] == "system"
    assert packs.HEADER in system and "under the old oak by the mill" in system
    await comm.disconnect()


async def test_a_change_of_memory_makes_the_next_turn_miss(
    celery_worker, tenant, player, character, conversation, llm
):
    await sync_to_async(_conversation)(tenant, player, character, EARLIER)
    comm = await connect(conversation)
    await _say(comm, "m1", "Where did I hide the copper key?")
    assert await _pack_stored(conversation)
    await sync_to_async(touch)(tenant, player.pk, epoch=True)  # an entry edited, say
    second = await _say(comm, "m2", "Tell me again.")
    assert second.trace["memory_pack"]["status"] == "miss"
    assert all(packs.HEADER not in m["content"] for m in llm.requests[-1]["messages"])
    await comm.disconnect()


async def test_redis_away_degrades_the_turn_only(conversation, llm, monkeypatch):
    away = redis.Redis(unix_socket_path="/nonexistent/redis.sock", socket_timeout=0.05)
    monkeypatch.setattr(packs, "_client", lambda: away)
    comm = await connect(conversation)
    turn = await _say(comm, "r1", "Hello?")
    assert turn.trace["memory_pack"] == {"status": "unavailable", "degraded": True,
                                         "revision": 0}  # fmt: skip
    await comm.disconnect()


async def test_a_full_refresh_queue_skips_instead_of_waiting(tenant, player, character):
    client = packs._client()
    await sync_to_async(client.set)(packs.PENDING_KEY, packs.MAX_PENDING)
    try:
        owner = packs.Owner(str(tenant.pk), str(player.pk), str(character.pk), "s")
        outcome = await sync_to_async(packs.request_refresh)(owner, "mempack:x", "query")
        assert outcome == "skipped"
    finally:
        await sync_to_async(client.delete)(packs.PENDING_KEY)


async def test_a_pack_over_64_kib_is_not_stored():
    items = [{"text": "x" * 70_000, "message_ids": []}]
    assert await sync_to_async(packs.store)("mempack:big", items, "text") is False
