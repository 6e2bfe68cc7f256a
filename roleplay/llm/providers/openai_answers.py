"""Reading an OpenAI-compatible answer defensively: nothing validated its JSON (the provider
asks the SDK for plain objects), so every part is checked for its type, and a wrong one is
a ``ModelBadResponse``."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from console.tokens import count_messages, count_tokens

from ..errors import (
    ModelBadResponse,
    ModelContentFiltered,
)
from ..types import (
    CompletionResult,
    ToolCall,
    Usage,
)


def json_object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModelBadResponse(f"{what} is not a JSON object")
    return value


def json_list(value: Any) -> list[Any]:
    """A JSON array, with null and absent read as empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelBadResponse("expected a JSON array")
    return value


def json_text(value: Any, what: str) -> str:
    """A JSON string, with null and absent read as empty."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ModelBadResponse(f"{what} is not a string")
    return value


def first_choice(response: Any) -> dict[str, Any]:
    choices = json_list(json_object(response, "response").get("choices"))
    if not choices:
        raise ModelBadResponse("response has no choices")
    return json_object(choices[0], "choice")


def call_parts(call: Any) -> tuple[str, str, str]:
    """(id, name, arguments) of one complete tool call. Arguments are a JSON string by the
    protocol; a server that sends them as an object already (some do) is taken at its word."""
    call = json_object(call, "tool call")
    function = json_object(call.get("function") or {}, "tool call function")
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return (
        json_text(call.get("id"), "tool call id"),
        json_text(function.get("name"), "tool call name"),
        json_text(arguments, "tool call arguments"),
    )


def merge_tool_fragment(calls: dict[int, list[str]], fragment: dict[str, Any]) -> None:
    """Assemble streamed tool calls: the id and name come once, arguments in pieces.

    Servers differ: some repeat the id and the whole name in every piece (llama.cpp's
    Python server), some leave out ``index`` (then a piece with a known id, or without an
    id, continues the call before it)."""
    call_id, name, arguments = call_parts(fragment)
    index = fragment.get("index")
    if not isinstance(index, int) or isinstance(index, bool):
        known = [i for i, entry in calls.items() if call_id and entry[0] == call_id]
        if known:
            index = known[0]
        elif not call_id and calls:
            index = max(calls)
        else:
            index = len(calls)
    entry = calls.setdefault(index, ["", "", ""])
    if call_id:
        entry[0] = call_id
    if name and name != entry[1]:
        entry[1] = name if entry[1] and name.startswith(entry[1]) else entry[1] + name
    entry[2] += arguments


def read_usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt_tokens")
    completion = raw.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    total = raw.get("total_tokens")
    total = total if isinstance(total, int) and total > 0 else prompt + completion
    return Usage(prompt, completion, total, cached_tokens(raw, prompt))


def cached_tokens(raw: dict[str, Any], prompt: int) -> int:
    """The prompt tokens the server served from its cache: OpenAI's (and vLLM's, llama.cpp
    server's) ``prompt_tokens_details.cached_tokens``, else DeepSeek's
    ``prompt_cache_hit_tokens``; anything else reads as 0."""
    details = raw.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    if cached is None:
        cached = raw.get("prompt_cache_hit_tokens")
    if not isinstance(cached, int) or isinstance(cached, bool) or cached < 0:
        return 0
    return min(cached, prompt)


def completion_result(
    model: str,
    messages: list[dict[str, Any]],
    content: str,
    raw_calls: Sequence[tuple[str | None, str | None, str | None]],
    finish_reason: str,
    usage: Usage | None,
    started: float,
    *,
    reasoning: str = "",
) -> CompletionResult:
    if finish_reason == "content_filter":
        raise ModelContentFiltered("the provider's content filter stopped the reply")
    tool_calls = [parse_tool_call(*raw) for raw in raw_calls]
    if usage is None:  # servers without usage reporting: count as the budgets do
        output = count_tokens(content) + sum(
            count_tokens(call.name) + count_tokens(json.dumps(call.arguments))
            for call in tool_calls
        )
        usage = Usage.of(count_messages(messages), output)
    return CompletionResult(
        content=content,
        tool_calls=tool_calls,
        usage=usage,
        model=model,
        finish_reason=finish_reason,
        latency_ms=(time.perf_counter() - started) * 1000.0,
        attempts=1,
        reasoning=reasoning,
    )


def parse_tool_call(call_id: str | None, name: str | None, arguments: str | None) -> ToolCall:
    """A ToolCall with parsed arguments; malformed JSON is a bad response (retryable)."""
    if not name:
        raise ModelBadResponse("tool call without a function name")
    try:
        parsed = json.loads(arguments) if arguments and arguments.strip() else {}
    except json.JSONDecodeError as exc:
        raise ModelBadResponse(f"tool call {name!r} has invalid JSON arguments: {exc}") from exc
    if not isinstance(parsed, dict):
        raise ModelBadResponse(f"tool call {name!r} arguments are not a JSON object")
    return ToolCall(id=call_id or f"call_{name}", name=name, arguments=parsed)
