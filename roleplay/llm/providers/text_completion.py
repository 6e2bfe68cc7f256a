"""Provider for text-completion servers: the chat prompt rendered to one text through the
config's instruct template or the model's own Jinja chat template
(``roleplay.textgen.engine``) and sent to KoboldCpp, llama.cpp's
``/completion`` or an OpenAI ``/v1/completions`` server (``text_wires``), streamed token by
token.

The template's stop strings go in the request and are cut here too (a server may not honour
all of them): once one is met the stream is closed, which tells the server to stop. Failures
are the chat provider's: a status is mapped by ``openai_errors.status_error``, transport
failures by ``map_openai_error``, so a turn shows the same codes whichever server it used,
and ``ModelClient`` retries and records as for any provider. Tools and response formats are
chat features: a text-completion call answers in text.
"""

from __future__ import annotations

import asyncio
import json
import time
import weakref
from collections.abc import AsyncGenerator

import httpx2

from roleplay.textgen.engine import (
    BUILTIN_TEMPLATES,
    ContextTemplate,
    InstructTemplate,
    StopCutter,
    jinja,
    parse_context,
    parse_instruct,
    render_prompt,
    stop_strings,
)

from ..errors import ModelBadRequest, ModelBadResponse, ModelError, ModelTimeout
from ..provider import Interruptible, Provider, await_or_cancel
from ..reasoning import StreamFilter, split_reasoning
from ..types import (
    CompletionResult,
    ModelRequest,
    ProviderConfig,
    StreamDone,
    StreamEvent,
    TextDelta,
    Usage,
)
from . import text_wires
from .openai_answers import completion_result
from .openai_compat import ssl_context
from .openai_errors import map_openai_error, status_error

DEFAULT_TEMPLATE = "chatml"


def templates(config: ProviderConfig) -> tuple[InstructTemplate, ContextTemplate | None]:
    """The config's instruct template (and context template, when it has one)."""
    body = config.template or {}
    instruct = body.get("instruct")
    context = body.get("context")
    return (
        parse_instruct(instruct) if instruct else BUILTIN_TEMPLATES[DEFAULT_TEMPLATE],
        parse_context(context) if context else None,
    )


