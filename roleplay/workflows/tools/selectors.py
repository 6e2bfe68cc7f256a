"""Reads of the tools an operator registered: the console's lists, and the one row a node
names (by name, in the run's tenant only)."""

from __future__ import annotations

from console.lists import matching
from console.scoping import scoped
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer

HTTP_SEARCH = ("name", "description", "url_prefix")
MCP_SEARCH = ("name", "description", "url")


def http_endpoints(tenant, query: str | None = None):
    return matching(scoped(HttpToolEndpoint, tenant), query, HTTP_SEARCH).order_by("name")


def mcp_servers(tenant, query: str | None = None):
    return matching(scoped(McpServer, tenant), query, MCP_SEARCH).order_by("name")


def http_endpoint_named(tenant_id, name: str) -> HttpToolEndpoint | None:
    return HttpToolEndpoint.objects.filter(tenant_id=tenant_id, name=name).first()


def mcp_server_named(tenant_id, name: str) -> McpServer | None:
    return McpServer.objects.filter(tenant_id=tenant_id, name=name).first()
