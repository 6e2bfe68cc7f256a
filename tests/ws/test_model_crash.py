"""A native crash of the local model during a streamed turn: the player gets an ``error``
event with ``model_unavailable``, the partial reply is kept as ``failed``, daphne stays up,
and the next turn succeeds on the restarted model process. Real daphne, real model."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from urllib.parse import quote

import pytest
import websockets
from asgiref.sync import sync_to_async

from console.tickets import issue_ticket
from memory.models import Message
from roleplay.llm.gateway import provider_config
from roleplay.llm.local_supervisor import LocalModelService
from roleplay.llm.providers.llama_local import local_model_available, spec_for

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(not local_model_available(), reason="the bundled model is not installed"),
]


@pytest.fixture
def local_conversation(tenant, player, character):
    from roleplay.models import Conversation, ModelConfig

    config = ModelConfig.objects.create(
        tenant=tenant,
        name="local",
        provider="llama_cpp",
        model="gemma-3-270m",
        context_limit=1024,
        max_output_tokens=300,
        timeout_ms=120_000,
        is_default=True,
    )
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    return conversation, LocalModelService(spec_for(provider_config(config)))


def frame(client_id: str, text: str) -> str:
    return json.dumps({"type": "user_message", "client_message_id": client_id, "content": text})


async def until_end(socket, on_delta=None) -> list[dict]:
    events: list[dict] = []
    while True:
        event = json.loads(await asyncio.wait_for(socket.recv(), 180))
        events.append(event)
        if event["type"] == "delta" and on_delta is not None:
            on_delta(events)
        if event["type"] in ("turn.completed", "error"):
            return events


@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGILL])
async def test_a_model_crash_mid_turn_fails_the_turn_and_the_next_one_succeeds(
    daphne_child, local_conversation, signum
):
    conversation, service = local_conversation
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    url = f"{daphne_child.ws_url}/ws/conversations/{conversation.id}/?ticket={quote(ticket)}"
    killed: list[int] = []

    def kill_after_two_deltas(events: list[dict]) -> None:
        if not killed and sum(e["type"] == "delta" for e in events) == 2:
            pid = service.state()["model_pid"]
            os.kill(pid, signum)
            killed.append(pid)

    async with websockets.connect(url) as socket:
        await socket.send(frame("crash-1", "Tell me a very long story about a dragon."))
        events = await until_end(socket, kill_after_two_deltas)
        assert killed, [e["type"] for e in events]
        error = events[-1]
        assert error["type"] == "error" and error["code"] == "model_unavailable", error
        partial = await Message.objects.aget(pk=error["assistant_message_id"])
        deltas = "".join(e["text"] for e in events if e["type"] == "delta")
        assert partial.status == "failed" and partial.content == deltas and deltas

        assert daphne_child.process.poll() is None  # the web server never went down
        await socket.send(frame("crash-2", "Hello again."))
        events = await until_end(socket)
        assert events[-1]["type"] == "turn.completed", events[-1]
        reply = await Message.objects.aget(pk=events[-1]["assistant_message_id"])
        assert reply.status == "complete"
    assert service.state()["model_pid"] != killed[0]
    assert service.state()["last_exit"] == -signum
