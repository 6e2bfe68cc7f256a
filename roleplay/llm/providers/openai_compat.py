"""Provider for any server speaking OpenAI chat completions (OpenAI, vLLM, llama.cpp server,
Ollama, LM Studio, our scripted test server), through the official ``openai`` SDK.

The SDK's own retries are switched off (``max_retries=0``): ``ModelClient`` is the only
retry layer, so attempts are counted and recorded in one place. Everything the SDK can
raise is translated into ``errors.ModelError`` here.

Requests go through the SDK client's generic ``post`` with the body we built and come back
as plain JSON (``cast_to=object``): the typed ``chat.completions.create`` walks every request
through its TypedDict transformer and builds a pydantic model per streamed chunk, which cost
more CPU per chat turn than everything else on the turn's path. Auth, base URL, timeouts,
SSE decoding, error statuses and in-stream error events stay the SDK's; the JSON is read
defensively below, since nothing validated it.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import re
import ssl
import time
import weakref
from collections.abc import AsyncGenerator, Sequence
from functools import lru_cache
from typing import Any

import httpx2
import openai

from console.tokens import count_messages, count_tokens

from ..errors import (
    ModelAuthError,
    ModelBadRequest,
    ModelBadResponse,
    ModelConnectionError,
    ModelContentFiltered,
    ModelContextExceeded,
    ModelError,
    ModelRateLimited,
    ModelServerError,
    ModelTimeout,
)
from ..provider import Interruptible, Provider, await_or_cancel, openai_tools
from ..reasoning import StreamFilter, strip_reasoning
from ..roles import AS_SENT, refusal_level, reshape
from ..types import (
    CompletionResult,
    ModelRequest,
    ProviderConfig,
    StreamDone,
    StreamEvent,
    TextDelta,
    ToolCall,
    Usage,
)

logger = logging.getLogger(__name__)

POOL_SHARDS = 8
LIST_TIMEOUT_S = 10.0  # GET /models, for the console's config test
MAX_LISTED = 200
CONTINUE_NUDGE = (
    "Continue your last reply from exactly where it stops. Do not repeat any of it; write "
    "only what comes next, with capitalization and punctuation that join on seamlessly."
)
_CONTENT_FILTER_CODES = {"content_filter", "content_policy_violation", "content_filtered"}
# A request the server's own validation refused, though it answered 500 (llama.cpp's Python
# server does, for a ``response_format`` it does not take): not retried, like a 400.
_VALIDATION_WORDS = re.compile(r"\d+ validation errors?\b.*'loc'|literal_error", re.DOTALL)
# How servers say the prompt does not fit: OpenAI's and llama.cpp's code, and the words of
# vLLM ("maximum context length"), llama.cpp's C++ server ("exceeds the available context
# size"), Ollama and others.
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error"}
_CONTEXT_WORDS = re.compile(
    r"maximum context length|context (?:length|window|size) (?:exceeded|is exceeded)"
    r"|exceeds? (?:the )?(?:available )?context (?:size|window|length)"
    r"|prompt is too long|too many tokens in the prompt",
    re.IGNORECASE,
)


def refused_params(params: dict[str, Any], said: str) -> dict[str, str | None]:
    """What of ``params`` a server's refusal (its 400 or 422, ``said``) names as a parameter
    it does not take, and what to send instead: nothing (None) or the same value under
    another name. ``stream_options`` and ``parallel_tool_calls`` change nothing the call
    means (older and stricter servers do not know them); a sampling parameter the model
    does not support (OpenAI's reasoning models: only the default) is left to the server;
    ``max_tokens`` is ``max_completion_tokens`` where a server asks for that name."""
    lowered = said.lower()
    found: dict[str, str | None] = {}
    for key in params:
        if key in ("stream_options", "parallel_tool_calls") and key in said:
            found[key] = None
        elif key in ("temperature", "top_p") and key in said and "unsupported" in lowered:
            found[key] = None
        elif key == "max_tokens" and "max_completion_tokens" in said:
            found[key] = "max_completion_tokens"
    return found


def _apply_refused(params: dict[str, Any], refused: dict[str, str | None]) -> None:
    for key, instead in refused.items():
        if key in params:
            value = params.pop(key)
            if instead is not None:
                params[instead] = value


@lru_cache(maxsize=1)
def ssl_context() -> ssl.SSLContext:
    """httpx's default TLS context, built once: building it (loading the CA store) is what
    makes a new client cost tens of milliseconds, on the event loop."""
    return httpx2.create_ssl_context()


class OpenAICompatProvider(Provider):
    """One model on one OpenAI-compatible endpoint; a single attempt per call."""

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        # httpx connection pools belong to the event loop that opened them; Celery and
        # async_to_sync may run us on several loops, so keep clients per loop. Per loop,
        # ``POOL_SHARDS`` clients take the requests in turn: httpcore's pool checks every
        # idle connection it holds on each request, which with 50 streams in flight cost
        # more CPU than a turn's database work; smaller pools scan less.
        self._clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, list[openai.AsyncOpenAI | None]
        ]
        self._clients = weakref.WeakKeyDictionary()
        self._turn = 0
        self.refused: dict[str, str | None] = {}  # see refused_params: kept for good
        # roles.reshape's level: as configured, raised for good when the server refuses
        self.role_level = AS_SENT if config.role_order == "auto" else config.role_order

    @property
    def base_url(self) -> str:
        """Where requests go; a subclass may find it at run time."""
        return self.config.base_url

    def _client(self) -> openai.AsyncOpenAI:
        shards = self._clients.setdefault(asyncio.get_running_loop(), [None] * POOL_SHARDS)
        self._turn = (self._turn + 1) % POOL_SHARDS
        client = shards[self._turn]
        if client is None:  # made on first use, in well under a millisecond
            client = shards[self._turn] = openai.AsyncOpenAI(
                base_url=self.base_url or None,
                api_key=self.config.api_key or "not-needed",
                max_retries=0,
                timeout=self.config.timeout_s,
                http_client=openai.DefaultAsyncHttpxClient(verify=ssl_context()),
            )
        return client

    async def models(self) -> list[str]:
        """The ids ``GET /models`` lists (the first page, sorted, at most ``MAX_LISTED``)."""
        try:
            page = await self._client().models.list(timeout=LIST_TIMEOUT_S)
            ids = {getattr(model, "id", None) for model in page.data}
        except Exception as exc:  # any answer but a list is the server's problem
            raise map_openai_error(exc) from exc
        return sorted(name for name in ids if isinstance(name, str) and name)[:MAX_LISTED]

    async def aclose(self) -> None:
        for client in self._clients.pop(asyncio.get_running_loop(), None) or []:
            if client is not None:
                await client.close()

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        """The request body. Extra params fill in only what the call leaves unset, so a
        config's ``extra`` cannot replace the messages or switch streaming off."""
        config = self.config
        params: dict[str, Any] = {
            "model": config.model,
            "messages": reshape(self._messages(request), self.role_level),
            "max_tokens": request.max_tokens or config.max_output_tokens,
            "temperature": (
                config.temperature if request.temperature is None else request.temperature
            ),
        }
        if config.top_p is not None:
            params["top_p"] = config.top_p
        if request.tools:
            params["tools"] = openai_tools(request.tools)
            params["tool_choice"] = request.tool_choice
            params["parallel_tool_calls"] = request.parallel_tool_calls
        if request.response_format is not None:
            params["response_format"] = request.response_format
        for key, value in (config.extra or {}).items():
            params.setdefault(key, value)
        return params

    def _messages(self, request: ModelRequest) -> list[dict[str, Any]]:
        """The messages to send. A continue ends with the reply to go on from; chat servers
        answer a conversation rather than extend its last message, so they are asked to."""
        if not request.continue_final_message:
            return request.messages
        return [*request.messages, {"role": "system", "content": CONTINUE_NUDGE}]

    def _deadline(self, timeout: float | None) -> float:
        return self.config.timeout_s if timeout is None else timeout

    async def _post(self, params: dict[str, Any], timeout: float, *, stream: bool) -> Any:
        """One chat-completions request; JSON (or an SSE stream of JSON) comes back as is.
        A request the server refuses for a parameter it does not take
        (:func:`refused_params`) is sent again without it (a server names one at a time),
        and this provider never sends it again. So is one whose chat template refuses the
        order of the messages (:mod:`roles`), reshaped from then on."""
        _apply_refused(params, self.refused)
        while True:
            try:
                return await self._send(params, timeout, stream=stream)
            except openai.APIStatusError as exc:
                said = f"{exc} {exc.body}"
                level = refusal_level(said, self.role_level)
                if level is not None and exc.status_code in (400, 422, 500):
                    logger.warning(
                        "the server of model %s refused the order of the messages: sent %s",
                        self.config.model,
                        level,
                    )
                    self.role_level = level
                    params["messages"] = reshape(params["messages"], level)
                    continue
                refused = refused_params(params, said)
                if exc.status_code not in (400, 422) or not refused:
                    raise
                logger.warning(
                    "the server of model %s refused %s: sent without",
                    self.config.model,
                    sorted(refused),
                )
                self.refused.update(refused)
                _apply_refused(params, refused)

    async def _send(self, params: dict[str, Any], timeout: float, *, stream: bool) -> Any:
        return await self._client().post(
            "/chat/completions",
            body=params,
            cast_to=object,
            options={"timeout": timeout},
            stream=stream,
            stream_cls=openai.AsyncStream[object],
        )

    async def complete(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> CompletionResult:
        return await self._complete(request, self._params(request), cancel, time.perf_counter())

    async def _complete(
        self,
        request: ModelRequest,
        params: dict[str, Any],
        cancel: asyncio.Event | None,
        started: float,
    ) -> CompletionResult:
        deadline = self._deadline(request.timeout)
        try:
            # The SDK timeout bounds each network phase; this bounds the whole request,
            # so a server trickling bytes cannot hold a non-streamed call forever.
            async with asyncio.timeout(deadline):
                response = await await_or_cancel(self._post(params, deadline, stream=False), cancel)
            choice = _first_choice(response)
            message = _object(choice.get("message"), "message")
            content = strip_reasoning(_text(message.get("content"), "message content"))
            raw_calls = [_call_parts(call) for call in _list(message.get("tool_calls"))]
            finish_reason = _text(choice.get("finish_reason"), "finish_reason") or "stop"
            usage = _usage(response.get("usage"))
        except TimeoutError as exc:
            raise ModelTimeout(f"no complete response within {deadline:g}s") from exc
        except (ModelError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise map_openai_error(exc) from exc
        return _result(
            self.config.model, request.messages, content, raw_calls, finish_reason, usage, started
        )

    async def stream(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        started = time.perf_counter()
        params = self._params(request)
        params["stream"] = True
        params["stream_options"] = {"include_usage": True}
        parts: list[str] = []
        calls: dict[int, list[str]] = {}  # index -> [id, name, arguments]
        finish_reason: str | None = None
        usage: Usage | None = None
        stream: Any = None
        scratchpad = StreamFilter()
        seen = False  # any chunk at all
        try:
            async with Interruptible(cancel) as guard:
                deadline = self._deadline(request.timeout)
                stream = await guard.wait(self._post(params, deadline, stream=True))
                chunks = aiter(stream)
                while True:
                    try:
                        chunk = await guard.wait(anext(chunks))
                    except StopAsyncIteration:
                        break
                    seen = True
                    chunk = _object(chunk, "stream chunk")
                    if chunk.get("usage") is not None:
                        usage = _usage(chunk["usage"])
                    for choice in _list(chunk.get("choices")):
                        choice = _object(choice, "choice")
                        if choice.get("index", 0) != 0:
                            continue
                        delta = choice.get("delta")
                        if delta is not None:
                            delta = _object(delta, "delta")
                            for fragment in _list(delta.get("tool_calls")):
                                _merge_tool_fragment(calls, _object(fragment, "tool call"))
                            text = scratchpad.feed(_text(delta.get("content"), "delta content"))
                            if text:
                                parts.append(text)
                                yield TextDelta(text)
                        if choice.get("finish_reason"):
                            finish_reason = _text(choice["finish_reason"], "finish_reason")
        except (ModelError, asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            raise map_openai_error(exc) from exc
        finally:
            if stream is not None:
                await stream.close()
        if finish_reason is None and not seen:
            # An empty stream: llama.cpp's Python server answers an error it meets before
            # the first token (a chat template refusing the order of the roles, a prompt
            # over the window) with 200 and no events. Asked once without streaming, the
            # server says what it is (and a refused order is reshaped, as for any request);
            # when it answers, the answer comes as one piece.
            unstreamed = {k: v for k, v in params.items() if k not in ("stream", "stream_options")}
            result = await self._complete(request, unstreamed, cancel, started)
            if result.content:
                yield TextDelta(result.content)
            yield StreamDone(result)
            return
        if finish_reason is None:
            if not request.tolerate_missing_stream_metadata:
                raise ModelBadResponse("stream ended before a finish_reason")
            finish_reason = "stop"
        held = scratchpad.finish()
        if held:
            parts.append(held)
            yield TextDelta(held)
        raw_calls = [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]
        content = "".join(parts)
        yield StreamDone(
            _result(
                self.config.model,
                request.messages,
                content,
                raw_calls,
                finish_reason,
                usage,
                started,
            )
        )


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ModelBadResponse(f"{what} is not a JSON object")
    return value


def _list(value: Any) -> list[Any]:
    """A JSON array, with null and absent read as empty."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ModelBadResponse("expected a JSON array")
    return value


def _text(value: Any, what: str) -> str:
    """A JSON string, with null and absent read as empty."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise ModelBadResponse(f"{what} is not a string")
    return value


def _first_choice(response: Any) -> dict[str, Any]:
    choices = _list(_object(response, "response").get("choices"))
    if not choices:
        raise ModelBadResponse("response has no choices")
    return _object(choices[0], "choice")


def _call_parts(call: Any) -> tuple[str, str, str]:
    """(id, name, arguments) of one complete tool call. Arguments are a JSON string by the
    protocol; a server that sends them as an object already (some do) is taken at its word."""
    call = _object(call, "tool call")
    function = _object(call.get("function") or {}, "tool call function")
    arguments = function.get("arguments")
    if isinstance(arguments, dict):
        arguments = json.dumps(arguments, ensure_ascii=False)
    return (
        _text(call.get("id"), "tool call id"),
        _text(function.get("name"), "tool call name"),
        _text(arguments, "tool call arguments"),
    )


def _merge_tool_fragment(calls: dict[int, list[str]], fragment: dict[str, Any]) -> None:
    """Assemble streamed tool calls: the id and name come once, arguments in pieces.

    Servers differ: some repeat the id and the whole name in every piece (llama.cpp's
    Python server), some leave out ``index`` (then a piece with a known id, or without an
    id, continues the call before it)."""
    call_id, name, arguments = _call_parts(fragment)
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


def _usage(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    prompt = raw.get("prompt_tokens")
    completion = raw.get("completion_tokens")
    if not isinstance(prompt, int) or not isinstance(completion, int):
        return None
    total = raw.get("total_tokens")
    total = total if isinstance(total, int) and total > 0 else prompt + completion
    return Usage(prompt, completion, total)


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
    if status < 500 and (code in _CONTEXT_CODES or _CONTEXT_WORDS.search(message)):
        return ModelContextExceeded(message, status=status)
    if status >= 500 and not _VALIDATION_WORDS.search(message):
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
