"""The bounded runtime in the product, end to end against the scripted model server: the
``bounded_runtime`` capability's model calls the gateway (recorded as ``workflow_runtime``
calls), calls a registered capability as a tool, answers, and its state is committed by
compare-and-set on ``WorkflowState``; the next run reads the new revision. Also the store's
compare-and-set under a race, bad node input, a failed run, and ``fast+slow`` in Celery."""

from __future__ import annotations

import asyncio
import json
import time
from types import MappingProxyType

import pytest
from asgiref.sync import sync_to_async

from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue
from roleplay.workflows.engine.runtime import StateCandidate
from roleplay.workflows.runtime_store import ConversationStateStore
from roleplay.workflows.state_models import RuntimeRun, WorkflowState

from .runtime_support import HISTORY, QUERY, registered_gate_rules, scope_of

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gate_rules():
    with registered_gate_rules() as capability:
        yield capability


async def run_node(
    conversation, node: dict, node_id="continuity", extra=None, cancel=None
) -> CapabilityValue:
    capability = registry.build("bounded_runtime", scope_of(conversation, extra))
    # as the workflow executor hands it: a read-only mapping
    call = CapabilityCall(node_id, MappingProxyType(node), QUERY, {})
    return await capability.execute(call, cancel or asyncio.Event())


def node_for(model_config, **more) -> dict:
    return {
        "modelConfigId": str(model_config.pk),
        "systemPrompt": "Check continuity. Answer the new state as one JSON object.",
        "tools": ["test_gate_rules"],
        "stateKey": "continuity",
        "commitState": True,
        "emitPrompt": True,
        **more,
    }


async def test_the_model_calls_a_tool_then_answers_and_the_state_is_committed(
    conversation, model_config, llm, gate_rules
):
    llm.enqueue(
        Reply(tool_calls=[{"name": "test_gate_rules", "arguments": {"topic": "gate"}}]),
        Reply(content='{"key": "with the captain"}'),
    )
    value = await run_node(conversation, node_for(model_config))

    summary = value.value
    assert (summary["status"], summary["stateOutcome"], summary["revision"]) == (
        "completed", "committed", 1
    )  # fmt: skip
    assert summary["calls"] == 2 and summary["toolCalls"] == 1
    assert summary["toolResults"][0]["value"] == {
        "rule": "Only the captain's key opens the north gate."
    }
    assert value.prompt_content == '{"key": "with the captain"}'
    assert gate_rules.calls == [(conversation.pk, {"topic": "gate"}, QUERY)]

    first, second = llm.requests
    assert [m["role"] for m in first["messages"]] == ["system", "system", "assistant", "user"]
    assert first["messages"][1]["content"] == "Saved state: none yet (revision 0)."
    assert first["messages"][-1]["content"] == QUERY
    assert [t["function"]["name"] for t in first["tools"]] == ["test_gate_rules"]
    told = second["messages"][-1]
    assert told["role"] == "tool"
    assert json.loads(told["content"])["value"]["rule"].startswith("Only the captain's key")

    row = await WorkflowState.objects.aget(conversation=conversation, key="continuity")
    assert (row.state, row.revision) == ({"key": "with the captain"}, 1)
    purposes = [p async for p in ModelCall.objects.values_list("purpose", flat=True)]
    assert purposes == ["workflow_runtime", "workflow_runtime"]

    # The next run reads the saved state at its new revision and moves it on.
    llm.enqueue(Reply(content='```json\n{"key": "returned"}\n```'))
    again = await run_node(conversation, node_for(model_config))
    assert (again.value["stateOutcome"], again.value["revision"]) == ("committed", 2)
    saved = llm.requests[-1]["messages"][1]["content"]
    assert saved == 'Saved state (revision 1):\n{"key": "with the captain"}'
    await row.arefresh_from_db()
    assert (row.state, row.revision) == ({"key": "returned"}, 2)


async def test_an_answer_that_is_not_a_valid_state_leaves_it_unchanged(
    conversation, model_config, llm, gate_rules
):
    llm.enqueue(Reply(content="The key is with the captain now."), Reply(content='{"key": 3}'))
    value = await run_node(conversation, node_for(model_config))
    assert value.value["stateOutcome"] == "unchanged"
    schema = {"type": "object", "properties": {"key": {"type": "string"}}}
    value = await run_node(conversation, node_for(model_config, stateSchema=schema))
    assert value.value["stateOutcome"] == "unchanged"
    assert not await WorkflowState.objects.filter(conversation=conversation).aexists()


