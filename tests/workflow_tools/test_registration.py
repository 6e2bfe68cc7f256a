"""Registering the tools a workflow may call, through REST (``/api/v1/workflow-tools/...``)
and the console: the rules every door shares, admin-only writes, tenant isolation (another
tenant's entry is a 404) and the MCP server's "test connection" against a real MCP server."""

from __future__ import annotations

import pytest
from django.test import Client, override_settings

from console.services import ensure_console_user
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer
from roleplay.workflows.tools import services
from tests.api.helpers import assert_error, error_locs

pytestmark = pytest.mark.django_db

HTTP = "/api/v1/workflow-tools/http/"
MCP = "/api/v1/workflow-tools/mcp/"
GOOD_HTTP = {"name": "lore", "url_prefix": "https://lore.example/api/v1", "method": "POST",
             "timeout_ms": 5_000, "max_response_bytes": 2_048, "api_key_env": "LORE_KEY",
             "api_key_header": "X-Api-Key"}  # fmt: skip


def console_client(tenant, role: str) -> Client:
    user, _ = ensure_console_user(tenant, f"{role}-u", f"pw-{role}-123456", role)
    client = Client()
    client.force_login(user)
    return client


def test_an_admin_registers_reads_changes_and_removes_an_http_endpoint(api, monkeypatch):
    monkeypatch.setenv("LORE_KEY", "k")
    created = api.post(HTTP, GOOD_HTTP, format="json")
    assert created.status_code == 201, created.content
    body = created.json()
    assert {k: body[k] for k in GOOD_HTTP} == GOOD_HTTP and body["api_key_configured"] is True
    url = f"{HTTP}{body['id']}/"
    assert api.get(HTTP).json()["results"][0]["name"] == "lore"
    changed = api.patch(url, {"timeout_ms": 100}, format="json")
    assert changed.status_code == 200 and changed.json()["timeout_ms"] == 100
    assert changed.json()["method"] == "POST"  # a partial update keeps the rest
    assert api.delete(url).status_code == 204
    assert not HttpToolEndpoint.objects.exists()


@pytest.mark.parametrize(
    ("change", "field"),
    [({"url_prefix": "https://u:p@lore.example/"}, "url_prefix"),
     ({"url_prefix": "ftp://lore.example/"}, "url_prefix"),
     ({"url_prefix": "https://lore.example/api?key=1"}, "url_prefix"),
     ({"url_prefix": "http://169.254.169.254/latest"}, "url_prefix"),
     ({"url_prefix": "http://10.1.2.3/api"}, "url_prefix"),
     ({"api_key_env": "sk-live-0123456789abcdef0123"}, "api_key_env"),
     ({"api_key_env": "", "api_key_header": "X-Api-Key"}, "api_key_header"),
     ({"api_key_header": "Bad Header"}, "api_key_header"),
     ({"timeout_ms": 99}, "timeout_ms"), ({"timeout_ms": 60_001}, "timeout_ms"),
     ({"max_response_bytes": 0}, "max_response_bytes"),
     ({"max_response_bytes": 10 * 1024 * 1024 + 1}, "max_response_bytes"),
     ({"method": "PUT"}, "method"), ({"name": "a b"}, "name"), ({"name": 7}, "name"),
     ({"surprise": 1}, "surprise")],
)  # fmt: skip
def test_bad_http_endpoint_fields_are_a_400_naming_the_field(api, change, field):
    response = api.post(HTTP, {**GOOD_HTTP, **change}, format="json")
    assert field in error_locs(response)
    assert not HttpToolEndpoint.objects.exists()


def test_the_bounds_themselves_are_accepted(api):
    low = {**GOOD_HTTP, "timeout_ms": 100, "max_response_bytes": 1}
    assert api.post(HTTP, low, format="json").status_code == 201
    high = {**GOOD_HTTP, "name": "b", "timeout_ms": 60_000, "max_response_bytes": 10 * 1024 * 1024}
    assert api.post(HTTP, high, format="json").status_code == 201


def test_a_loopback_url_is_refused_unless_the_deployment_allows_it(api):
    body = {**GOOD_HTTP, "url_prefix": "http://127.0.0.1:9/api"}
    with override_settings(WORKFLOW_TOOLS_ALLOW_LOOPBACK=False):
        assert "url_prefix" in error_locs(api.post(HTTP, body, format="json"))
    assert api.post(HTTP, body, format="json").status_code == 201


def test_a_taken_name_is_a_409(api):
    assert api.post(HTTP, GOOD_HTTP, format="json").status_code == 201
    assert_error(api.post(HTTP, GOOD_HTTP, format="json"), 409, "duplicate")


@pytest.mark.parametrize(
    ("change", "field"),
    [({"allowed_tools": ["a b"]}, "allowed_tools"),
     ({"allowed_tools": ["t", "t"]}, "allowed_tools"),
     ({"allowed_tools": "t"}, "allowed_tools"), ({"allowed_tools": [1]}, "allowed_tools"),
     ({"allowed_tools": ["t"] * 101}, "allowed_tools"), ({"url": "file:///etc/passwd"}, "url"),
     ({"timeout_ms": 120_001}, "timeout_ms")],
)  # fmt: skip
def test_bad_mcp_server_fields_are_a_400_naming_the_field(api, change, field):
    body = {"name": "rules", "url": "https://tools.example/mcp", "allowed_tools": ["t"], **change}
    locs = error_locs(api.post(MCP, body, format="json"))
    assert field in {loc.split(".")[0] for loc in locs}, locs
    assert not McpServer.objects.exists()


