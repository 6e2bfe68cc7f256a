"""The player's cancel while a workflow runs, over the chat socket against the scripted
model server: the running node is cancelled, the turn ends cancelled (never
``workflow_failed``), the Actor is never asked, and the run is kept with the cancel."""

from __future__ import annotations

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.workflows.models import WorkflowRun
from tests.ws.test_chat_socket import connect
from tests.ws.test_rewrites import send, until

from .test_workflow_turns import (  # noqa: F401 (gate_book, writer: fixtures)
    by_model,
    gate_book,
    rules_node,
    run_with,
    scene_node,
    writer,
)

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


async def test_a_cancel_during_the_workflow_cancels_the_turn(
    tenant,
    conversation,
    model_config,
    writer,  # noqa: F811
    gate_book,  # noqa: F811
    llm,
):
    nodes = [rules_node(), scene_node()]
    await sync_to_async(run_with)(tenant, conversation, model_config, nodes)
    llm.enqueue(Reply(content="too late", delay=3.0))
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="c1", content="I show the key.")
    started = await until(comm, "phase.started")
    assert started[-1].get("phase") == "workflow"
    assert await sync_to_async(llm.wait_for_requests)(1)  # the rules found, the writer asked
    await send(comm, type="cancel")
    events = await until(comm, "turn.completed", timeout=20)
    assert events[-1]["type"] == "error" and events[-1]["code"] == "turn_cancelled"
    assert by_model(llm, "scripted-model") == []  # the Actor was never asked
    run = await WorkflowRun.objects.aget(conversation=conversation)
    assert run.status == "failed" and run.error["code"] == "cancelled"
    assert [n["status"] for n in run.nodes] == ["succeeded", "failed"]
    assert run.nodes[1]["error"]["code"] == "cancelled"
    await comm.disconnect()


async def test_the_players_error_event_names_the_failed_node(
    tenant,
    conversation,
    model_config,
    writer,  # noqa: F811
    gate_book,  # noqa: F811
    llm,
):
    nodes = [rules_node(), scene_node()]
    await sync_to_async(run_with)(tenant, conversation, model_config, nodes)
    await writer.adelete()  # the scene's model config is gone after the save
    comm = await connect(conversation)
    await send(comm, type="user_message", client_message_id="c1", content="I show the key.")
    events = await until(comm, "turn.completed", timeout=20)
    error = events[-1]
    assert error["type"] == "error" and error["code"] == "workflow_failed"
    assert "node 'scene' failed" in error["message"]
    assert "model_config_missing" in error["message"]
    await comm.disconnect()
