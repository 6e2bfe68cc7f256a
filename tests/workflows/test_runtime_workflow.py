"""The bounded runtime as a node of a declared workflow, through the real planner, executor
and prompt compiler, against the scripted model server: "look up the gate rules → the
runtime writes the scene requirement", whose text reaches ``turn_context``; the runtime
reads its dependency's result; a runtime that fails as an optional node leaves the workflow
running with the failure visible."""

from __future__ import annotations

import asyncio

import pytest

from roleplay.llm.scripted_server import Reply
from roleplay.workflows import registry
from roleplay.workflows.engine.compiler import compile_context
from roleplay.workflows.engine.executor import execute
from roleplay.workflows.engine.planner import plan
from roleplay.workflows.engine.spec import parse_workflow

from .runtime_support import QUERY, registered_gate_rules, scope_of

pytestmark = [pytest.mark.asyncio, pytest.mark.django_db(transaction=True)]


@pytest.fixture
def gate_rules():
    with registered_gate_rules() as capability:
        yield capability


def workflow(model_config, *, runtime_required=True, limits=None) -> dict:
    runtime_input = {
        "modelConfigId": str(model_config.pk),
        "systemPrompt": "Write the scene requirement in one sentence.",
        "tools": ["test_gate_rules"],
        "emitPrompt": True,
    }
    if limits:
        runtime_input["limits"] = limits
    return {
        "visibleCapabilities": ["test_gate_rules", "bounded_runtime"],
        "executionGraph": {
            "nodes": [
                {"id": "rules", "capability": "test_gate_rules", "input": {"topic": "gate"},
                 "projectTo": "none"},
                {"id": "scene", "capability": "bounded_runtime", "input": runtime_input,
                 "dependsOn": ["rules"], "required": runtime_required},
                {"id": "after", "capability": "test_gate_rules", "input": {"topic": "bridge"},
                 "dependsOn": ["scene"], "projectTo": "none"},
            ]
        },
    }  # fmt: skip


async def run_workflow(conversation, raw: dict):
    spec = parse_workflow(raw)
    ordered = plan(spec, profile_id="s1", scenario_id="s1", registered=registry.registered())
    scope = scope_of(conversation)
    capabilities = {n.capability: registry.build(n.capability, scope) for n in ordered.nodes}
    result = await execute(ordered, capabilities, query=QUERY, cancel=asyncio.Event())
    return ordered, result


async def test_the_runtime_writes_the_scene_requirement_that_reaches_turn_context(
    conversation, model_config, llm, gate_rules
):
    llm.enqueue(
        Reply(tool_calls=[{"name": "test_gate_rules", "arguments": {"topic": "bridge"}}]),
        Reply(content="Only the captain's key opens the north gate: the guard refuses."),
    )
    ordered, result = await run_workflow(conversation, workflow(model_config))
    assert result.status == "succeeded", result.error
    assert [t.status for t in result.traces] == ["succeeded"] * 3
    compiled = compile_context(ordered, result)
    assert "the guard refuses" in compiled.turn_context
    assert "captain's key" not in compiled.foundation_context
    # The runtime read its dependency's result after its system prompt.
    system = llm.requests[0]["messages"][0]["content"]
    assert system.startswith("Write the scene requirement in one sentence.")
    assert "[rules]" in system and "Only the captain's key opens the north gate." in system
    summary = result.outputs["scene"].result.value
    assert summary["toolResults"][0]["arguments"] == {"topic": "bridge"}


async def test_a_failing_optional_runtime_leaves_the_workflow_running(
    conversation, model_config, llm, gate_rules
):
    call = {"name": "test_gate_rules", "arguments": {"topic": "gate"}}
    llm.enqueue(Reply(tool_calls=[call]))
    raw = workflow(model_config, runtime_required=False, limits={"maxSteps": 1})
    ordered, result = await run_workflow(conversation, raw)
    assert result.status == "succeeded"
    traces = {t.node_id: t for t in result.traces}
    assert traces["scene"].status == "failed"
    assert traces["scene"].error["code"] == "max_steps_exceeded"
    assert traces["after"].status == "succeeded"
    assert compile_context(ordered, result).turn_context == ""


async def test_a_failing_required_runtime_fails_the_workflow(
    conversation, model_config, llm, gate_rules
):
    call = {"name": "test_gate_rules", "arguments": {"topic": "gate"}}
    llm.enqueue(Reply(tool_calls=[call, call, call, call, call]))
    _ordered, result = await run_workflow(conversation, workflow(model_config))
    assert result.status == "failed"
    traces = {t.node_id: t for t in result.traces}
    assert traces["scene"].error["code"] == "too_many_parallel_tools"
    assert traces["after"].status == "blocked"
