"""Agent V2 end to end over the socket, a real Celery worker and the scripted model server
with a model name per role: the background run beside the Actor, its commit, its record."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from roleplay.agentic import recorded
from roleplay.agentic.engine.inputs import DEFAULT_NOTE, recorded_guidance
from roleplay.agentic.services import agent_state
from roleplay.models import AgentLedgerEntry, ModelCall, PlanningRun
from tests.agentic.world import scripted_world
from tests.ws.test_chat_socket import connect

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def until(comm, kind, timeout=30):
    events = []
    while True:
        event = json.loads(await comm.receive_from(timeout=timeout))
        events.append(event)
        if event["type"] == kind:
            return events


async def say(comm, text, cid):
    await comm.send_to(
        text_data=json.dumps({"type": "user_message", "client_message_id": cid, "content": text})
    )


async def test_happy_path(planning_relay, tenant, player, character, llm):
    scenario, conversation, router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "I promise to bring the key back by dawn.", "a1")
    events = await until(comm, "planning.completed")
    done = events[-1]
    assert done["outcome"] == "updated" and done["revision"] == 1, done
    run = await PlanningRun.objects.aget(turn_id=done["turn_id"])
    assert run.status == "done" and run.revision == 1
    assert "manage_callbacks" in run.tools_requested
    assert "update_director_state" in run.tools_requested
    assert set(run.tools_run) == {"manage_callbacks", "judge_npc", "direct_scene"}
    read = await sync_to_async(agent_state.read_state)(conversation, scenario)
    assert read.revision == 1 and read.state.startswith("[Agentic RP State]")
    assert str(read.source_message_id) == str(run.assistant_message_id)
    keys = [e.key async for e in AgentLedgerEntry.objects.filter(conversation=conversation)]
    assert "manage_callbacks:turn:1" in keys
    purposes = {c.purpose async for c in ModelCall.objects.filter(turn_id=run.turn_id)}
    assert {"actor", "orchestrator", "director", "specialist:manage_callbacks"} <= purposes
    # the next turn's Actor reads revision 1
    await say(comm, "And now?", "a2")
    second = (await until(comm, "planning.completed"))[-1]
    actor_requests = router.seen["actor"]
    # the auto-reply guidance is not stored twice: made again from the recorded inputs, it
    # is the block this turn's Actor read
    later = await PlanningRun.objects.aget(turn_id=second["turn_id"])
    assert "guidance" not in later.snapshot
    guidance = recorded_guidance((await sync_to_async(recorded.restore)(later)).snapshot)
    # The state changes from turn to turn: the cache-aware layout sends it after the
    # history, in the system message right after the player's (messages[-1]).
    assert "one notes." in guidance and guidance in actor_requests[-1]["messages"][-1]["content"]
    assert "one notes." in json.dumps(actor_requests[-1]["messages"])
    assert "one notes." not in json.dumps(actor_requests[0]["messages"])
    first_system = actor_requests[0]["messages"][-1]["content"]
    assert DEFAULT_NOTE in first_system  # no state yet: the conservative default note
    assert DEFAULT_NOTE not in json.dumps(actor_requests[-1]["messages"])
    await comm.disconnect()


async def test_auto_replies_over_rest_and_socket(planning_relay, tenant, player, character, llm):
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "Hello there.", "b1")
    events = await until(comm, "turn.completed")
    reply_id = events[-1]["assistant_message_id"]
    await comm.send_to(
        text_data=json.dumps(
            {"type": "auto_reply", "assistant_message_id": reply_id, "language": "en"}
        )
    )
    options = await until(comm, "auto_reply.options")
    assert options[-1]["options"] == ["Go on.", "How do you feel?", "Look around."]
    assert options[-1]["usage"]["total_tokens"] > 0
    request = router.seen["autoreply"][-1]
    assert "The keeper nods" in request["messages"][-1]["content"]
    assert request["temperature"] == 0.7
    await comm.disconnect()


async def test_the_background_reads_the_selected_lore_only_when_asked(
    planning_relay, tenant, player, character, llm
):
    from tests.ws.test_turn_worldbook import _bind

    await sync_to_async(_bind)(tenant, character)
    _scenario, conversation, router = await scripted_world(
        tenant, player, character, llm, backgroundWorldbook=True
    )
    comm = await connect(conversation)
    await say(comm, "我把铜钥匙递给守卫", "w1")
    await until(comm, "planning.completed")
    materials = router.seen["orchestrator"][0]["messages"][-1]["content"]
    assert "WORLD NOTES" in materials and "铜钥匙只能开启" in materials
    await comm.disconnect()


async def test_the_background_reads_no_lore_by_default(
    planning_relay, tenant, player, character, llm
):
    from tests.ws.test_turn_worldbook import _bind

    await sync_to_async(_bind)(tenant, character)
    _scenario, conversation, router = await scripted_world(tenant, player, character, llm)
    comm = await connect(conversation)
    await say(comm, "我把铜钥匙递给守卫", "w2")
    await until(comm, "planning.completed")
    actor = router.seen["actor"][0]["messages"][-1]["content"]  # the per-turn context
    assert "铜钥匙只能开启" in actor  # the Actor has the lore; the background does not
    assert "WORLD NOTES" not in router.seen["orchestrator"][0]["messages"][-1]["content"]
    await comm.disconnect()
