"""``mcp_tool`` against a small MCP server started by the test (the official ``mcp``
package on both sides, streamable HTTP): an allowed tool's content comes back, the turn's
query and the completed dependencies reach the tool, a tool not allowed is refused before
any connection, a server that is down is ``mcp_unavailable``."""

from __future__ import annotations

import pytest
from django.test import override_settings

import roleplay.workflows.capabilities  # noqa: F401 - registers the capabilities
from roleplay.workflows.engine.contracts import CapabilityError, CapabilityValue, NodeOutput
from roleplay.workflows.tools import services
from tests.workflow_tools.conftest import run_capability

pytestmark = pytest.mark.django_db

ALLOWED = ["gate_rule", "scene", "boom", "slow"]
QUERY = "I hand over the brass key."


@pytest.fixture
def registered(tenant, mcp_server):
    return services.create_mcp_server(
        tenant, name="rules", url=mcp_server.url, allowed_tools=ALLOWED, timeout_ms=10_000
    )


def refused(tenant, node_input, code: str, **kwargs) -> CapabilityError:
    with pytest.raises(CapabilityError) as caught:
        run_capability("mcp_tool", tenant, node_input, **kwargs)
    assert caught.value.code == code, caught.value.message
    return caught.value


def test_an_allowed_tool_answers_and_gets_the_turns_query(tenant, registered, mcp_server):
    result = run_capability(
        "mcp_tool", tenant,
        {"server": "rules", "tool": "gate_rule", "arguments": {"location": "gate"},
         "emitPrompt": True},
        query=QUERY,
    )  # fmt: skip
    text = "At the gate: a written pass is needed; a key is not a pass."
    assert result.value["text"] == text and result.prompt_content == text
    assert mcp_server.calls == [("gate_rule", {"location": "gate", "query": QUERY})]


def test_the_completed_dependencies_reach_a_tool_that_takes_them(tenant, registered, mcp_server):
    rule = NodeOutput("rule", "mcp_tool", CapabilityValue({"text": "A pass is needed."}, "p"))
    result = run_capability(
        "mcp_tool", tenant, {"server": "rules", "tool": "scene"}, query=QUERY,
        dependencies={"rule": rule},
    )  # fmt: skip
    assert result.value["text"] == "The guard checks for a pass. A pass is needed."
    assert result.prompt_content is None
    name, received = mcp_server.calls[0]
    assert name == "scene" and "query" not in received  # the tool declares no query
    assert received["dependencies"] == {
        "rule": {"value": {"text": "A pass is needed."}, "promptContent": "p"}
    }


def test_the_node_chooses_where_the_query_goes_or_that_it_goes_nowhere(
    tenant, registered, mcp_server
):
    run_capability(
        "mcp_tool", tenant,
        {"server": "rules", "tool": "scene", "arguments": {"dependencies": {}},
         "queryArgument": "note"},
        query=QUERY,
    )  # fmt: skip
    run_capability(
        "mcp_tool", tenant,
        {"server": "rules", "tool": "gate_rule", "arguments": {"location": "gate"},
         "queryArgument": None},
        query=QUERY,
    )  # fmt: skip
    assert mcp_server.calls == [
        ("scene", {"dependencies": {}, "note": QUERY}),
        ("gate_rule", {"location": "gate", "query": ""}),
    ]


def test_a_tool_that_is_not_allowed_is_refused_before_any_connection(
    tenant, registered, mcp_server
):
    refused(tenant, {"server": "rules", "tool": "secret"}, "forbidden_tool")
    assert mcp_server.calls == []


def test_an_unregistered_or_foreign_server_is_refused(tenant, other_tenant, mcp_server):
    services.create_mcp_server(other_tenant, name="theirs", url=mcp_server.url,
                               allowed_tools=ALLOWED)  # fmt: skip
    refused(tenant, {"server": "theirs", "tool": "gate_rule"}, "forbidden_tool")
    assert mcp_server.calls == []


