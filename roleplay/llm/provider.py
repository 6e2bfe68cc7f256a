"""The provider interface and the one place where retry, cancellation and recording live.

A ``Provider`` makes exactly one attempt at a call and translates its transport's failures
into ``errors.ModelError``. ``ModelClient`` wraps any provider with the gateway's policy:
up to two retries on transient failures with jittered exponential backoff (honouring
``Retry-After`` up to a cap), a stream retried only before its first text delta, prompt
cancellation through an ``asyncio.Event``, and exactly one ``CallRecord`` per call handed to
an injected recorder, so the Django side can store a ``ModelCall`` row without the gateway
knowing about Django.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
import time
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import replace
from typing import Any, TypeVar

from console.tokens import count_messages, count_tokens

from .errors import ModelBadResponse, ModelCancelled, ModelError
from .types import (
    CallRecord,
    CompletionResult,
    ModelRequest,
    Outcome,
    ProviderConfig,
    StreamDone,
    StreamEvent,
    Usage,
)

logger = logging.getLogger("roleplay.llm")

T = TypeVar("T")
Recorder = Callable[[CallRecord], object]
"""Receives each CallRecord; may be a plain function or return an awaitable."""
Sleep = Callable[[float], Awaitable[object]]


class Provider(ABC):
    """One model behind one transport; makes a single attempt per call.

    Implementations raise ``ModelError`` subclasses only, honour ``cancel`` promptly by
    aborting the in-flight work and raising ``ModelCancelled``, and report one attempt.
    """

    def __init__(self, config: ProviderConfig) -> None:
        self.config = config

    @property
    def model(self) -> str:
        return self.config.model

    @abstractmethod
    async def complete(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> CompletionResult:
        """Run the whole completion and return it."""

    @abstractmethod
    def stream(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        """Yield ``TextDelta`` pieces as they arrive, then one ``StreamDone``."""

    async def models(self) -> list[str]:
        """The model names this provider's server offers (default: its own model)."""
        return [self.model]

    async def aclose(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release connections or models held by this provider (default: nothing)."""


def tool_functions(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """The ``{"name", "description", "parameters"}`` part of each tool definition.

    Accepts the OpenAI shape (``{"type": "function", "function": {...}}``) and the bare
    function shape, so callers may write either.
    """
    functions: list[dict[str, Any]] = []
    for tool in tools or []:
        function = tool.get("function") if tool.get("type") == "function" else tool
        if not isinstance(function, dict) or not function.get("name"):
            raise ValueError(f"tool definition without a function name: {tool!r}")
        functions.append(function)
    return functions


def openai_tools(tools: list[dict[str, Any]] | None) -> list[dict[str, Any]]:
    """Tool definitions in the OpenAI wire shape."""
    return [{"type": "function", "function": function} for function in tool_functions(tools)]


# --- cancellation helpers -------------------------------------------------------------


class Interruptible:
    """Lets ``cancel`` interrupt the network waits of one task, at one task per call.

    ``async with Interruptible(cancel) as guard:`` then ``await guard.wait(aw)`` for every
    wait that may block (a request, the next chunk of a stream). When ``cancel`` fires during
    such a wait the task is cancelled right there, which closes the HTTP connection so the
    server learns nobody is listening, and ``ModelCancelled`` is raised instead. Between
    waits (say while a stream's consumer handles a delta) nothing is interrupted; the next
    ``wait`` raises ``ModelCancelled`` before it starts.
    """

    def __init__(self, cancel: asyncio.Event | None) -> None:
        self.cancel = cancel
        self._task: asyncio.Task[Any] | None = None
        self._waiting = False
        self._fired = False
        self._watcher: asyncio.Future[Any] | None = None

    async def __aenter__(self) -> Interruptible:
        if self.cancel is not None:
            self._task = asyncio.current_task()
            self._watcher = asyncio.ensure_future(self.cancel.wait())
            self._watcher.add_done_callback(self._on_cancel)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        if self._watcher is not None:
            self._watcher.remove_done_callback(self._on_cancel)
            self._watcher.cancel()

    def _on_cancel(self, watcher: asyncio.Future[Any]) -> None:
        if self._waiting and not watcher.cancelled() and self._task is not None:
            self._fired = True
            self._task.cancel()

    def check(self) -> None:
        """Raise ModelCancelled now if ``cancel`` is set (before building what to wait on)."""
        if self.cancel is not None and self.cancel.is_set():
            raise ModelCancelled("cancelled by caller")

    async def wait(self, aw: Awaitable[T]) -> T:
        try:
            self.check()
        except ModelCancelled:
            if inspect.iscoroutine(aw):
                aw.close()
            raise
        self._waiting = True
        try:
            return await aw
        except asyncio.CancelledError:
            if not self._fired or self._task is None:
                raise
            self._fired = False
            if self._task.uncancel():  # someone else cancelled the task too: theirs wins
                raise
            raise ModelCancelled("cancelled by caller") from None
        finally:
            self._waiting = False


async def await_or_cancel(aw: Awaitable[T], cancel: asyncio.Event | None) -> T:
    """Await ``aw`` unless ``cancel`` fires first; then abort it and raise ModelCancelled."""
    async with Interruptible(cancel) as guard:
        return await guard.wait(aw)


# --- the gateway wrapper --------------------------------------------------------------


class ModelClient:
    """A provider plus the gateway's retry, cancellation and recording policy.

    It takes the same ``ModelRequest`` as a provider (plus ``purpose``), so capabilities
    can take either. ``max_attempts`` counts the original call.
    """

    def __init__(
        self,
        provider: Provider,
        *,
        recorder: Recorder | None = None,
        purpose: str = "",
        max_attempts: int = 3,
        retry_base_delay: float = 0.25,
        retry_max_delay: float = 8.0,
        retry_after_cap: float = 30.0,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
    ) -> None:
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.provider = provider
        self.recorder = recorder
        self.purpose = purpose
        self.max_attempts = max_attempts
        self.retry_base_delay = retry_base_delay
        self.retry_max_delay = retry_max_delay
        self.retry_after_cap = retry_after_cap
        self._sleep = sleep
        self._rng = rng or random.Random()

    @property
    def model(self) -> str:
        return self.provider.model

    def backoff_delay(self, attempt: int, error: ModelError) -> float:
        """Seconds to wait after failed attempt number ``attempt`` (1-based).

        Exponential with "equal jitter" (half fixed, half random) so that many clients
        failing together do not retry in lockstep; a server's ``Retry-After`` raises the
        wait, but never beyond ``retry_after_cap``.
        """
        ceiling = min(self.retry_max_delay, self.retry_base_delay * (2 ** (attempt - 1)))
        delay = ceiling / 2 + self._rng.uniform(0, ceiling / 2)
        if error.retry_after is not None:
            delay = max(delay, min(max(error.retry_after, 0.0), self.retry_after_cap))
        return delay

    async def complete(
        self,
        request: ModelRequest,
        *,
        purpose: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> CompletionResult:
        """Complete with retries; records one CallRecord whatever happens."""

        async def attempt() -> AsyncGenerator[StreamEvent, None]:
            yield StreamDone(await self.provider.complete(request, cancel))

        async with aclosing(self._attempts(request, attempt, purpose, cancel)) as events:
            async for event in events:
                if isinstance(event, StreamDone):
                    return event.result
        raise ModelBadResponse("completion ended without a result")  # unreachable

    def stream(
        self,
        request: ModelRequest,
        *,
        purpose: str | None = None,
        cancel: asyncio.Event | None = None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """Stream with retries before the first delta only; records one CallRecord.

        Once text has been yielded the caller may have shown it to someone, so a later
        failure propagates as is and the partial text is the caller's to keep or discard.
        """
        return self._attempts(
            request, lambda: self.provider.stream(request, cancel), purpose, cancel
        )

    async def _attempts(
        self,
        request: ModelRequest,
        attempt: Callable[[], AsyncGenerator[StreamEvent, None]],
        purpose: str | None,
        cancel: asyncio.Event | None,
    ) -> AsyncGenerator[StreamEvent, None]:
        """The one retry loop: run ``attempt`` until it ends with a result, retrying a
        transient failure only while nothing has been yielded; one CallRecord in the end."""
        call = _Call(self, purpose)
        partial: list[str] = []
        try:
            while True:
                call.attempts += 1
                try:
                    if cancel is not None and cancel.is_set():
                        raise ModelCancelled("cancelled by caller")
                    async with aclosing(attempt()) as events:
                        async for event in events:
                            if isinstance(event, StreamDone):
                                result = replace(
                                    event.result,
                                    attempts=call.attempts,
                                    latency_ms=call.elapsed_ms(),
                                )
                                await call.record("ok", None, result.usage)
                                yield StreamDone(result)
                                return
                            if event.text:
                                partial.append(event.text)
                            yield event
                    raise ModelBadResponse("stream ended without a final result")
                except ModelError as exc:
                    if partial or not self._retryable(exc, call.attempts):
                        raise
                    await self._pause(call.attempts, exc, cancel)
        except BaseException as exc:
            usage = Usage()
            if partial:
                usage = Usage.of(count_messages(request.messages), count_tokens("".join(partial)))
            await call.record_failure(exc, usage)
            raise

    def _retryable(self, exc: ModelError, attempts: int) -> bool:
        if not exc.retryable or attempts >= self.max_attempts:
            return False
        logger.warning(
            "model call attempt %d failed with %s (%s); retrying",
            attempts,
            exc.code,
            exc.message,
            extra={"model": self.model, "error_code": exc.code},
        )
        return True

    async def _pause(self, attempts: int, exc: ModelError, cancel: asyncio.Event | None) -> None:
        await await_or_cancel(self._sleep(self.backoff_delay(attempts, exc)), cancel)


class _Call:
    """Book-keeping of one gateway call, guaranteeing a single recorder invocation."""

    def __init__(self, client: ModelClient, purpose: str | None) -> None:
        self.client = client
        self.purpose = client.purpose if purpose is None else purpose
        self.started = time.perf_counter()
        self.attempts = 0
        self.recorded = False

    def elapsed_ms(self) -> float:
        return (time.perf_counter() - self.started) * 1000.0

    async def record(
        self, outcome: Outcome, error: ModelError | None, usage: Usage, message: str | None = None
    ) -> None:
        if self.recorded:
            return
        self.recorded = True
        recorder = self.client.recorder
        if recorder is None:
            return
        record = CallRecord(
            purpose=self.purpose,
            model=self.client.model,
            outcome=outcome,
            error_code=error.code if error is not None else None,
            usage=usage,
            latency_ms=self.elapsed_ms(),
            attempts=max(self.attempts, 1),
            error_message=message or (error.message if error is not None else None),
        )
        try:
            outcome_value = recorder(record)
            if inspect.isawaitable(outcome_value):
                await outcome_value
        except Exception:  # a broken recorder must not turn a good reply into an error
            logger.exception("model call recorder failed")

    async def record_failure(self, exc: BaseException, usage: Usage) -> None:
        if isinstance(exc, ModelCancelled):
            await self.record("cancelled", exc, usage)
        elif isinstance(exc, ModelError):
            await self.record("error", exc, usage)
        elif isinstance(exc, asyncio.CancelledError | GeneratorExit):
            await self.record("cancelled", ModelCancelled("task cancelled"), usage)
        else:
            await self.record("error", ModelError("model_error", repr(exc)), usage)
