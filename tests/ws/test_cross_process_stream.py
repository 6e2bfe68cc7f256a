"""Two sockets on one conversation in two processes: each sees every turn, whichever process
runs it, and a cancel sent in one reaches a turn running in the other. One socket is on a
daphne child, the other on the app in this process; the stream between them crosses Redis.
With all sockets in one process, deltas stay off Redis."""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from urllib.parse import quote

import pytest
import redis.asyncio as aioredis
import websockets
from asgiref.sync import sync_to_async
from django.conf import settings

from console.asgi import application
from console.tickets import issue_ticket
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from tests.ws.test_chat_socket import Socket

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]

TEXT = "one two three four five six seven eight nine ten"
CHUNKS = 10


async def ticket_path(conversation) -> str:
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    return f"/ws/conversations/{conversation.id}/?ticket={quote(ticket)}"


async def in_process_socket(conversation) -> Socket:
    comm = Socket(application, await ticket_path(conversation))
    connected, _ = await comm.connect()
    assert connected
    return comm


@asynccontextmanager
async def sockets_in_both(daphne_child, conversation):
    """(socket on this process's app, socket on the daphne child), both subscribed; the
    child's is closed on leaving, this process's is left to the test."""
    here = await in_process_socket(conversation)
    path = await ticket_path(conversation)
    async with websockets.connect(daphne_child.ws_url + path) as there:
        await asyncio.sleep(0.2)  # both subscriptions are in Redis before the turn starts
        yield here, there


async def events_until_done(receive, where: str, timeout: float = 15) -> list[dict]:
    events: list[dict] = []
    while True:
        try:
            event = json.loads(await asyncio.wait_for(receive(), timeout))
        except TimeoutError:
            raise AssertionError(
                f"{where}: no turn end after {[e['type'] for e in events]}"
            ) from None
        events.append(event)
        if event["type"] in ("turn.completed", "error"):
            return events


def assert_whole_turn(events: list[dict]) -> None:
    kinds = [e["type"] for e in events]
    assert kinds[0] == "turn.started" and kinds[-1] == "turn.completed", kinds
    deltas = [e for e in events if e["type"] == "delta"]
    assert [d["seq"] for d in deltas] == list(range(CHUNKS))
    assert "".join(d["text"] for d in deltas) == TEXT == events[-1]["content"]


async def both_see_the_whole_turn(*sockets) -> list[list[dict]]:
    """Each ``(receive, name)`` socket's events up to the turn's end, each a whole turn."""
    seen = await asyncio.gather(*(events_until_done(receive, name) for receive, name in sockets))
    for events in seen:
        assert_whole_turn(events)
    return list(seen)


def user_message(client_id: str) -> str:
    return json.dumps({"type": "user_message", "client_message_id": client_id, "content": "Hi"})


@pytest.mark.parametrize("runs_in", ["child", "this_process"])
async def test_both_processes_see_every_event(daphne_child, conversation, llm, runs_in):
    llm.enqueue(Reply(content=TEXT, chunks=CHUNKS, chunk_delay=0.01))
    async with sockets_in_both(daphne_child, conversation) as (here, there):
        if runs_in == "child":
            await there.send(user_message("cross-1"))
        else:
            await here.send_to(text_data=user_message("cross-1"))
        seen_there, seen_here = await both_see_the_whole_turn(
            (there.recv, "child"), (here.receive_from, "this process")
        )
    assert seen_there[0]["turn_id"] == seen_here[0]["turn_id"]
    await here.disconnect()


async def test_a_cancel_reaches_a_turn_whose_sockets_left_its_process(
    daphne_child, conversation, llm
):
    llm.enqueue(Reply(content=TEXT, chunks=CHUNKS, chunk_delay=1.0))
    async with sockets_in_both(daphne_child, conversation) as (here, there):
        await there.send(user_message("leaving-1"))
        started = json.loads(await asyncio.wait_for(there.recv(), 15))
        assert started["type"] == "turn.started"
    # The only socket in the child is gone; the turn runs on there. Cancel it from here.
    await asyncio.sleep(0.2)
    await here.send_to(text_data=json.dumps({"type": "cancel"}))
    events = await events_until_done(here.receive_from, "this process")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_cancelled"
    assert events[-1]["turn_id"] == started["turn_id"]
    reply = await Message.objects.aget(pk=started["assistant_message_id"])
    assert reply.status == "cancelled" and len(reply.content) < len(TEXT)
    await here.disconnect()


async def publishes() -> int:
    client = aioredis.Redis.from_url(settings.REDIS_URL)
    try:
        stats = await client.info("commandstats")
    finally:
        await client.aclose()
    return int(stats.get("cmdstat_publish", {}).get("calls", 0))


async def test_deltas_stay_off_redis_when_every_socket_is_local(conversation, llm):
    llm.enqueue(Reply(content=TEXT, chunks=CHUNKS))
    first = await in_process_socket(conversation)
    second = await in_process_socket(conversation)
    before = await publishes()
    await first.send_to(text_data=user_message("local-1"))
    await both_see_the_whole_turn((first.receive_from, "first"), (second.receive_from, "second"))
    await asyncio.sleep(0.2)  # the publisher drains behind the turn
    # turn.started and turn.completed go to Redis for other processes; the 10 deltas do not
    # (at most those sent before the first subscriber count came back).
    assert await publishes() - before < 2 + CHUNKS
    await first.disconnect()
    await second.disconnect()
