"""The Django side of the model gateway: which config applies, and a ModelCall per call.

Providers (``provider.py`` and friends) know nothing of Django; here a ``ModelConfig`` row
becomes a ``ProviderConfig`` (the API key read from the environment variable it names), and
each call's ``CallRecord`` becomes a ``ModelCall`` row.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import aclosing
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings

from roleplay.llm.errors import ModelBadRequest
from roleplay.llm.provider import ModelClient, Provider
from roleplay.llm.providers import build_provider
from roleplay.llm.types import (
    CallRecord,
    CompletionResult,
    ModelRequest,
    ProviderConfig,
    StreamEvent,
)
from roleplay.models import ModelCall, ModelConfig
from roleplay.textgen.configs import text_completion_settings

PROVIDER_CACHE_SIZE = 64

USAGE_HOOKS: list[Callable[[ModelCall, Any], None]] = []
"""Called with each ``ModelCall`` row written (and the gateway's ``player_id``), in the
row's transaction: the players' quotas charge its tokens (``roleplay.quotas.charging``,
registered when the runtime's app is ready)."""


class _ProviderCache:
    """Providers (and their connection pools) by model config, least recently used first.

    Keyed by the config's id, not by its contents: when a config changes (a new base URL, a
    rotated key), its entry no longer matches and is replaced, so the old client is dropped
    rather than kept beside the new one; at most ``PROVIDER_CACHE_SIZE`` are kept.
    """

    def __init__(self, size: int = PROVIDER_CACHE_SIZE) -> None:
        self.size = size
        self._entries: OrderedDict[str, tuple[ProviderConfig, Provider]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: str, pconfig: ProviderConfig) -> Provider:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] != pconfig:
                entry = self._entries[key] = (pconfig, build_provider(pconfig))
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)
            return entry[1]

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


PROVIDERS = _ProviderCache()


def env_default_config() -> ProviderConfig:
    """The LLM_* settings, used when a tenant has no ModelConfig of its own."""
    return ProviderConfig(
        provider=settings.LLM_PROVIDER,
        model=settings.LLM_MODEL,
        base_url=settings.LLM_BASE_URL,
        api_key=os.environ.get(settings.LLM_API_KEY_ENV) if settings.LLM_API_KEY_ENV else None,
        context_limit=settings.LLM_CONTEXT_LIMIT,
        max_output_tokens=settings.LLM_MAX_OUTPUT_TOKENS,
        timeout_ms=settings.LLM_TIMEOUT_MS,
        prompt_cache_mb=settings.LLM_LOCAL_PROMPT_CACHE_MB,
    )


def provider_config(config: ModelConfig | None) -> ProviderConfig:
    if config is None:
        return env_default_config()
    return ProviderConfig(
        provider=config.provider,
        model=config.model,
        base_url=config.base_url,
        api_key=os.environ.get(config.api_key_env) if config.api_key_env else None,
        context_limit=config.context_limit,
        max_output_tokens=config.max_output_tokens,
        temperature=config.temperature,
        top_p=config.top_p,
        timeout_ms=config.timeout_ms,
        extra=dict(config.extra or {}),
        role_order=config.role_order,
        prompt_cache=config.prompt_cache,
        prompt_cache_mb=local_cache_mb(config.extra),
        **text_completion_settings(config),
    )


def local_cache_mb(extra: dict | None) -> int:
    """The bundled model's prompt cache size: the config's ``extra.prompt_cache_mb`` (a
    whole number of MB, 0 for none), else the ``LLM_LOCAL_PROMPT_CACHE_MB`` setting."""
    value = (extra or {}).get("prompt_cache_mb")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    return settings.LLM_LOCAL_PROMPT_CACHE_MB


def resolve_config(tenant, *, conversation=None, character=None) -> ModelConfig | None:
    """The conversation's config, else the character's default, else the tenant's default:
    the one model-config rule (the chat turn's one-statement read in ``turns/reads.py`` is
    pinned to it by tests/fastpaths/test_turn_reads.py). Read with its preset (but not the
    preset's prompts, which ``effective_preset`` reads only when its id and version are not
    loaded yet) unless the caller already has it."""
    rows = ModelConfig.objects.filter(tenant=tenant).select_related("preset")
    rows = rows.defer("preset__prompts")
    for owner in (conversation, character):
        if owner is not None and owner.model_config_id:
            if type(owner).model_config.is_cached(owner):
                return owner.model_config
            return rows.filter(pk=owner.model_config_id).first()
    return rows.filter(is_default=True).first()