def test_content_tokens_read_and_only_admin_tokens_write(api_client_for, tenant):
    services.create_http_endpoint(tenant, name="lore", url_prefix="https://lore.example/api")
    content = api_client_for(tenant, scopes=["content"])
    assert content.get(HTTP).json()["count"] == 1
    assert content.post(HTTP, {**GOOD_HTTP, "name": "x"}, format="json").status_code == 403
    play = api_client_for(tenant, scopes=["play"])
    assert play.get(MCP).status_code == 403


def test_another_tenants_entries_are_404_and_unlisted(api, other_tenant, mcp_server):
    theirs = services.create_http_endpoint(other_tenant, name="t", url_prefix="https://a.example/")
    server = services.create_mcp_server(other_tenant, name="t", url=mcp_server.url,
                                        allowed_tools=["gate_rule"])  # fmt: skip
    assert api.get(HTTP).json()["count"] == 0 and api.get(MCP).json()["count"] == 0
    for url in (f"{HTTP}{theirs.pk}/", f"{MCP}{server.pk}/"):
        assert_error(api.get(url), 404, "not_found")
        assert_error(api.patch(url, {"name": "mine"}, format="json"), 404, "not_found")
        assert_error(api.delete(url), 404, "not_found")
    assert_error(api.post(f"{MCP}{server.pk}/test/"), 404, "not_found")
    assert mcp_server.calls == [] and HttpToolEndpoint.objects.get().name == "t"


def test_testing_an_mcp_server_lists_its_tools_and_says_which_are_allowed(api, tenant, mcp_server):
    server = services.create_mcp_server(tenant, name="rules", url=mcp_server.url,
                                        allowed_tools=["gate_rule", "vanished"])  # fmt: skip
    answer = api.post(f"{MCP}{server.pk}/test/")
    assert answer.status_code == 200, answer.content
    result = answer.json()
    assert result["ok"] is True and result["error_code"] is None
    allowed = {tool["name"]: tool["allowed"] for tool in result["tools"]}
    assert allowed["gate_rule"] is True and allowed["secret"] is False
    assert any("vanished" in warning for warning in result["warnings"])
    assert mcp_server.calls == []  # listing calls no tool
    mcp_server.stop()
    down = api.post(f"{MCP}{server.pk}/test/").json()
    assert down["ok"] is False and down["error_code"] == "mcp_unavailable"
    assert_error(api.post(f"{MCP}{server.pk}/test/", {"x": 1}, format="json"), 400,
                 "validation_error")  # fmt: skip


def test_the_console_lists_creates_edits_and_deletes(tenant, other_tenant):
    admin = console_client(tenant, "admin")
    created = admin.post("/console/workflow-tools/http/new/", {
        "name": "lore", "url_prefix": "https://lore.example/api", "method": "GET",
        "timeout_ms": 10_000, "max_response_bytes": 1024,
    })  # fmt: skip
    assert created.status_code == 302, created.content[:2000]
    endpoint = HttpToolEndpoint.objects.get(tenant=tenant)
    made = admin.post("/console/workflow-tools/mcp/new/", {
        "name": "rules", "url": "https://tools.example/mcp", "allowed_tools": "a, b\nc",
        "timeout_ms": 30_000,
    })  # fmt: skip
    assert made.status_code == 302
    server = McpServer.objects.get(tenant=tenant)
    assert server.allowed_tools == ["a", "b", "c"]
    page = admin.get("/console/workflow-tools/").content.decode()
    assert "lore" in page and "rules" in page
    refused = admin.post(f"/console/workflow-tools/http/{endpoint.pk}/", {
        "name": "lore", "url_prefix": "https://u:p@lore.example/", "method": "GET",
        "timeout_ms": 10_000, "max_response_bytes": 1024,
    })  # fmt: skip
    assert refused.status_code == 200 and "user name or password" in refused.content.decode()
    assert admin.get(f"/console/workflow-tools/mcp/{server.pk}/").status_code == 200
    assert admin.post(f"/console/workflow-tools/mcp/{server.pk}/delete/").status_code == 302
    assert not McpServer.objects.exists()
    theirs = services.create_http_endpoint(other_tenant, name="t", url_prefix="https://a.example/")
    assert admin.get(f"/console/workflow-tools/http/{theirs.pk}/").status_code == 404
    assert admin.post(f"/console/workflow-tools/http/{theirs.pk}/delete/").status_code == 404
    assert HttpToolEndpoint.objects.filter(pk=theirs.pk).exists()


def test_viewers_read_operators_test_and_only_admins_write(tenant, mcp_server):
    server = services.create_mcp_server(tenant, name="rules", url=mcp_server.url,
                                        allowed_tools=["gate_rule"])  # fmt: skip
    viewer = console_client(tenant, "viewer")
    assert viewer.get("/console/workflow-tools/").status_code == 200
    assert viewer.get("/console/workflow-tools/http/new/").status_code == 403
    assert viewer.post(f"/console/workflow-tools/mcp/{server.pk}/test/").status_code == 403
    operator = console_client(tenant, "operator")
    assert (
        operator.post(f"/console/workflow-tools/mcp/{server.pk}/", {"name": "x"}).status_code == 403
    )
    tested = operator.post(f"/console/workflow-tools/mcp/{server.pk}/test/", HTTP_HX_REQUEST="true")
    assert tested.status_code == 200
    text = tested.content.decode()
    assert 'data-outcome="ok"' in text and "gate_rule" in text and "secret" in text
