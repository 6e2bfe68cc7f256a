"""The rules of the two outbound capabilities' inputs (``http_tool``, ``mcp_tool``) and of
what an operator registers for them, as plain functions of plain data.

A node's ``input`` is read here, field by field, before anything is looked up or called:
an unknown field, a wrong type or a size over its limit is an :class:`InputError` (the
capability's ``bad_input``). An HTTP node's URL is its endpoint's registered prefix plus the
node's ``path``; a path that could climb out of the prefix (``..``, ``.``, their
percent-encoded forms, a backslash, a query or fragment) is refused here, and
:func:`under_prefix` checks the joined URL again. No Django.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

from console import outbound

MAX_PATH_CHARS = 2_000
MAX_QUERY_PARAMS = 50
MAX_QUERY_KEY_CHARS = 200
MAX_QUERY_VALUE_CHARS = 2_000
MAX_BODY_BYTES = 256 * 1024
MAX_ARGUMENTS_BYTES = 256 * 1024
MAX_DEPENDENCIES_BYTES = 256 * 1024
PROMPT_MAX_CHARS = (1, 20_000)
DEFAULT_PROMPT_CHARS = 4_000
MAX_ALLOWED_TOOLS = 100
# MCP tool names: 1-128 of A-Z a-z 0-9 _ - . / (the protocol's recommendation).
MCP_TOOL_NAME = re.compile(r"^[A-Za-z0-9_./-]{1,128}$")
ARGUMENT_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")

HTTP_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["endpoint"],
    "properties": {
        "endpoint": {"type": "string", "description": "A registered HTTP endpoint's name."},
        "path": {"type": "string", "maxLength": MAX_PATH_CHARS},
        "query": {
            "type": "object",
            "maxProperties": MAX_QUERY_PARAMS,
            "additionalProperties": {"type": ["string", "number", "boolean"]},
        },
        "body": {"description": "JSON sent as the body of a POST endpoint."},
        "emitPrompt": {"type": "boolean"},
        "promptMaxChars": {
            "type": "integer",
            "minimum": PROMPT_MAX_CHARS[0],
            "maximum": PROMPT_MAX_CHARS[1],
        },
    },
}
MCP_INPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["server", "tool"],
    "properties": {
        "server": {"type": "string", "description": "A registered MCP server's name."},
        "tool": {"type": "string", "pattern": MCP_TOOL_NAME.pattern},
        "arguments": {"type": "object"},
        "queryArgument": {"type": ["string", "null"]},
        "dependenciesArgument": {"type": ["string", "null"]},
        "emitPrompt": {"type": "boolean"},
        "promptMaxChars": {
            "type": "integer",
            "minimum": PROMPT_MAX_CHARS[0],
            "maximum": PROMPT_MAX_CHARS[1],
        },
    },
}


class InputError(ValueError):
    """A node input, or a registration, that breaks a rule (the message says which)."""


@dataclass(frozen=True)
class HttpInput:
    endpoint: str
    path: str = ""
    query: tuple[tuple[str, str], ...] = ()
    body: Any = None
    has_body: bool = False
    emit_prompt: bool = False
    prompt_max_chars: int = DEFAULT_PROMPT_CHARS


# ``auto``: the argument named ``query`` / ``dependencies`` when the tool's schema has one.
AUTO = "auto"


@dataclass(frozen=True)
class McpInput:
    server: str
    tool: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    query_argument: str | None = AUTO
    dependencies_argument: str | None = AUTO
    emit_prompt: bool = False
    prompt_max_chars: int = DEFAULT_PROMPT_CHARS


def _object(raw: object) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        raise InputError("input: expected an object")
    return raw


def _unknown(raw: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    unknown = sorted(str(k) for k in raw if k not in schema["properties"])
    if unknown:
        raise InputError(f"input: unknown field {unknown[0]!r}")


def _name(raw: Mapping[str, Any], key: str) -> str:
    value = raw.get(key)
    if not isinstance(value, str) or not value.strip() or len(value) > 100:
        raise InputError(f"{key}: a registered name is required")
    return value.strip()


def _flag(raw: Mapping[str, Any], key: str) -> bool:
    value = raw.get(key, False)
    if not isinstance(value, bool):
        raise InputError(f"{key}: expected true or false")
    return value


def _prompt_cap(raw: Mapping[str, Any]) -> int:
    value = raw.get("promptMaxChars", DEFAULT_PROMPT_CHARS)
    low, high = PROMPT_MAX_CHARS
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise InputError(f"promptMaxChars: an integer from {low} to {high}")
    return value


def _json_size(value: Any, where: str, limit: int) -> None:
    try:
        size = len(json.dumps(value, ensure_ascii=False, allow_nan=False).encode())
    except (TypeError, ValueError) as exc:
        raise InputError(f"{where}: not JSON") from exc
    if size > limit:
        raise InputError(f"{where}: {size} bytes of JSON, over {limit}")


def _path(raw: Mapping[str, Any]) -> str:
    path = raw.get("path", "")
    if not isinstance(path, str) or len(path) > MAX_PATH_CHARS:
        raise InputError(f"path: text of at most {MAX_PATH_CHARS} characters")
    if any(c in path for c in "?#\\") or any(ord(c) < 0x21 or ord(c) == 0x7F for c in path):
        raise InputError("path: no query, fragment, backslash, space or control character")
    for segment in path.split("/"):
        if unquote(segment) in (".", "..") or "%2f" in segment.lower():
            raise InputError("path: no '.' or '..' segment and no encoded '/'")
    return path.lstrip("/")


def _query(raw: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    query = raw.get("query", {})
    if not isinstance(query, Mapping) or len(query) > MAX_QUERY_PARAMS:
        raise InputError(f"query: an object of at most {MAX_QUERY_PARAMS} parameters")
    pairs = []
    for key, value in query.items():
        if not isinstance(key, str) or not key or len(key) > MAX_QUERY_KEY_CHARS:
            raise InputError("query: a parameter name is 1-200 characters")
        if isinstance(value, bool):
            text = "true" if value else "false"
        elif isinstance(value, int | float) and json.dumps(value) not in ("NaN", "Infinity"):
            text = json.dumps(value)
        elif isinstance(value, str):
            text = value
        else:
            raise InputError(f"query.{key}: a string, number or boolean")
        if len(text) > MAX_QUERY_VALUE_CHARS or "\x00" in text or "\x00" in key:
            raise InputError(f"query.{key}: at most {MAX_QUERY_VALUE_CHARS} characters")
        pairs.append((key, text))
    return tuple(pairs)


def parse_http_input(raw: object) -> HttpInput:
    """A node's ``http_tool`` input, or :class:`InputError`."""
    data = _object(raw)
    _unknown(data, HTTP_INPUT_SCHEMA)
    has_body = "body" in data
    if has_body:
        _json_size(data["body"], "body", MAX_BODY_BYTES)
    return HttpInput(
        endpoint=_name(data, "endpoint"),
        path=_path(data),
        query=_query(data),
        body=data.get("body"),
        has_body=has_body,
        emit_prompt=_flag(data, "emitPrompt"),
        prompt_max_chars=_prompt_cap(data),
    )


