"""Provider for any server speaking OpenAI chat completions (OpenAI, vLLM, llama.cpp server,
Ollama, LM Studio, our scripted test server), through the official ``openai`` SDK.

The SDK's own retries are switched off (``max_retries=0``): ``ModelClient`` is the only
retry layer, so attempts are counted and recorded in one place. Everything the SDK can
raise is translated into ``errors.ModelError`` here.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import time
import weakref
from collections.abc import AsyncGenerator, Sequence
from typing import Any

import httpx2
import openai

from console.tokens import count_messages, count_tokens

from .errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelBadResponse,
    ModelConnectionError,
    ModelContentFiltered,
    ModelError,
    ModelRateLimited,
    ModelServerError,
    ModelTimeout,
)
from .provider import Provider, await_or_cancel, iterate_or_cancel, openai_tools
from .types import (
    CompletionResult,
    ProviderConfig,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)

_CONTENT_FILTER_CODES = {"content_filter", "content_policy_violation", "content_filtered"}


class OpenAICompatProvider(Provider):
    """One model on one OpenAI-compatible endpoint; a single attempt per call."""

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        # httpx connection pools belong to the event loop that opened them; Celery and
        # async_to_sync may run us on several loops, so keep one client per loop.
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, openai.AsyncOpenAI]
        self._clients = weakref.WeakKeyDictionary()

    def _client(self) -> openai.AsyncOpenAI:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            client = openai.AsyncOpenAI(
                base_url=self.config.base_url or None,
                api_key=self.config.api_key or "not-needed",
                max_retries=0,
                timeout=self.config.timeout_s,
            )
            self._clients[loop] = client
        return client

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.close()

    def _params(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None,
        tool_choice: str | dict[str, Any],
        parallel_tool_calls: bool,
        response_format: dict[str, Any] | None,
        max_tokens: int | None,
        temperature: float | None,
        timeout: float | None,
    ) -> dict[str, Any]:
        config = self.config
        params: dict[str, Any] = {
            "model": config.model,
            "messages": messages,
            "max_tokens": max_tokens or config.max_output_tokens,
            "temperature": config.temperature if temperature is None else temperature,
            "top_p": config.top_p,
            "timeout": config.timeout_s if timeout is None else timeout,
        }
        if tools:
            params["tools"] = openai_tools(tools)
            params["tool_choice"] = tool_choice
            params["parallel_tool_calls"] = parallel_tool_calls
        if response_format is not None:
            params["response_format"] = response_format
        if config.extra:
            params["extra_body"] = dict(config.extra)
        return params

    async def complete(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] = "auto",
        parallel_tool_calls: bool = True,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        cancel: asyncio.Event | None = None,
    ) -> CompletionResult:
        started = time.perf_counter()
        params = self._params(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            response_format=response_format,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout=timeout,
        )
        deadline = params["timeout"]
        try:
            # The SDK timeout bounds each network phase; this bounds the whole request,
            # so a server trickling bytes cannot hold a non-streamed call forever.
            async with asyncio.timeout(deadline):
                response = await await_or_cancel(
                    self._client().chat.completions.create(**params), cancel
                )
            choices = getattr(response, "choices", None)
            if not choices:
                raise ModelBadResponse("response has no choices")
            choice = choices[0]
            message = choice.message
            content = message.content or ""
            raw_calls = [
                (call.id, call.function.name, call.function.arguments)
                for call in (message.tool_calls or [])
            ]
            finish_reason = choice.finish_reason or "stop"
            usage = _usage(getattr(response, "usage", None))
        except TimeoutError as exc:
            raise ModelTimeout(f"no complete response within {deadline:g}s") from exc
        except (ModelError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise map_openai_error(exc) from exc
        return _result(
            self.config.model, messages, content, raw_calls, finish_reason, usage, started
        )

    async def stream(
        self,
        messages: list[dict[str, Any]],
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] = "auto",
        parallel_tool_calls: bool = True,
        response_format: dict[str, Any] | None = None,
        max_tokens: int | None = None,
        temperature: float | None = None,
        timeout: float | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        started = time.perf_counter()
        params = self._params(
            messages,
            tools=tools,
            tool_choice=tool_choice,
            parallel_tool_calls=parallel_tool_calls,
            response_format=response_format,
            max_tokens=max_tokens,
            temperature=temperature,
            timeout=timeout,
        )
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        parts: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        finish_reason: str | None = None
        usage: Usage | None = None
        stream: Any = None
        try:
            stream = await await_or_cancel(self._client().chat.completions.create(**params), cancel)
            async for chunk in iterate_or_cancel(stream, cancel):
                if getattr(chunk, "usage", None) is not None:
                    usage = _usage(chunk.usage)
                for choice in getattr(chunk, "choices", None) or []:
                    if getattr(choice, "index", 0) != 0:
                        continue
                    delta = choice.delta
                    if delta is not None:
                        for fragment in delta.tool_calls or []:
                            _merge_tool_fragment(calls, fragment)
                        if delta.content:
                            parts.append(delta.content)
                            yield TextDelta(delta.content)
                    if choice.finish_reason:
                        finish_reason = choice.finish_reason
        except (ModelError, asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            raise map_openai_error(exc) from exc
        finally:
            if stream is not None:
                await stream.close()
        if finish_reason is None:
            raise ModelBadResponse("stream ended before a finish_reason")
        raw_calls = [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]
        content = "".join(parts)
        yield StreamDone(
            _result(self.config.model, messages, content, raw_calls, finish_reason, usage, started)
        )


def _merge_tool_fragment(calls: dict[int, list[str]], fragment: Any) -> None:
    """Assemble streamed tool calls: the id and name come once, arguments in pieces."""
    index = fragment.index if fragment.index is not None else len(calls)
    entry = calls.setdefault(index, ["", "", ""])
    if fragment.id:
        entry[0] = fragment.id
    function = fragment.function
    if function is not None:
        if function.name:
            entry[1] += function.name
        if function.arguments:
            entry[2] += function.arguments


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    prompt = getattr(raw, "prompt_tokens", None)
    completion = getattr(raw, "completion_tokens", None)
    if prompt is None or completion is None:
        return None
    total = getattr(raw, "total_tokens", None)
    prompt, completion = int(prompt), int(completion)
    return Usage(prompt, completion, int(total or 0) or prompt + completion)


def _result(
    model: str,
    messages: list[dict[str, Any]],
    content: str,
    raw_calls: Sequence[tuple[str | None, str | None, str | None]],
    finish_reason: str,
    usage: Usage | None,
    started: float,
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


def map_openai_error(exc: BaseException) -> ModelError:
    """Translate an SDK/transport exception into the gateway's error vocabulary."""
    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APITimeoutError | httpx2.TimeoutException | TimeoutError):
        return ModelTimeout(str(exc) or "request timed out")
    if isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        return ModelConnectionError(_describe(exc))
    if isinstance(exc, openai.APIResponseValidationError):
        return ModelBadResponse(_describe(exc))
    if isinstance(exc, openai.APIStatusError):
        return _status_error(exc)
    if isinstance(exc, openai.APIError):  # an error event inside a stream
        return ModelServerError(_describe(exc))
    if isinstance(exc, ValueError):  # invalid JSON body or SSE data line
        return ModelBadResponse(f"malformed response: {exc}")
    if isinstance(exc, httpx2.HTTPError):
        return ModelConnectionError(_describe(exc))
    return ModelError("model_error", _describe(exc), False)


def _status_error(exc: openai.APIStatusError) -> ModelError:
    status = exc.status_code
    message = f"HTTP {status}: {exc.message}"
    retry_after = _retry_after(exc.response.headers)
    code = (exc.code or "").lower()
    if status == 429:
        return ModelRateLimited(message, status=status, retry_after=retry_after)
    if status == 408:
        return ModelTimeout(message, status=status, retry_after=retry_after)
    if status in (401, 403):
        return ModelAuthError(message, status=status)
    if code in _CONTENT_FILTER_CODES:
        return ModelContentFiltered(message, status=status)
    if status >= 500:
        return ModelServerError(message, status=status, retry_after=retry_after)
    return ModelBadRequest(message, status=status)


def _retry_after(headers: Any) -> float | None:
    """Seconds from ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(float(raw_ms) / 1000.0, 0.0)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(float(raw), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _describe(exc: BaseException) -> str:
    """The exception and its transport cause: "Connection error." alone says too little."""
    text = f"{type(exc).__name__}: {exc}"
    cause = exc.__cause__
    if cause is not None and str(cause):
        text += f" ({type(cause).__name__}: {cause})"
    return text
