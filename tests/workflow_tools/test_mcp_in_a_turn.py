"""An MCP tool as a node of a scenario's declared workflow, in a real turn: the player's
words reach the MCP server started by the test, the tool's text reaches the Actor's request
as ``turn_context`` (the system message just before the player's), and the run's trace
names the node. A tool the server refuses to run fails the optional node visibly while the
reply still comes."""

from __future__ import annotations

import pytest

from roleplay.llm.scripted_server import Reply
from roleplay.scenarios.services import create_scenario
from roleplay.workflows.models import WorkflowRun
from roleplay.workflows.tools import services
from tests.workflows.test_workflow_turns import PLAYER, by_model, play

pytestmark = pytest.mark.django_db(transaction=True)

RULE = "At the gate: a written pass is needed; a key is not a pass."


def _scenario(tenant, conversation, model_config, mcp_server, node: dict) -> None:
    services.create_mcp_server(
        tenant, name="rules", url=mcp_server.url, allowed_tools=["gate_rule", "boom"],
        timeout_ms=10_000,
    )  # fmt: skip
    workflow = {"visibleCapabilities": ["mcp_tool"], "executionGraph": {"nodes": [node]}}
    scenario = create_scenario(tenant, name="Gate", model_config=model_config, workflow=workflow)
    conversation.scenario = scenario
    conversation.save(update_fields=["scenario"])


def test_an_mcp_tools_answer_reaches_the_actor(
    api, tenant, conversation, model_config, llm, mcp_server
):
    node = {
        "id": "rule",
        "capability": "mcp_tool",
        "input": {"server": "rules", "tool": "gate_rule", "arguments": {"location": "gate"},
                  "emitPrompt": True},
    }  # fmt: skip
    _scenario(tenant, conversation, model_config, mcp_server, node)
    llm.enqueue(Reply(content="The guard shakes his head."))
    turn = play(api, conversation)
    assert turn.status == "complete", turn.error_code
    assert mcp_server.calls == [("gate_rule", {"location": "gate", "query": PLAYER})]
    messages = by_model(llm, model_config.model)[-1]["messages"]
    assert (messages[-1]["role"], messages[-1]["content"]) == ("user", PLAYER)
    assert messages[-2]["role"] == "system" and RULE in messages[-2]["content"]
    run = WorkflowRun.objects.get(turn=turn)
    assert run.status == "succeeded"
    assert [(t["node_id"], t["status"]) for t in run.nodes] == [("rule", "succeeded")]


def test_a_failing_optional_mcp_node_is_traced_and_the_reply_comes(
    api, tenant, conversation, model_config, llm, mcp_server
):
    node = {"id": "rule", "capability": "mcp_tool", "required": False,
            "input": {"server": "rules", "tool": "boom", "emitPrompt": True}}  # fmt: skip
    _scenario(tenant, conversation, model_config, mcp_server, node)
    llm.enqueue(Reply(content="The guard waits."))
    turn = play(api, conversation)
    assert turn.status == "complete"
    [trace] = WorkflowRun.objects.get(turn=turn).nodes
    assert trace["status"] == "failed" and trace["error"]["code"] == "mcp_tool_error"
    contents = [m["content"] for m in by_model(llm, model_config.model)[-1]["messages"]]
    assert not any(RULE in c for c in contents)
