"""``mcp_tool``: a workflow node calls a tool of an MCP server its operator registered (the
seed's ``McpCapability``, ``002`` lines 1420–1430, with the adapter built in: the official
Python MCP client over streamable HTTP).

Input (``engine.tool_inputs.MCP_INPUT_SCHEMA``): ``server`` (a registered name of the run's
tenant), ``tool`` (one of that server's ``allowed_tools``, else ``forbidden_tool``: checked
before any connection), ``arguments`` (an object), ``queryArgument`` /
``dependenciesArgument``, ``emitPrompt`` and ``promptMaxChars``.

Like the seed's capability, the tool gets the node's arguments, the turn's ``query`` and the
completed ``dependencies``: the query goes in the argument ``queryArgument`` names, the
dependencies (``{node id: {value, promptContent}}``) in the one ``dependenciesArgument``
names; left at ``auto`` (the default), they go in ``query`` / ``dependencies`` when the
tool's input schema declares those, and nowhere otherwise (a tool that does not take them
is not sent them); ``null`` sends neither. An argument the node sets itself is never
replaced. The arguments are checked against the tool's input schema before the call
(``bad_input``).

The value is ``{"text": the text contents joined, "structured": the structured content or
null}``; other contents (images, resources) are artifacts, described without their data.
With ``emitPrompt`` the text (capped) is the node's ``prompt_content``. Errors:
``forbidden_tool``, ``forbidden_url``, ``mcp_unavailable``, ``mcp_tool_error``,
``key_missing``, ``timeout`` (the server's ``timeout_ms`` for the whole session),
``cancelled``.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from asgiref.sync import sync_to_async

from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue
from roleplay.workflows.engine.tool_inputs import (
    MCP_INPUT_SCHEMA,
    InputError,
    McpInput,
    dependency_results,
    mcp_arguments,
    parse_mcp_input,
    prompt_text,
)
from roleplay.workflows.tools import mcp_client, selectors
from roleplay.workflows.tools.calls import bounded

NAME = "mcp_tool"


def _server(tenant_id, name: str) -> mcp_client.Server | None:
    row = selectors.mcp_server_named(tenant_id, name)
    if row is None:
        return None
    return mcp_client.Server(row.name, row.url, row.api_key_env, row.timeout_ms,
                             tuple(row.allowed_tools))  # fmt: skip


def _arguments_for(given: McpInput, call: CapabilityCall):
    def arguments(tool: mcp_client.ToolInfo) -> dict:
        dependencies = dependency_results(call.dependencies)
        try:
            return mcp_arguments(given, tool.input_schema, call.query, dependencies)
        except InputError as exc:
            raise CapabilityError("bad_input", str(exc)) from exc

    return arguments


@dataclass
class McpTool:
    """The capability for one run: it reads only the run tenant's servers."""

    scope: registry.RunScope
    name: str = NAME
    input_schema = MCP_INPUT_SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        try:
            given = parse_mcp_input(call.input)
        except InputError as exc:
            raise CapabilityError("bad_input", str(exc)) from exc
        server = await sync_to_async(_server)(self.scope.tenant_id, given.server)
        if server is None:
            message = f"no MCP server named {given.server!r} is registered"
            raise CapabilityError("forbidden_tool", message)
        if given.tool not in server.allowed_tools:
            message = f"tool {given.tool!r} is not allowed on MCP server {server.name!r}"
            raise CapabilityError("forbidden_tool", message)
        work = mcp_client.call_tool(server, given.tool, _arguments_for(given, call))
        result = await bounded(work, cancel, server.timeout_ms / 1000)
        prompt = prompt_text(result.text, given.prompt_max_chars) if given.emit_prompt else None
        return CapabilityValue(
            value={"text": result.text, "structured": result.structured},
            prompt_content=prompt,
            artifacts=result.artifacts,
        )


registry.register(
    NAME,
    McpTool,
    description="Call an allowed tool of an MCP server the operator registered.",
    input_schema=MCP_INPUT_SCHEMA,
)
