"""A daphne process killed (SIGKILL) in the middle of a streamed reply, with a second daphne
sharing the database and Redis.

The dead process's turn is released as soon as the process stops beating in Redis, not
when its lease runs out: the lease here is ten minutes, far longer than this test waits, so
a next message answered at all proves the heartbeat released the turn. The text the player
had already read (flushed while streaming, once a second) is kept as a ``failed`` reply.
"""

from __future__ import annotations

import asyncio
import json
import time
from urllib.parse import quote

import pytest
import websockets
from django.conf import settings

from console.live_server import database_url_for, start_daphne
from console.tickets import issue_ticket
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn

pytestmark = pytest.mark.django_db(transaction=True)

SLOW = Reply(content=" ".join(f"w{i}" for i in range(80)), chunks=80, chunk_delay=0.25)
LONG_LEASE = {"TURN_LEASE_SECONDS": "600"}
GIVE_UP_S = 120  # well under the lease: only the heartbeat can release the turn in time


def frame(client_id: str) -> str:
    return json.dumps({"type": "user_message", "client_message_id": client_id, "content": "Hi"})


async def recv(socket) -> dict:
    return json.loads(await asyncio.wait_for(socket.recv(), 60))


async def stream_then_kill(url: str, daphne) -> tuple[str, str]:
    """Send a message, read five deltas and two and a half seconds more, kill the process
    that streams: (turn id, the text the player saw)."""
    async with websockets.connect(url) as socket:
        await socket.send(frame("doomed"))
        seen, turn_id, deltas = [], None, 0
        deadline = None
        while deadline is None or time.monotonic() < deadline:
            event = await recv(socket)
            assert event["type"] in ("delta", "turn.started", "phase"), event
            if event["type"] == "delta":
                turn_id = event["turn_id"]
                seen.append(event["text"])
                deltas += 1
                if deltas == 5:
                    deadline = time.monotonic() + 2.5  # past two flushes
        daphne.process.kill()
        daphne.process.wait(30)
        try:  # what was already on its way to the player still reaches it
            while True:
                event = await recv(socket)
                if event["type"] == "delta":
                    seen.append(event["text"])
        except (websockets.ConnectionClosed, TimeoutError):
            pass
        return turn_id, "".join(seen)


async def next_answer(url: str) -> dict:
    """Send messages on the other process until one is answered (a refusal while the dead
    process's turn still holds the conversation is retried)."""
    async with websockets.connect(url) as socket:
        deadline = time.monotonic() + GIVE_UP_S
        attempt = 0
        while time.monotonic() < deadline:
            attempt += 1
            await socket.send(frame(f"next-{attempt}"))
            while True:
                event = await recv(socket)
                if event["type"] in ("turn.completed", "error"):
                    break
            if event["type"] == "turn.completed":
                return event
            assert event["code"] == "turn_in_progress", event
            await asyncio.sleep(0.5)
    raise AssertionError("the conversation never answered again")


def test_a_daphne_killed_mid_stream_releases_its_turn_and_keeps_the_text(conversation, llm):
    from django.db import connection

    database_url = database_url_for(connection.settings_dict)
    doomed = start_daphne(database_url, settings.REDIS_URL, extra_env=LONG_LEASE)
    other = start_daphne(database_url, settings.REDIS_URL, extra_env=LONG_LEASE)
    llm.enqueue(SLOW)
    llm.enqueue(Reply(content="I am here."))
    try:
        path = f"/ws/conversations/{conversation.id}/?ticket="
        tickets = [quote(issue_ticket(conversation)[0]) for _ in range(2)]  # one use each
        turn_id, seen = asyncio.run(stream_then_kill(doomed.ws_url + path + tickets[0], doomed))
        answered = asyncio.run(next_answer(other.ws_url + path + tickets[1]))
        assert other.process.poll() is None
    finally:
        doomed.stop()
        other.stop()
    assert answered["content"] == "I am here."
    dead = Turn.objects.get(pk=turn_id)
    assert (dead.status, dead.error_code) == ("failed", "turn_abandoned")
    assert dead.lease_expires_at.timestamp() > time.time() + 60  # not released by its lease
    kept = Message.objects.get(pk=dead.assistant_message_id)
    assert kept.status == "failed"
    # Everything streamed up to a second before the kill is kept, nothing the player did
    # not see; five deltas came more than a second before it.
    first_five = " ".join(f"w{i}" for i in range(5))
    assert kept.content.startswith(first_five) and seen.startswith(kept.content), (
        kept.content,
        seen,
    )