def _argument_name(data: Mapping[str, Any], key: str) -> str | None:
    value = data.get(key, AUTO)
    if value is None or value == AUTO:
        return value
    if not isinstance(value, str) or not ARGUMENT_NAME.match(value):
        raise InputError(f"{key}: an argument name, 'auto' or null")
    return value


def parse_mcp_input(raw: object) -> McpInput:
    """A node's ``mcp_tool`` input, or :class:`InputError`."""
    data = _object(raw)
    _unknown(data, MCP_INPUT_SCHEMA)
    tool = data.get("tool")
    if not isinstance(tool, str) or not MCP_TOOL_NAME.match(tool):
        raise InputError("tool: a tool name (1-128 of A-Z a-z 0-9 _ - . /)")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, Mapping) or not all(isinstance(k, str) for k in arguments):
        raise InputError("arguments: expected an object")
    _json_size(arguments, "arguments", MAX_ARGUMENTS_BYTES)
    return McpInput(
        server=_name(data, "server"),
        tool=tool,
        arguments=dict(arguments),
        query_argument=_argument_name(data, "queryArgument"),
        dependencies_argument=_argument_name(data, "dependenciesArgument"),
        emit_prompt=_flag(data, "emitPrompt"),
        prompt_max_chars=_prompt_cap(data),
    )


