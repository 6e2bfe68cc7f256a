"""Writes of HTTP tool endpoints and MCP servers: every door (REST, console form) goes
through these, so the rules hold for all of them (``roleplay.services.rows``: field
validators, rules across fields, a taken name is a 409 ``duplicate``).

A URL an operator registers must be ``http(s)`` without credentials, query or fragment, and
its host, when it is an address (or ``localhost``), must be one the deployment's policy lets
the tools reach: refused here at once rather than at the first run. A host name is checked
on every call, when it is resolved (``console.outbound``).
"""

from __future__ import annotations

from console import outbound
from roleplay.services import rows
from roleplay.workflows.engine.tool_inputs import allowed_tools_problem, prefix_problem
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer
from roleplay.workflows.tools.calls import policy

HTTP_FIELDS = (
    "name",
    "description",
    "url_prefix",
    "method",
    "timeout_ms",
    "max_response_bytes",
    "api_key_env",
    "api_key_header",
)
MCP_FIELDS = ("name", "description", "url", "allowed_tools", "api_key_env", "timeout_ms")


def url_problems(field: str, url: str) -> dict[str, list[str]]:
    problem = prefix_problem(url) or outbound.literal_refused(url, policy())
    return {field: [f"Not a URL a tool may call: {problem}."]} if problem else {}


def _http_rules(endpoint: HttpToolEndpoint) -> dict[str, list[str]]:
    problems = url_problems("url_prefix", endpoint.url_prefix)
    if endpoint.api_key_header and not endpoint.api_key_env:
        problems["api_key_header"] = ["A key header needs a key variable (api_key_env)."]
    return problems


def _mcp_rules(server: McpServer) -> dict[str, list[str]]:
    problems = url_problems("url", server.url)
    problem = allowed_tools_problem(server.allowed_tools)
    if problem:
        problems["allowed_tools"] = [problem[0].upper() + problem[1:] + "."]
    return problems


def _strip(fields: dict) -> dict:
    for name in ("name", "api_key_env", "api_key_header", "url_prefix", "url"):
        if isinstance(fields.get(name), str):
            fields[name] = fields[name].strip()
    return fields


def create_http_endpoint(tenant, **fields) -> HttpToolEndpoint:
    endpoint = HttpToolEndpoint(tenant=tenant)
    return rows.write(endpoint, _strip(fields), allowed=HTTP_FIELDS, update=False,
                      rules=_http_rules)  # fmt: skip


def update_http_endpoint(endpoint: HttpToolEndpoint, **fields) -> HttpToolEndpoint:
    """Change the given ``fields`` only (a partial update)."""
    return rows.write(endpoint, _strip(fields), allowed=HTTP_FIELDS, update=True,
                      rules=_http_rules)  # fmt: skip


def delete_http_endpoint(endpoint: HttpToolEndpoint) -> None:
    """A workflow node that still names it fails with ``forbidden_url`` from then on."""
    endpoint.delete()


def create_mcp_server(tenant, **fields) -> McpServer:
    server = McpServer(tenant=tenant)
    return rows.write(server, _strip(fields), allowed=MCP_FIELDS, update=False,
                      rules=_mcp_rules)  # fmt: skip


def update_mcp_server(server: McpServer, **fields) -> McpServer:
    """Change the given ``fields`` only (a partial update)."""
    return rows.write(server, _strip(fields), allowed=MCP_FIELDS, update=True,
                      rules=_mcp_rules)  # fmt: skip


def delete_mcp_server(server: McpServer) -> None:
    """A workflow node that still names it fails with ``forbidden_tool`` from then on."""
    server.delete()
