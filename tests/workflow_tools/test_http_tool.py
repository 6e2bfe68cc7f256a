"""``http_tool`` against a real HTTP server started by the test: the allowlist (an endpoint
of the tenant, a path under its prefix), the SSRF guard, the size cap, the timeout, a status
outside 2xx, JSON or text values and the prompt text."""

from __future__ import annotations

import pytest
from django.test import override_settings

import roleplay.workflows.capabilities  # noqa: F401 - registers the capabilities
from roleplay.errors import FieldErrors
from roleplay.workflows.engine.contracts import CapabilityError
from roleplay.workflows.tools import services
from tests.workflow_tools.conftest import run_capability

pytestmark = pytest.mark.django_db


@pytest.fixture
def endpoint(tenant, http_server):
    return services.create_http_endpoint(
        tenant, name="lore", url_prefix=f"{http_server.root}/api", timeout_ms=2_000,
        max_response_bytes=10_000,
    )  # fmt: skip


def refused(tenant, node_input, code: str, **kwargs) -> CapabilityError:
    with pytest.raises(CapabilityError) as caught:
        run_capability("http_tool", tenant, node_input, **kwargs)
    assert caught.value.code == code, caught.value.message
    return caught.value


def test_a_registered_endpoint_answers_json_with_the_query(tenant, endpoint, http_server):
    result = run_capability(
        "http_tool",
        tenant,
        {"endpoint": "lore", "path": "echo/gate", "query": {"q": "key", "n": 2}},
    )
    assert result.value["method"] == "GET" and result.value["path"] == "/api/echo/gate"
    assert result.value["query"] == {"q": "key", "n": "2"}
    assert result.prompt_content is None
    assert http_server.seen == [("GET", "/api/echo/gate")]


def test_text_answers_and_the_prompt_text_is_capped(tenant, endpoint):
    result = run_capability("http_tool", tenant, {"endpoint": "lore", "path": "text"})
    assert result.value == "The gate opens at dawn." and result.prompt_content is None
    capped = run_capability(
        "http_tool", tenant, {"endpoint": "lore", "path": "text", "emitPrompt": True,
                              "promptMaxChars": 8},
    )  # fmt: skip
    assert capped.prompt_content == "The gate"


def test_a_post_endpoint_sends_the_json_body_and_the_key(tenant, http_server, monkeypatch):
    monkeypatch.setenv("LORE_TOOL_KEY", "k-123")
    services.create_http_endpoint(
        tenant, name="write", url_prefix=f"{http_server.root}/api/echo", method="POST",
        api_key_env="LORE_TOOL_KEY",
    )  # fmt: skip
    services.create_http_endpoint(
        tenant, name="header", url_prefix=f"{http_server.root}/api/echo",
        api_key_env="LORE_TOOL_KEY", api_key_header="X-Key",
    )  # fmt: skip
    posted = run_capability("http_tool", tenant, {"endpoint": "write", "body": {"a": [1, "b"]}})
    assert posted.value["method"] == "POST" and posted.value["body"] == {"a": [1, "b"]}
    assert posted.value["authorization"] == "Bearer k-123"
    headed = run_capability("http_tool", tenant, {"endpoint": "header"})
    assert headed.value["x_key"] == "k-123" and headed.value["authorization"] is None
    monkeypatch.delenv("LORE_TOOL_KEY")
    refused(tenant, {"endpoint": "write"}, "key_missing")


def test_a_body_on_a_get_endpoint_is_bad_input(tenant, endpoint, http_server):
    refused(tenant, {"endpoint": "lore", "path": "echo", "body": {}}, "bad_input")
    assert http_server.seen == []


def test_an_unregistered_or_foreign_endpoint_is_forbidden(tenant, other_tenant, http_server):
    services.create_http_endpoint(other_tenant, name="theirs", url_prefix=f"{http_server.root}/api")
    refused(tenant, {"endpoint": "theirs", "path": "echo"}, "forbidden_url")
    refused(tenant, {"endpoint": "nothing"}, "forbidden_url")
    assert http_server.seen == []