def prefix_problem(url: object) -> str | None:
    """Why ``url`` cannot be a registered URL prefix (or MCP server URL), or None."""
    try:
        outbound.url_target(url)
    except outbound.Refused as exc:
        return str(exc)
    assert isinstance(url, str)
    parts = urlsplit(url)
    if parts.query or parts.fragment or url.endswith(("?", "#")):
        return "no query or fragment: a node adds its own query"
    if any(ord(c) < 0x21 or ord(c) == 0x7F for c in url) or "\\" in url:
        return "no space, backslash or control character"
    if any(unquote(s) in (".", "..") for s in parts.path.split("/")):
        return "no '.' or '..' segment"
    return None


def _origin(url: str) -> tuple[str, str, int]:
    target = outbound.url_target(url)
    return target.scheme, target.host.lower().rstrip("."), target.port


def join_under_prefix(prefix: str, path: str) -> str:
    """The URL a node calls: ``prefix`` then ``path`` (a checked relative path)."""
    if not path:
        return prefix
    return prefix + ("" if prefix.endswith("/") else "/") + path


def under_prefix(url: str, prefix: str) -> bool:
    """Whether ``url`` is ``prefix`` or below it: same scheme, host and port, and a path that
    continues the prefix's at a segment boundary."""
    try:
        if _origin(url) != _origin(prefix):
            return False
    except outbound.Refused:
        return False
    path, base = urlsplit(url).path or "/", urlsplit(prefix).path or "/"
    if any(unquote(s) in (".", "..") for s in path.split("/")):
        return False
    if path == base or base.endswith("/") and path.startswith(base):
        return True
    return path.startswith(base + "/")


def allowed_tools_problem(value: object) -> str | None:
    """Why ``value`` is not a list of MCP tool names an operator may allow, or None."""
    if not isinstance(value, list) or len(value) > MAX_ALLOWED_TOOLS:
        return f"a list of at most {MAX_ALLOWED_TOOLS} tool names"
    for name in value:
        if not isinstance(name, str) or not MCP_TOOL_NAME.match(name):
            return f"{name!r} is not a tool name (1-128 of A-Z a-z 0-9 _ - . /)"
    if len(set(value)) != len(value):
        return "a tool is named twice"
    return None


def mcp_arguments(
    given: McpInput,
    schema: Mapping[str, Any] | None,
    query: str,
    dependencies: Mapping[str, Any],
) -> dict[str, Any]:
    """The arguments sent to the tool: the node's ``arguments``, plus the turn's ``query``
    and the completed dependencies' results under the argument names the node chose (or,
    ``auto``, ``query`` / ``dependencies`` when the tool's input schema declares them). A
    value the node set itself is never overwritten."""
    properties = (schema or {}).get("properties")
    declared = set(properties) if isinstance(properties, Mapping) else set()
    arguments = dict(given.arguments)
    query_name = _chosen(given.query_argument, "query", declared)
    if query_name and query_name not in arguments:
        arguments[query_name] = query
    dependencies_name = _chosen(given.dependencies_argument, "dependencies", declared)
    if dependencies_name and dependencies_name not in arguments:
        _json_size(dependencies, "dependencies", MAX_DEPENDENCIES_BYTES)
        arguments[dependencies_name] = dict(dependencies)
    return arguments


def _chosen(choice: str | None, default: str, declared: set[str]) -> str | None:
    if choice == AUTO:
        return default if default in declared else None
    return choice


def dependency_results(outputs: Mapping[str, Any]) -> dict[str, Any]:
    """``{node id: {"value", "promptContent"}}`` of completed outputs (``NodeOutput``-like)."""
    found = {}
    for node_id, output in outputs.items():
        result = output.result
        found[str(node_id)] = {"value": result.value, "promptContent": result.prompt_content}
    return found


def prompt_text(value: Any, cap: int) -> str:
    """``value`` as text a prompt can carry (JSON for anything but text), at most ``cap``
    characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text[:cap]