def test_arguments_that_break_the_tools_schema_are_bad_input(tenant, registered, mcp_server):
    error = refused(
        tenant, {"server": "rules", "tool": "gate_rule", "arguments": {"location": 3}}, "bad_input"
    )
    assert "location" in error.message
    assert mcp_server.calls == []


def test_a_failing_tool_is_a_tool_error(tenant, registered):
    refused(tenant, {"server": "rules", "tool": "boom"}, "mcp_tool_error")


def test_an_allowed_tool_the_server_does_not_offer_is_a_tool_error(tenant, mcp_server):
    services.create_mcp_server(tenant, name="rules", url=mcp_server.url,
                               allowed_tools=["gate_rule", "vanished"])  # fmt: skip
    error = refused(tenant, {"server": "rules", "tool": "vanished"}, "mcp_tool_error")
    assert "offers no tool" in error.message


def test_a_server_that_is_down_is_unavailable(tenant, mcp_server):
    services.create_mcp_server(tenant, name="rules", url=mcp_server.url, allowed_tools=ALLOWED)
    mcp_server.stop()
    refused(tenant, {"server": "rules", "tool": "gate_rule", "arguments": {"location": "gate"}},
            "mcp_unavailable")  # fmt: skip


def test_a_url_that_is_not_mcp_is_unavailable(tenant, http_server):
    services.create_mcp_server(tenant, name="web", url=f"{http_server.root}/api/text",
                               allowed_tools=ALLOWED)  # fmt: skip
    refused(tenant, {"server": "web", "tool": "gate_rule"}, "mcp_unavailable")


def test_the_guard_refuses_loopback_unless_allowed(tenant, registered, mcp_server):
    with override_settings(WORKFLOW_TOOLS_ALLOW_LOOPBACK=False):
        refused(tenant, {"server": "rules", "tool": "gate_rule"}, "forbidden_url")
    assert mcp_server.calls == []


def test_a_slow_tool_times_out_and_a_cancelled_run_stops(tenant, mcp_server):
    services.create_mcp_server(tenant, name="rules", url=mcp_server.url, allowed_tools=ALLOWED,
                               timeout_ms=1_000)  # fmt: skip
    refused(tenant, {"server": "rules", "tool": "slow"}, "timeout")
    refused(tenant, {"server": "rules", "tool": "slow"}, "cancelled", cancel_after=0.3)


def test_a_key_named_but_not_set_is_key_missing(tenant, mcp_server, monkeypatch):
    monkeypatch.delenv("RULES_MCP_KEY", raising=False)
    services.create_mcp_server(tenant, name="rules", url=mcp_server.url, allowed_tools=ALLOWED,
                               api_key_env="RULES_MCP_KEY")  # fmt: skip
    refused(tenant, {"server": "rules", "tool": "gate_rule"}, "key_missing")


@pytest.mark.parametrize(
    "node_input",
    [{"server": "rules"}, {"tool": "gate_rule"}, {"server": "rules", "tool": "a b"},
     {"server": "rules", "tool": "gate_rule", "arguments": []},
     {"server": "rules", "tool": "gate_rule", "extra": 1},
     {"server": "rules", "tool": "gate_rule", "queryArgument": "not a name"}, "text", None],
)  # fmt: skip
def test_bad_node_input_is_bad_input(tenant, registered, mcp_server, node_input):
    refused(tenant, node_input, "bad_input")
    assert mcp_server.calls == []


def test_both_capabilities_are_registered_with_their_input_schemas(tenant):
    from roleplay.workflows import registry
    from roleplay.workflows.engine.tool_inputs import HTTP_INPUT_SCHEMA, MCP_INPUT_SCHEMA

    assert {"http_tool", "mcp_tool"} <= registry.registered()
    assert registry.entry("http_tool").input_schema is HTTP_INPUT_SCHEMA
    assert registry.entry("mcp_tool").input_schema is MCP_INPUT_SCHEMA
    scope = registry.RunScope(tenant.pk, None, None, None)
    for name in ("http_tool", "mcp_tool"):
        capability = registry.build(name, scope)
        assert capability.name == name and capability.input_schema["type"] == "object"
