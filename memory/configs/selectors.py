"""Reads of memory settings: what is in force for a character, and what is stored."""

from __future__ import annotations

from django.conf import settings

from memory.engine.config import MemoryConfig, resolve
from memory.models import MemorySettings


def defaults() -> MemoryConfig:
    """The deployment's defaults: seed 004's numbers, the caps from the settings module."""
    return MemoryConfig(
        max_entries=int(getattr(settings, "MEMORY_MAX_ENTRIES", 200)),
        max_handoffs=int(getattr(settings, "MEMORY_MAX_HANDOFFS", 50)),
    )


def config_for(tenant, character_id: str = "") -> MemoryConfig:
    """The settings in force for ``character_id`` (the tenant's alone for ""): one read."""
    wanted = {"", character_id}
    rows = dict(
        MemorySettings.objects.filter(tenant=tenant, character_id__in=wanted).values_list(
            "character_id", "data"
        )
    )
    return resolve(defaults(), rows.get(""), rows.get(character_id) if character_id else None)


def stored(tenant, character_id: str = "") -> MemorySettings | None:
    return MemorySettings.objects.filter(tenant=tenant, character_id=character_id).first()