async def test_a_cost_limit_needs_a_price_and_is_kept(conversation, model_config, llm):
    usage = {"prompt_tokens": 600_000, "completion_tokens": 100_000}
    with pytest.raises(CapabilityError) as caught:
        llm.enqueue(Reply(content="{}", usage=usage))
        await run_node(conversation, node_for(model_config, tools=[], limits={"maxCostUsd": 1}))
    assert caught.value.code == "usage_missing"

    pricing = {"inputUsdPerMillion": 1.0, "outputUsdPerMillion": 4.0}  # this call: $1.00
    llm.enqueue(Reply(content="{}", usage=usage))
    value = await run_node(
        conversation,
        node_for(model_config, tools=[], limits={"maxCostUsd": 1}, pricing=pricing),
    )
    assert value.value["usage"]["cost_usd"] == pytest.approx(1.0)
    llm.enqueue(Reply(content="{}", usage=usage))
    with pytest.raises(CapabilityError) as caught:
        await run_node(
            conversation,
            node_for(model_config, tools=[], limits={"maxCostUsd": 0.99}, pricing=pricing),
        )
    assert caught.value.code == "cost_budget_exceeded"


async def test_without_a_given_history_the_stored_messages_are_read(
    conversation, model_config, llm
):
    """The turn plug-in gives the session id: the runtime reads the latest stored messages
    (``historyMessages`` of them), without the player's message of this turn."""
    lines = [("user", "Hello."), ("assistant", "Lia nods."), ("user", "Where is the gate?"),
             ("assistant", "North."), ("user", QUERY)]  # fmt: skip
    await sync_to_async(_store_messages)(conversation, lines)
    llm.enqueue(Reply(content="{}"))
    node = node_for(model_config, tools=[], historyMessages=2)
    await run_node(conversation, node, extra={"session_id": conversation.session_id})
    messages = llm.requests[-1]["messages"]
    assert messages[2:] == [
        {"role": "user", "content": "Where is the gate?"},
        {"role": "assistant", "content": "North."},
        {"role": "user", "content": QUERY},
    ]


def _store_messages(conversation, lines) -> None:
    from memory.models import Message

    for ts, (role, content) in enumerate(lines, start=1):
        Message.objects.create(
            tenant_id=conversation.tenant_id,
            session_id=conversation.session_id,
            role=role,
            content=content,
            ts=ts,
        )


GATE = {"systemPrompt": "Does this turn change a fact? Answer {run, reason, confidence}."}


async def test_a_gate_that_says_no_skips_the_loop(conversation, model_config, llm, gate_rules):
    llm.enqueue(Reply(content='{"run": false, "reason": "small talk", "confidence": 0.9}'))
    value = await run_node(conversation, node_for(model_config, gate=GATE))
    summary = value.value
    assert (summary["status"], summary["calls"], summary["final"]) == ("completed", 0, None)
    assert summary["gate"]["run"] is False and summary["gate"]["reason"] == "small talk"
    assert summary["gate"]["latencyMs"] >= 0
    assert summary["stateOutcome"] == "unchanged" and value.prompt_content is None
    assert len(llm.requests) == 1 and "tools" not in llm.requests[0]
    assert llm.requests[0]["messages"][0]["content"] == GATE["systemPrompt"]
    purposes = [p async for p in ModelCall.objects.values_list("purpose", flat=True)]
    assert purposes == ["workflow_runtime_gate"]  # the gate's cost is recorded


async def test_a_gate_that_says_yes_runs_the_loop(conversation, model_config, llm, gate_rules):
    llm.enqueue(Reply(content='{"run": true}'), Reply(content='{"key": "moved"}'))
    value = await run_node(conversation, node_for(model_config, gate=GATE))
    assert value.value["calls"] == 1 and value.value["stateOutcome"] == "committed"
    assert value.value["gate"]["run"] is True


@pytest.mark.parametrize(
    "answer", ["yes, run it", '{"run": "yes"}', '{"run": true, "mood": "curious"}', "[true]"]
)
async def test_a_gate_answer_of_another_shape_fails_the_node(
    conversation, model_config, llm, gate_rules, answer
):
    llm.enqueue(Reply(content=answer))
    with pytest.raises(CapabilityError) as caught:
        await run_node(conversation, node_for(model_config, gate=GATE))
    assert caught.value.code == "gate_invalid"
    assert len(llm.requests) == 1


async def test_the_store_compares_and_sets(conversation, other_tenant):
    store = ConversationStateStore(conversation.tenant_id, conversation.pk, "k")
    assert tuple(await store.get()) == (None, 0)
    first, second = await asyncio.gather(
        store.compare_and_set(0, StateCandidate({"n": 1})),
        store.compare_and_set(0, StateCandidate({"n": 2})),
    )
    assert sorted([first, second]) == [False, True]
    state, revision = await store.get()
    assert revision == 1
    assert await store.compare_and_set(1, StateCandidate({"n": 3}))
    assert not await store.compare_and_set(1, StateCandidate({"n": 4}))
    assert tuple(await store.get()) == ({"n": 3}, 2)
    # another tenant's conversation id reads nothing of it
    other = ConversationStateStore(other_tenant.pk, conversation.pk, "k")
    assert tuple(await other.get()) == (None, 0)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"tools": ["no_such_tool"]}, "not registered"),
        ({"tools": ["bounded_runtime"]}, "its own tool"),
        ({"rolePrompt": "director"}, "exactly one"),
        ({"limits": {"maxSteps": 0}}, "maxSteps"),
        ({"mode": "fast"}, "mode"),
        ({"extra": 1}, "extra"),
        ({"stateSchema": {"type": 3}}, "stateSchema"),
    ],
)
async def test_bad_node_input_is_a_coded_error(conversation, model_config, change, message):
    with pytest.raises(CapabilityError) as caught:
        await run_node(conversation, {**node_for(model_config, tools=[]), **change})
    assert caught.value.code == "bad_input"
    assert message in caught.value.message


