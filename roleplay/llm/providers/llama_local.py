"""The bundled local model, served by a supervised process of its own (``local_server``).

Native model code never runs in the web process, a worker or the test run: this provider
talks to the model process through the OpenAI-compatible provider, and finds (or starts) it
through ``local_supervisor``. When that process is gone — crashed, killed, restarting — a
call fails with ``model_unavailable`` (retryable before the first delta), and the next call
waits for the restarted process to answer before sending.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from typing import Any

from ..bundled import BUNDLED_MODEL_NAME, local_model_available, model_cache_dir
from ..errors import ModelConnectionError, ModelServerError, ModelUnavailable
from ..local_server import default_threads
from ..local_supervisor import LocalModelService, ModelSpec
from ..types import CompletionResult, ModelRequest, ProviderConfig, StreamEvent
from .openai_compat import OpenAICompatProvider

READY_TIMEOUT_S = 120.0  # a first start assembles and loads the model
READY_POLL_S = 0.1

__all__ = ["LlamaLocalProvider", "local_model_available", "model_cache_dir", "spec_for"]


def spec_for(config: ProviderConfig) -> ModelSpec:
    """What the model process loads for ``config``: its ``model_path`` extra, a model name
    that is a ``.gguf`` path, or the bundled model; with the config's prompt cache (its
    ``prompt_cache_mb`` of memory, none at all when ``prompt_cache`` is ``off``)."""
    explicit = config.extra.get("model_path")
    path = str(explicit) if explicit else (config.model if config.model.endswith(".gguf") else "")
    threads = config.extra.get("n_threads")
    return ModelSpec(
        path=path,
        ctx=config.context_limit,
        threads=int(threads) if isinstance(threads, int) and threads > 0 else default_threads(),
        name=config.model or BUNDLED_MODEL_NAME,
        cache_mb=config.prompt_cache_mb,
        caching=config.prompt_cache != "off",
    )


class LlamaLocalProvider(OpenAICompatProvider):
    """A local GGUF model behind its supervised OpenAI-compatible process."""

    def __init__(self, config: ProviderConfig) -> None:
        super().__init__(config)
        self.service = LocalModelService(spec_for(config))
        self._url: str | None = None
        self._ready = False

    @property
    def base_url(self) -> str:
        return self._url or ""

    async def _ensure_ready(self) -> None:
        """Find the model process (starting it on first use) and wait until it answers."""
        if self._ready:
            return
        url = await asyncio.to_thread(self.service.endpoint)
        if url != self._url:
            await self.aclose()  # clients of another port
            self._url = url
        deadline = time.monotonic() + READY_TIMEOUT_S
        while not await asyncio.to_thread(self.service.healthy):
            if time.monotonic() > deadline:
                raise ModelUnavailable(f"the local model did not answer in {READY_TIMEOUT_S:g}s")
            await asyncio.sleep(READY_POLL_S)
        self._ready = True

    def _lost(self, exc: Exception) -> ModelUnavailable:
        self._ready = False
        return ModelUnavailable(f"the local model process is unavailable: {exc}")

    def _messages(self, request: ModelRequest) -> list[dict[str, Any]]:
        """The local process extends the last message itself (``continue_final_message`` in
        the body, below): a base model simply goes on writing it."""
        return request.messages

    def _params(self, request: ModelRequest) -> dict[str, Any]:
        params = super()._params(request)
        if request.continue_final_message:
            params["continue_final_message"] = True
        return params

    async def complete(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> CompletionResult:
        await self._ensure_ready()
        try:
            return await super().complete(request, cancel)
        except (ModelConnectionError, ModelServerError) as exc:
            raise self._lost(exc) from exc

    async def stream(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> AsyncGenerator[StreamEvent, None]:
        await self._ensure_ready()
        try:
            async for event in super().stream(request, cancel):
                yield event
        except (ModelConnectionError, ModelServerError) as exc:
            raise self._lost(exc) from exc
