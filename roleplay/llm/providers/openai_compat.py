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
import logging
import ssl
import time
import weakref
from collections.abc import AsyncGenerator
from functools import lru_cache
from typing import Any

import httpx2
import openai

from ..errors import (
    ModelBadResponse,
    ModelError,
    ModelTimeout,
)
from ..provider import Interruptible, Provider, await_or_cancel, openai_tools
from ..reasoning import StreamFilter, joined, split_reasoning
from ..roles import AS_SENT, refusal_level, reshape
from ..types import (
    CompletionResult,
    ModelRequest,
    ProviderConfig,
    StreamDone,
    StreamEvent,
    TextDelta,
    Usage,
)
from .openai_answers import (
    call_parts,
    completion_result,
    first_choice,
    json_list,
    json_object,
    json_text,
    merge_tool_fragment,
    read_usage,
)
from .openai_errors import apply_refused, map_openai_error, refused_params

logger = logging.getLogger(__name__)

POOL_SHARDS = 8
LIST_TIMEOUT_S = 10.0  # GET /models, for the console's config test
MAX_LISTED = 200
CONTINUE_NUDGE = (
    "Continue your last reply from exactly where it stops. Do not repeat any of it; write "
    "only what comes next, with capitalization and punctuation that join on seamlessly."
)


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
        if config.prompt_cache != "auto":  # llama.cpp server's switch, asked for explicitly
            params.setdefault("cache_prompt", config.prompt_cache == "on")
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
        apply_refused(params, self.refused)
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
                apply_refused(params, refused)

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
            choice = first_choice(response)
            message = json_object(choice.get("message"), "message")
            apart = _reasoning_apart(message)
            reasoning, content = split_reasoning(json_text(message.get("content"), "content"))
            raw_calls = [call_parts(call) for call in json_list(message.get("tool_calls"))]
            finish_reason = json_text(choice.get("finish_reason"), "finish_reason") or "stop"
            usage = read_usage(response.get("usage"))
        except TimeoutError as exc:
            raise ModelTimeout(f"no complete response within {deadline:g}s") from exc
        except (ModelError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise map_openai_error(exc) from exc
        return completion_result(
            self.config.model, request.messages, content, raw_calls, finish_reason, usage, started,
            reasoning=joined(apart, reasoning),
        )  # fmt: skip

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
        apart: list[str] = []  # reasoning the server sends apart from the content
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
                    chunk = json_object(chunk, "stream chunk")
                    if chunk.get("usage") is not None:
                        usage = read_usage(chunk["usage"])
                    for choice in json_list(chunk.get("choices")):
                        choice = json_object(choice, "choice")
                        if choice.get("index", 0) != 0:
                            continue
                        delta = choice.get("delta")
                        if delta is not None:
                            delta = json_object(delta, "delta")
                            for fragment in json_list(delta.get("tool_calls")):
                                merge_tool_fragment(calls, json_object(fragment, "tool call"))
                            if "reasoning_content" in delta or "reasoning" in delta:
                                apart.append(_reasoning_apart(delta))
                            text = scratchpad.feed(json_text(delta.get("content"), "delta content"))
                            if text:
                                parts.append(text)
                                yield TextDelta(text)
                        if choice.get("finish_reason"):
                            finish_reason = json_text(choice["finish_reason"], "finish_reason")
        except ModelError as exc:
            exc.with_reasoning(joined("".join(apart), scratchpad.so_far))
            raise
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            mapped = map_openai_error(exc)
            raise mapped.with_reasoning(joined("".join(apart), scratchpad.so_far)) from exc
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
                reasoning = joined("".join(apart), scratchpad.so_far)
                raise ModelBadResponse("stream ended before a finish_reason").with_reasoning(
                    reasoning
                )
            finish_reason = "stop"
        held = scratchpad.finish()
        if held:
            parts.append(held)
            yield TextDelta(held)
        raw_calls = [(c[0], c[1], c[2]) for _, c in sorted(calls.items())]
        content = "".join(parts)
        yield StreamDone(
            completion_result(
                self.config.model,
                request.messages,
                content,
                raw_calls,
                finish_reason,
                usage,
                started,
                reasoning=joined("".join(apart), scratchpad.reasoning),
            )
        )


def _reasoning_apart(message: dict[str, Any]) -> str:
    """The reasoning a server parsed out of the content and sent beside it: llama.cpp's
    ``--reasoning-format``, vLLM and DeepSeek name it ``reasoning_content``, others
    ``reasoning``."""
    for key in ("reasoning_content", "reasoning"):
        text = message.get(key)
        if isinstance(text, str) and text:
            return text
    return ""