async def on_caller_thread(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn`` on the calling sync thread (and so in its transaction), from async code."""
    return await sync_to_async(fn)(*args, **kwargs)


@dataclass
class Gateway:
    """A model client bound to one config, purpose and (optionally) turn; records calls."""

    tenant: object
    config: ModelConfig | None
    purpose: str
    turn_id: object = None
    retry_base_delay: float = 0.25
    # How ModelCall rows are written from async code. The default runs on the caller's own
    # sync thread, so a caller inside a transaction (a console view through async_to_sync)
    # writes in it; a chat turn, which holds none, passes ``console.db.run_db``.
    run_db: Callable[..., Awaitable[Any]] | None = None
    # Given, the calls' rows are not written at once but added here as writes for the
    # caller's own transaction: a chat turn writes its Actor's calls with the reply, one
    # round trip fewer between the last delta and ``turn.completed``.
    writes: list[Callable[[], None]] | None = None
    # Whose quota the calls' tokens count against when they belong to no turn (an
    # auto-reply's suggestions); a turn's calls count against its conversation's player.
    player_id: object = None

    def __post_init__(self) -> None:
        self.pconfig = provider_config(self.config)
        self.records: list[CallRecord] = []
        self.call_ids: list[str] = []  # the ModelCall rows written, in order
        key = str(self.config.pk) if self.config is not None else "env-default"
        self.client = ModelClient(
            PROVIDERS.get(key, self.pconfig),
            recorder=self.records.append,
            purpose=self.purpose,
            retry_base_delay=self.retry_base_delay,
        )

    async def _flush(self) -> None:
        while self.records:
            row = self._row(self.records.pop(0))
            if self.writes is not None:
                self.writes.append(row.save)
                self.writes.extend(partial(hook, row, self.player_id) for hook in USAGE_HOOKS)
                continue
            await (self.run_db or on_caller_thread)(self._save, row)
            self.call_ids.append(str(row.pk))

    def _save(self, row: ModelCall) -> None:
        row.save()
        for hook in USAGE_HOOKS:
            hook(row, self.player_id)

    def _row(self, rec: CallRecord) -> ModelCall:
        return ModelCall(
            tenant=self.tenant,
            config=self.config,
            purpose=rec.purpose,
            model=rec.model,
            input_tokens=rec.usage.input_tokens,
            output_tokens=rec.usage.output_tokens,
            total_tokens=rec.usage.total_tokens,
            cached_tokens=rec.usage.cached_tokens,
            latency_ms=rec.latency_ms,
            attempts=rec.attempts,
            outcome=rec.outcome,
            error_code=rec.error_code,
            turn_id=self.turn_id,
        )

    async def complete(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> CompletionResult:
        try:
            return await self._complete(request, cancel)
        finally:
            await self._flush()

    async def _complete(self, request: ModelRequest, cancel) -> CompletionResult:
        """A server that refuses a JSON-schema ``response_format`` (some answer it with a
        400) is asked again for a JSON object, then with no format at all: the prompts ask
        for JSON and every caller checks the answer."""
        try:
            return await self.client.complete(request, cancel=cancel)
        except ModelBadRequest:
            if (request.response_format or {}).get("type") != "json_schema":
                raise
        try:
            fallback = replace(request, response_format={"type": "json_object"})
            return await self.client.complete(fallback, cancel=cancel)
        except ModelBadRequest:
            return await self.client.complete(replace(request, response_format=None), cancel=cancel)

    async def stream(
        self, request: ModelRequest, cancel: asyncio.Event | None = None
    ) -> AsyncIterator[StreamEvent]:
        try:
            # aclosing: a consumer that stops early closes the stream now, so its record
            # (e.g. "cancelled") exists before we flush.
            async with aclosing(self.client.stream(request, cancel=cancel)) as events:
                async for event in events:
                    yield event
        finally:
            await self._flush()
