"""Talking to a registered MCP server: the official Python MCP client (``mcp``) over
streamable HTTP, on an HTTP client that reaches only what the SSRF guard allows.

One session per call: connect, list the tools (the listing says whether the tool exists and
gives its input schema), call, close. Every failure leaves here as a coded
:class:`CapabilityError`: ``forbidden_url`` (the guard refused the server's address),
``mcp_unavailable`` (no session: down, refused, not MCP), ``mcp_tool_error`` (the tool
answered an error, or the server refused the call), ``bad_input`` (arguments that break the
tool's input schema), ``response_too_large``. The caller bounds the time (``calls.bounded``).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx2
import jsonschema
from mcp.client import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import Implementation

from console import outbound
from roleplay.workflows.engine.contracts import CapabilityError
from roleplay.workflows.tools.calls import api_key, policy

CLIENT_INFO = Implementation(name="roleplay-workflows", version="1")
MAX_RESULT_CHARS = 1_000_000
MAX_LISTING_PAGES = 20
MESSAGE_CHARS = 500


@dataclass(frozen=True)
class Server:
    """What a session needs of a registered server (a plain copy of its row)."""

    name: str
    url: str
    api_key_env: str
    timeout_ms: int
    allowed_tools: tuple[str, ...] = ()


@dataclass(frozen=True)
class ToolInfo:
    name: str
    description: str
    input_schema: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ToolResult:
    text: str
    structured: Any
    artifacts: tuple[dict[str, Any], ...]


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]
    return [exc]


def coded(exc: BaseException, during: str) -> CapabilityError:
    """The one coded error for what the client raised (task groups wrap it)."""
    leaves = _leaves(exc)
    for kind in (CapabilityError, outbound.Refused, httpx2.TimeoutException, MCPError):
        found = next((leaf for leaf in leaves if isinstance(leaf, kind)), None)
        if isinstance(found, CapabilityError):
            return found
        if isinstance(found, outbound.Refused):
            return CapabilityError("forbidden_url", f"the server's URL is refused: {found}")
        if isinstance(found, httpx2.TimeoutException):
            return CapabilityError("timeout", "the MCP server did not answer in time")
        if isinstance(found, MCPError):
            code = "mcp_tool_error" if during == "call" else "mcp_unavailable"
            return CapabilityError(code, f"the MCP server refused: {found}"[:MESSAGE_CHARS])
    first = leaves[0] if leaves else exc
    message = f"the MCP server cannot be reached: {type(first).__name__}: {first}"
    return CapabilityError("mcp_unavailable", message[:MESSAGE_CHARS])


@asynccontextmanager
async def session(server: Server) -> AsyncIterator[Client]:
    """A connected client of ``server`` (its URL checked by the guard first)."""
    guard = policy()
    try:
        await outbound.check_url(server.url, guard)
    except outbound.Refused as exc:
        raise CapabilityError("forbidden_url", f"the server's URL is refused: {exc}") from exc
    key = api_key(server.api_key_env)
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    timeout_s = server.timeout_ms / 1000
    async with outbound.async_client(timeout_s, guard, headers) as http:
        transport = streamable_http_client(server.url, http_client=http)
        client = Client(transport, cache=None, client_info=CLIENT_INFO,
                        read_timeout_seconds=timeout_s)  # fmt: skip
        try:
            await client.__aenter__()
        except Exception as exc:
            raise coded(exc, "connect") from exc
        try:
            yield client
        finally:
            try:
                await client.__aexit__(None, None, None)
            except Exception:  # noqa: S110 - closing a session that already failed
                pass


async def list_tools(client: Client) -> list[ToolInfo]:
    """Every tool the server lists (at most ``MAX_LISTING_PAGES`` pages)."""
    found: list[ToolInfo] = []
    cursor = None
    try:
        for _page in range(MAX_LISTING_PAGES):
            page = await client.list_tools(cursor=cursor)
            for tool in page.tools:
                schema = tool.input_schema if isinstance(tool.input_schema, Mapping) else {}
                found.append(ToolInfo(tool.name, tool.description or "", schema))
            cursor = page.next_cursor
            if cursor is None:
                break
    except Exception as exc:
        raise coded(exc, "list") from exc
    return found


def _check_arguments(tool: ToolInfo, arguments: Mapping[str, Any]) -> None:
    schema = dict(tool.input_schema)
    try:
        validator_class = jsonschema.validators.validator_for(schema)
        validator_class.check_schema(schema)
    except jsonschema.SchemaError:
        return  # the server's own schema is broken: the server judges the arguments
    error = jsonschema.exceptions.best_match(validator_class(schema).iter_errors(arguments))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "arguments"
        message = f"arguments for {tool.name!r}: {where}: {error.message}"
        raise CapabilityError("bad_input", message[:MESSAGE_CHARS])


def _result(answer) -> ToolResult:
    texts, artifacts = [], []
    for item in answer.content:
        if getattr(item, "type", "") == "text":
            texts.append(item.text)
        else:  # an image, audio or resource: described, its data left out
            kind = getattr(item, "type", "unknown")
            artifacts.append({"type": kind, "mimeType": getattr(item, "mime_type", None)})
    text = "\n".join(texts)
    if answer.is_error:
        raise CapabilityError("mcp_tool_error", (text or "the tool failed")[:MESSAGE_CHARS])
    if len(text) > MAX_RESULT_CHARS:
        raise CapabilityError("response_too_large", f"the tool's text is over {MAX_RESULT_CHARS}")
    return ToolResult(text, answer.structured_content, tuple(artifacts))


async def call_tool(
    server: Server,
    tool_name: str,
    arguments_for: Callable[[ToolInfo], dict[str, Any]],
) -> ToolResult:
    """Call ``tool_name`` with ``arguments_for(its listing)``, checked against its schema."""
    async with session(server) as client:
        listed = {tool.name: tool for tool in await list_tools(client)}
        tool = listed.get(tool_name)
        if tool is None:
            message = f"the MCP server {server.name!r} offers no tool {tool_name!r}"
            raise CapabilityError("mcp_tool_error", message)
        arguments = arguments_for(tool)
        _check_arguments(tool, arguments)
        try:
            answer = await client.call_tool(tool_name, arguments)
        except Exception as exc:
            raise coded(exc, "call") from exc
        return _result(answer)
