"""The "test connection" button of an MCP server (console and
``POST /api/v1/workflow-tools/mcp/{id}/test``): one session through the same client and guard
a workflow node uses, listing the server's tools, so a wrong URL, key or tool name shows here
rather than in a turn. It calls no tool."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from asgiref.sync import async_to_sync

from roleplay.workflows.engine.contracts import CapabilityError
from roleplay.workflows.tool_models import McpServer
from roleplay.workflows.tools import mcp_client
from roleplay.workflows.tools.calls import bounded, key_status


@dataclass(frozen=True)
class ServerTestResult:
    """``tools``: what the server lists, each with whether a node may call it."""

    ok: bool
    latency_ms: float
    tools: list[dict] = field(default_factory=list)
    error_code: str | None = None
    error_message: str | None = None
    warnings: list[str] = field(default_factory=list)


def as_client_server(row: McpServer) -> mcp_client.Server:
    return mcp_client.Server(row.name, row.url, row.api_key_env, row.timeout_ms,
                             tuple(row.allowed_tools))  # fmt: skip


async def _listing(server: mcp_client.Server) -> list[mcp_client.ToolInfo]:
    async def work():
        async with mcp_client.session(server) as client:
            return await mcp_client.list_tools(client)

    return await bounded(work(), asyncio.Event(), server.timeout_ms / 1000)


def run_server_test(row: McpServer) -> ServerTestResult:
    """The server's tools, or the failure's code and message (never an exception)."""
    server = as_client_server(row)
    started = time.perf_counter()
    warnings = []
    if key_status(row.api_key_env) == "missing":
        warnings.append(f"The key variable ${row.api_key_env} is not set on this server.")
    try:
        listed = async_to_sync(_listing)(server)
    except CapabilityError as exc:
        elapsed = round((time.perf_counter() - started) * 1000, 1)
        return ServerTestResult(False, elapsed, [], exc.code, exc.message, warnings)
    elapsed = round((time.perf_counter() - started) * 1000, 1)
    tools = [
        {"name": t.name, "description": t.description[:500], "allowed": t.name in row.allowed_tools}
        for t in listed
    ]
    names = {t.name for t in listed}
    missing = [name for name in row.allowed_tools if name not in names]
    if missing:
        warnings.append(f"Allowed but not offered by the server: {', '.join(missing)}.")
    return ServerTestResult(True, elapsed, tools, None, None, warnings)