@pytest.mark.parametrize(
    "path", ["../outside", "echo/../../outside", "%2e%2e/outside", "echo/%2E%2E/%2e%2e/x",
             "a\\..\\b", "echo?x=1", "echo#f", "a%2fb", "./echo", "a b"],
)  # fmt: skip
def test_a_path_that_could_leave_the_prefix_is_refused(tenant, endpoint, http_server, path):
    refused(tenant, {"endpoint": "lore", "path": path}, "bad_input")
    assert http_server.seen == []


def test_loopback_is_refused_unless_the_deployment_allows_it(tenant, endpoint, http_server):
    with override_settings(WORKFLOW_TOOLS_ALLOW_LOOPBACK=False):
        error = refused(tenant, {"endpoint": "lore", "path": "echo"}, "forbidden_url")
    assert "not public" in error.message
    assert http_server.seen == []  # no connection was made
    assert run_capability("http_tool", tenant, {"endpoint": "lore", "path": "echo"}).value


def test_a_host_resolving_to_loopback_is_refused_too(tenant, http_server):
    port = http_server.server_address[1]
    with override_settings(WORKFLOW_TOOLS_ALLOW_LOOPBACK=False):
        # ``localhost`` is refused at save; a name is checked when it is resolved.
        with pytest.raises(FieldErrors):
            services.create_http_endpoint(tenant, name="lh", url_prefix=f"http://localhost:{port}/")
    services.create_http_endpoint(tenant, name="lh", url_prefix=f"http://localhost.:{port}/api")
    with override_settings(WORKFLOW_TOOLS_ALLOW_LOOPBACK=False):
        refused(tenant, {"endpoint": "lh", "path": "echo"}, "forbidden_url")
    assert http_server.seen == []


def test_the_size_cap_plus_and_minus_one(tenant, http_server):
    services.create_http_endpoint(
        tenant, name="big", url_prefix=f"{http_server.root}/api", max_response_bytes=5_000
    )
    ok = run_capability(
        "http_tool", tenant, {"endpoint": "big", "path": "bytes", "query": {"n": 5000}}
    )
    assert ok.value == "x" * 5000
    error = refused(
        tenant, {"endpoint": "big", "path": "bytes", "query": {"n": 5001}}, "response_too_large"
    )
    assert "5000" in error.message


def test_an_endpoint_slower_than_its_timeout_times_out(tenant, http_server):
    services.create_http_endpoint(
        tenant, name="slow", url_prefix=f"{http_server.root}/api/slow", timeout_ms=200
    )
    refused(tenant, {"endpoint": "slow"}, "timeout")


def test_a_cancelled_run_stops_the_call(tenant, http_server):
    services.create_http_endpoint(
        tenant, name="slow", url_prefix=f"{http_server.root}/api/slow", timeout_ms=20_000
    )
    refused(tenant, {"endpoint": "slow"}, "cancelled", cancel_after=0.2)


@pytest.mark.parametrize(("path", "status"), [("status/500", 500), ("status/404", 404),
                                              ("redirect", 302), ("nowhere", 404)])  # fmt: skip
def test_a_status_outside_2xx_is_an_upstream_error(tenant, endpoint, path, status):
    error = refused(tenant, {"endpoint": "lore", "path": path}, "upstream_error")
    assert str(status) in error.message


def test_an_answer_that_is_neither_json_nor_text_is_an_upstream_error(tenant, endpoint):
    refused(tenant, {"endpoint": "lore", "path": "image"}, "upstream_error")


def test_a_server_that_is_down_is_an_upstream_error(tenant, http_server):
    root = http_server.root
    http_server.shutdown()
    http_server.server_close()
    services.create_http_endpoint(tenant, name="down", url_prefix=f"{root}/api")
    refused(tenant, {"endpoint": "down", "path": "echo"}, "upstream_error")