async def test_a_missing_model_config_is_a_coded_error(conversation, model_config):
    with pytest.raises(CapabilityError) as caught:
        await run_node(conversation, node_for(model_config, tools=[], modelConfigId="gone"))
    assert caught.value.code == "model_config_missing"


async def test_a_failed_run_fails_the_node_and_keeps_the_state(
    conversation, model_config, llm, gate_rules
):
    call = {"name": "test_gate_rules", "arguments": {"topic": "gate"}}
    llm.enqueue(*[Reply(tool_calls=[call])] * 2)
    with pytest.raises(CapabilityError) as caught:
        await run_node(conversation, node_for(model_config, limits={"maxSteps": 2}))
    assert caught.value.code == "max_steps_exceeded"
    assert not await WorkflowState.objects.filter(conversation=conversation).aexists()


async def test_fast_slow_runs_in_celery_on_the_frozen_snapshot(
    conversation, model_config, llm, celery_worker
):
    from tests.ws.test_chat_socket import connect, receive_until

    store = ConversationStateStore(conversation.tenant_id, conversation.pk, "continuity")
    assert await store.compare_and_set(0, StateCandidate({"key": "at the gate"}))
    comm = await connect(conversation)
    llm.enqueue(Reply(content='{"key": "with the captain"}'))
    value = await run_node(conversation, node_for(model_config, tools=[], mode="fast+slow"))
    assert value.value["mode"] == "fast+slow" and value.value["status"] == "queued"
    assert value.value["revision"] == 1 and value.prompt_content is None

    events = await receive_until(comm, "workflow_runtime.completed", timeout=30)
    await comm.disconnect()
    assert events[-1] == {
        "type": "workflow_runtime.completed",
        "run_id": value.value["runId"],
        "turn_id": None,
        "node_id": "continuity",
        "status": "completed",
        "state_outcome": "committed",
        "revision": 2,
        "error_code": None,
    }
    run = await sync_to_async(_finished)(value.value["runId"])
    assert run.status == "completed", run.result
    assert run.result["stateOutcome"] == "committed" and run.result["revision"] == 2
    asked = llm.requests[-1]["messages"]
    assert asked[1]["content"] == 'Saved state (revision 1):\n{"key": "at the gate"}'
    assert asked[2:] == [*HISTORY, {"role": "user", "content": QUERY}]
    assert tuple(await store.get()) == ({"key": "with the captain"}, 2)


async def test_fast_slow_compares_with_the_frozen_revision(
    conversation, model_config, llm, celery_worker
):
    """A write that lands between the turn's freeze and the background commit wins; the
    background's is rejected as stale."""
    store = ConversationStateStore(conversation.tenant_id, conversation.pk, "continuity")
    llm.enqueue(Reply(content='{"key": "late"}', delay=1.0))
    value = await run_node(conversation, node_for(model_config, tools=[], mode="fast+slow"))
    assert await store.compare_and_set(0, StateCandidate({"key": "first"}))
    run = await sync_to_async(_finished)(value.value["runId"])
    assert run.result["stateOutcome"] == "stale_write_rejected"
    assert tuple(await store.get()) == ({"key": "first"}, 1)


async def test_the_turns_cancel_stops_a_running_fast_slow_run(
    conversation, model_config, llm, celery_worker
):
    llm.enqueue(Reply(hang=True))
    cancel = asyncio.Event()
    node = node_for(model_config, tools=[], mode="fast+slow")
    value = await run_node(conversation, node, cancel=cancel)
    run_id = value.value["runId"]
    await sync_to_async(_until)(run_id, "running")
    cancel.set()  # the player stops the turn while the background run waits on its model
    run = await sync_to_async(_finished)(run_id)
    assert run.status == "failed" and run.result["error"]["code"] == "cancelled"
    assert run.cancel_requested
    assert not await WorkflowState.objects.filter(conversation=conversation).aexists()


def _until(run_id: str, status: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while RuntimeRun.objects.get(pk=run_id).status != status:
        assert time.monotonic() < deadline, f"run {run_id} never {status}"
        time.sleep(0.05)


def _finished(run_id: str, timeout: float = 30.0) -> RuntimeRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = RuntimeRun.objects.get(pk=run_id)
        if run.status in ("completed", "failed"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish")