class TextCompletionProvider(Provider):
    """One model behind one text-completion server; a single attempt per call."""

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        if config.wire not in ("koboldcpp", "llamacpp", "openai_completions"):
            raise ValueError(f"unknown text-completion wire {config.wire!r}")
        own = (config.template or {}).get("jinja")
        self.jinja = jinja.from_dict(own) if isinstance(own, dict) else None
        self.instruct, self.context = templates(config)
        self._clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, httpx2.AsyncClient]
        self._clients = weakref.WeakKeyDictionary()

    def _client(self) -> httpx2.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._clients.get(loop)
        if client is None:
            headers = (
                {"Authorization": f"Bearer {self.config.api_key}"} if self.config.api_key else {}
            )
            client = self._clients[loop] = httpx2.AsyncClient(
                timeout=self.config.timeout_s, verify=ssl_context(), headers=headers
            )
        return client

    async def aclose(self) -> None:
        client = self._clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()

    def prompt(self, request: ModelRequest) -> tuple[str, list[str]]:
        """The rendered prompt and the stop strings of ``request``."""
        names = {"char_name": request.char_name or "", "user_name": request.user_name or ""}
        if self.jinja is not None:
            return self._jinja_prompt(request, names)
        text = render_prompt(
            request.messages, self.instruct, context=self.context,
            continue_final=request.continue_final_message, **names,
        )  # fmt: skip
        return text, stop_strings(self.instruct, context=self.context, **names)

    def _jinja_prompt(self, request: ModelRequest, names: dict[str, str]) -> tuple[str, list[str]]:
        """The chat rendered by the model's own template (checked when it was saved; a chat
        it still refuses, or one over its limits, is the request's fault)."""
        assert self.jinja is not None
        try:
            text = jinja.render_prompt(
                self.jinja, request.messages, continue_final=request.continue_final_message,
                **names,
            )  # fmt: skip
        except jinja.TemplateError as exc:
            raise ModelBadRequest(exc.message) from exc
        return text, jinja.stop_strings(self.jinja, user_name=names["user_name"])

    def _request(self, request: ModelRequest, *, stream: bool) -> tuple[httpx2.Request, list[str]]:
        prompt, stops = self.prompt(request)
        params = text_wires.body(self.config, request, prompt, stops, stream=stream)
        timeout = self.config.timeout_s if request.timeout is None else request.timeout
        target = text_wires.url(self.config, stream=stream)
        built = self._client().build_request("POST", target, json=params, timeout=timeout)
        return built, stops

    async def _send(self, built: httpx2.Request, *, stream: bool) -> httpx2.Response:
        response = await self._client().send(built, stream=stream)
        if response.status_code >= 400:
            raw = await response.aread()
            await response.aclose()
            raise _status(response, raw)
        return response

    async def complete(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> CompletionResult:
        started = time.perf_counter()
        built, stops = self._request(request, stream=False)
        deadline = self.config.timeout_s if request.timeout is None else request.timeout
        try:
            async with asyncio.timeout(deadline):
                response = await await_or_cancel(self._send(built, stream=False), cancel)
            piece = text_wires.read_whole(self.config.wire, response.json())
        except TimeoutError as exc:
            raise ModelTimeout(f"no complete response within {deadline:g}s") from exc
        except (ModelError, asyncio.CancelledError):
            raise
        except Exception as exc:
            raise map_openai_error(exc) from exc
        cutter = StopCutter(stops)
        text = cutter.feed(piece.text) + cutter.finish()
        finish = "stop" if cutter.stopped else (piece.finish_reason or "stop")
        reasoning, text = split_reasoning(text)
        return self._result(request, text, finish, piece.usage, started, reasoning)

    async def stream(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        started = time.perf_counter()
        built, stops = self._request(request, stream=True)
        cutter, scratchpad = StopCutter(stops), StreamFilter()
        parts: list[str] = []
        finish: str | None = None
        usage: Usage | None = None
        response: httpx2.Response | None = None
        try:
            async with Interruptible(cancel) as guard:
                response = await guard.wait(self._send(built, stream=True))
                lines = aiter(response.aiter_lines())
                while not cutter.stopped:
                    try:
                        line = await guard.wait(anext(lines))
                    except StopAsyncIteration:
                        break
                    data = _sse_data(line)
                    if data is None:
                        continue
                    if data == "[DONE]":
                        break
                    piece = text_wires.read_event(self.config.wire, json.loads(data))
                    usage = piece.usage or usage
                    finish = piece.finish_reason or finish
                    text = scratchpad.feed(cutter.feed(piece.text))
                    if text:
                        parts.append(text)
                        yield TextDelta(text)
        except ModelError as exc:
            exc.with_reasoning(scratchpad.so_far)
            raise
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as exc:
            raise map_openai_error(exc).with_reasoning(scratchpad.so_far) from exc
        finally:
            if response is not None:
                await response.aclose()
        held = scratchpad.feed(cutter.finish()) + scratchpad.finish()
        if held:
            parts.append(held)
            yield TextDelta(held)
        if cutter.stopped:
            finish = "stop"
        elif finish is None and self.config.wire != "koboldcpp":
            # KoboldCpp's stream says nothing at its end; the others end with a reason.
            if not request.tolerate_missing_stream_metadata:
                raise ModelBadResponse("stream ended before a finish reason").with_reasoning(
                    scratchpad.so_far
                )
        result = self._result(
            request, "".join(parts), finish or "stop", usage, started, scratchpad.reasoning
        )
        yield StreamDone(result)

    def _result(
        self,
        request: ModelRequest,
        content: str,
        finish: str,
        usage: Usage | None,
        started: float,
        reasoning: str = "",
    ) -> CompletionResult:
        return completion_result(
            self.config.model, request.messages, content, [], finish, usage, started,
            reasoning=reasoning,
        )  # fmt: skip


def _sse_data(line: str) -> str | None:
    """The payload of an SSE ``data:`` line (None for ``event:``, comments, blank lines)."""
    if not line.startswith("data:"):
        return None
    return line[5:].strip()


def _status(response: httpx2.Response, raw: bytes) -> ModelError:
    """A server's error answer: its message (an OpenAI-shaped ``error``, KoboldCpp's
    ``detail``, llama.cpp's ``error.message``, else the text) under the shared mapping."""
    said, code = raw.decode("utf-8", "replace")[:500], None
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if isinstance(answer, dict):
        error = answer.get("error", answer.get("detail"))
        if isinstance(error, dict):
            said = str(error.get("message") or error.get("msg") or said)
            code = error.get("code") if isinstance(error.get("code"), str) else None
        elif isinstance(error, str):
            said = error
    return status_error(response.status_code, said, response.headers, code)
