"""Reads of model configs: the console's rows with each key's status and prompt-cache hit
rate, and configs by the references a scenario names."""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.db.models import F, Q, Window
from django.db.models.functions import RowNumber

from console.lists import matching
from console.scoping import is_uuid, scoped
from roleplay.models import (
    ModelCall,
    ModelConfig,
)

RECENT_CALLS = 200  # the calls per config the hit rate is taken over, newest first


@dataclass(frozen=True)
class CacheStats:
    """How much of a config's recent prompts its server served from its prompt cache:
    the cached prompt tokens it reported over all prompt tokens of its last
    :data:`RECENT_CALLS` successful calls."""

    calls: int
    prompt_tokens: int
    cached_tokens: int

    @property
    def hit_rate(self) -> float | None:
        """Cached over prompt tokens; None before any prompt token was counted."""
        return self.cached_tokens / self.prompt_tokens if self.prompt_tokens else None

    def as_dict(self) -> dict:
        return {
            "calls": self.calls,
            "prompt_tokens": self.prompt_tokens,
            "cached_tokens": self.cached_tokens,
            "hit_rate": None if self.hit_rate is None else round(self.hit_rate, 4),
        }


NO_CALLS = CacheStats(0, 0, 0)


def cache_stats(tenant, config_ids) -> dict:
    """Config id -> its :class:`CacheStats`, for each of ``config_ids`` (one query)."""
    ids = list(config_ids)
    stats = {pk: NO_CALLS for pk in ids}
    if not ids:
        return stats
    newest_first = Window(
        RowNumber(),
        partition_by=[F("config_id")],
        order_by=[F("created_at").desc(), F("id").desc()],
    )
    recent = (
        ModelCall.objects.filter(tenant=tenant, config_id__in=ids, outcome="ok")
        .annotate(rank=newest_first)
        .filter(rank__lte=RECENT_CALLS)
        .values_list("config_id", "input_tokens", "cached_tokens")
    )
    totals: dict = {}
    for pk, prompt, cached in recent:
        calls, prompts, hits = totals.get(pk, (0, 0, 0))
        totals[pk] = (calls + 1, prompts + prompt, hits + min(cached, prompt))
    for pk, (calls, prompts, hits) in totals.items():
        stats[pk] = CacheStats(calls, prompts, hits)
    return stats


@dataclass(frozen=True)
class ConfigRow:
    """A config as the list shows it; the key's presence, never its value."""

    config: ModelConfig
    key_status: str  # "not_needed" | "set" | "missing"
    cache: CacheStats = NO_CALLS


def api_key_status(config: ModelConfig) -> str:
    if not config.api_key_env:
        return "not_needed"
    return "set" if os.environ.get(config.api_key_env) else "missing"


MODEL_CONFIG_SEARCH = ("name", "model", "provider", "base_url")


def model_config_rows(tenant, query: str | None = None) -> list[ConfigRow]:
    configs = matching(scoped(ModelConfig, tenant), query, MODEL_CONFIG_SEARCH)
    configs = list(configs.order_by("-is_default", "name"))
    stats = cache_stats(tenant, [c.pk for c in configs])
    return [ConfigRow(c, api_key_status(c), stats[c.pk]) for c in configs]


def model_configs_by_ref(tenant_id, refs) -> dict[str, ModelConfig]:
    """The tenant's model configs named by ``refs`` (ids or names, as a scenario names
    them), each under the ref that named it, with their presets, in one query."""
    wanted = {ref for ref in refs if ref}
    if not wanted:
        return {}
    ids = [ref for ref in wanted if is_uuid(ref)]
    rows = ModelConfig.objects.filter(tenant_id=tenant_id).select_related("preset")
    found: dict[str, ModelConfig] = {}
    for row in rows.filter(Q(pk__in=ids) | Q(name__in=wanted)):
        if str(row.pk) in wanted:
            found[str(row.pk)] = row
        found.setdefault(row.name, row)
    return found
