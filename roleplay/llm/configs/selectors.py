"""Reads of model configs: the console's rows with each key's status, and configs by the
references a scenario names."""

from __future__ import annotations

import os
from dataclasses import dataclass

from django.db.models import (
    Q,
)

from console.lists import matching
from console.scoping import is_uuid, scoped
from roleplay.models import (
    ModelConfig,
)


@dataclass(frozen=True)
class ConfigRow:
    """A config as the list shows it; the key's presence, never its value."""

    config: ModelConfig
    key_status: str  # "not_needed" | "set" | "missing"


def api_key_status(config: ModelConfig) -> str:
    if not config.api_key_env:
        return "not_needed"
    return "set" if os.environ.get(config.api_key_env) else "missing"


MODEL_CONFIG_SEARCH = ("name", "model", "provider", "base_url")


def model_config_rows(tenant, query: str | None = None) -> list[ConfigRow]:
    configs = matching(scoped(ModelConfig, tenant), query, MODEL_CONFIG_SEARCH)
    configs = configs.order_by("-is_default", "name")
    return [ConfigRow(c, api_key_status(c)) for c in configs]


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
