"""Pre-Actor and post-turn phases over a real socket turn: what a phase adds reaches the
Actor, progress reaches the player, failures and deadlines are recorded without losing the
reply, a required phase fails the turn with its code, a cancel stops a phase, and post-turn
work runs after the reply is committed."""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager

import pytest
from asgiref.sync import sync_to_async

from console.asgi import application
from console.failures import Invalid
from console.tickets import issue_ticket
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from roleplay.turns import PLUGINS, Phase, TurnPlugin
from roleplay.turns.plugin import STAGE_HOOKS
from tests.ws.test_chat_socket import Socket

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


def plugin_of(phase: Phase, stage: str = "pre_actor") -> TurnPlugin:
    """A turn plug-in of one phase, named as it, given as the hook of ``stage``."""
    kind = type(
        f"Plugin_{phase.name}", (TurnPlugin,), {"name": phase.name, STAGE_HOOKS[stage]: phase}
    )
    return kind()


@contextmanager
def registered(*added: Phase, stage: str = "pre_actor"):
    for phase in added:
        PLUGINS.register(plugin_of(phase, stage))
    try:
        yield
    finally:
        for phase in added:
            PLUGINS.unregister(phase.name)


async def turn(conversation, text="Hi", client_id="c1", cancel_on=None) -> list[dict]:
    ticket, _ = await sync_to_async(issue_ticket)(conversation)
    comm = Socket(application, f"/ws/conversations/{conversation.id}/?ticket={ticket}")
    assert (await comm.connect())[0]
    frame = {"type": "user_message", "client_message_id": client_id, "content": text}
    await comm.send_to(text_data=json.dumps(frame))
    events = []
    while True:
        event = json.loads(await comm.receive_from(timeout=15))
        events.append(event)
        if cancel_on and event["type"] == cancel_on:
            await comm.send_to(text_data=json.dumps({"type": "cancel"}))
        if event["type"] in ("turn.completed", "error"):
            break
    await comm.disconnect()
    return events


async def test_a_pre_actor_phase_adds_context_and_reports_progress(conversation, llm):
    async def recall(ctx, run):
        await run.progress(step="searching")
        assert ctx.history == [] and ctx.user_input == "Hi"
        ctx.variables["language"] = "English"
        ctx.blocks.append(
            {"id": "recall", "position": "before_character", "content": "Mira owes a favour."}
        )

    with registered(Phase(name="recall", run=recall)):
        events = await turn(conversation)
    kinds = [e["type"] for e in events]
    assert kinds[:4] == ["turn.started", "phase.started", "phase.progress", "phase.completed"]
    assert events[2]["step"] == "searching" and events[3]["outcome"] == "ok"
    assert kinds[-1] == "turn.completed"
    assert "Mira owes a favour." in llm.requests[-1]["messages"][0]["content"]
    record = (await Turn.objects.aget(pk=events[0]["turn_id"])).trace["phases"][0]
    assert record["name"] == "recall" and record["outcome"] == "ok" and record["duration_ms"] >= 0


async def test_an_optional_phase_that_fails_or_times_out_is_recorded_and_the_turn_goes_on(
    conversation, llm
):
    async def broken(ctx, run):
        raise Invalid("recall_broken", "no")

    async def slow(ctx, run):
        await asyncio.sleep(5)

    with registered(Phase(name="broken", run=broken), Phase(name="slow", run=slow, deadline_s=0.2)):
        events = await turn(conversation)
    assert events[-1]["type"] == "turn.completed"
    trace = (await Turn.objects.aget(pk=events[0]["turn_id"])).trace
    assert [(p["name"], p["outcome"], p.get("error")) for p in trace["phases"]] == [
        ("broken", "failed", "recall_broken"),
        ("slow", "timeout", "phase_timeout"),
    ]


async def test_a_required_phase_that_fails_fails_the_turn_with_its_code(conversation, llm):
    async def broken(ctx, run):
        raise Invalid("state_unreadable", "no")

    with registered(Phase(name="state", run=broken, required=True)):
        events = await turn(conversation)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "state_unreadable"
    assert llm.requests == []  # the Actor never ran
    turn_row = await Turn.objects.aget(pk=events[0]["turn_id"])
    assert turn_row.status == "failed" and turn_row.error_code == "state_unreadable"


async def test_a_cancel_stops_a_running_phase(conversation, llm):
    async def long(ctx, run):
        await asyncio.sleep(30)

    with registered(Phase(name="long", run=long)):
        events = await turn(conversation, cancel_on="phase.started")
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_cancelled"
    assert llm.requests == []
    trace = (await Turn.objects.aget(pk=events[0]["turn_id"])).trace
    assert trace["phases"][0]["outcome"] == "cancelled"


async def test_post_turn_phases_run_after_the_commit_and_cannot_lose_the_reply(conversation, llm):
    seen = {}

    async def consolidate(ctx, run):
        stored = await Message.objects.filter(pk=ctx.turn.assistant_message_id).afirst()
        seen["reply"] = stored.content if stored else None
        raise RuntimeError("the consolidation broke")

    llm.enqueue(Reply(content="Stored first.", chunks=2))
    with registered(Phase(name="consolidate", run=consolidate), stage="post_turn"):
        events = await turn(conversation)
        for _ in range(100):  # the phase runs after the socket got turn.completed
            trace = (await Turn.objects.aget(pk=events[0]["turn_id"])).trace
            if trace.get("phases"):
                break
            await asyncio.sleep(0.05)
    assert events[-1]["type"] == "turn.completed"
    assert seen["reply"] == "Stored first."
    assert trace["phases"] == [
        {**trace["phases"][0], "name": "consolidate", "stage": "post_turn", "outcome": "failed"}
    ]
    message = await Message.objects.aget(pk=events[0]["assistant_message_id"])
    assert message.content == "Stored first." and message.status == "complete"


async def test_phases_apply_only_to_their_turn_kinds(conversation, llm):
    ran = []

    async def note(ctx, run):
        ran.append(ctx.kind)

    with registered(Phase(name="only_regenerate", run=note, kinds=frozenset({"regenerate"}))):
        events = await turn(conversation)
    assert events[-1]["type"] == "turn.completed" and ran == []
