"""Reads of memory settings: what is in force for a character, and what is stored."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from django.conf import settings

from memory.engine.config import MemoryConfig, resolve
from memory.models import MemorySettings


def defaults() -> MemoryConfig:
    """The deployment's defaults: seed 004's numbers, the caps from the settings module."""
    return MemoryConfig(
        max_entries=int(getattr(settings, "MEMORY_MAX_ENTRIES", 200)),
        max_handoffs=int(getattr(settings, "MEMORY_MAX_HANDOFFS", 50)),
    )


_once: ContextVar[dict | None] = ContextVar("memory_config_once", default=None)


@contextmanager
def read_once() -> Iterator[None]:
    """Inside the block, :func:`config_for` reads each tenant's and character's settings
    once: a task whose steps each ask (the recall indexing, then the receivers of
    ``messages_indexed``) pays one read, and sees one answer."""
    token = _once.set({})
    try:
        yield
    finally:
        _once.reset(token)


def config_for(tenant, character_id: str = "") -> MemoryConfig:
    """The settings in force for ``character_id`` (the tenant's alone for ""): one read
    (none when :func:`read_once` read them already)."""
    once = _once.get()
    key = (getattr(tenant, "pk", tenant), character_id)
    if once is not None and key in once:
        return once[key]
    config = _read(tenant, character_id)
    if once is not None:
        once[key] = config
    return config


def _read(tenant, character_id: str) -> MemoryConfig:
    wanted = {"", character_id}
    rows = dict(
        MemorySettings.objects.filter(tenant=tenant, character_id__in=wanted).values_list(
            "character_id", "data"
        )
    )
    return resolve(defaults(), rows.get(""), rows.get(character_id) if character_id else None)


def stored(tenant, character_id: str = "") -> MemorySettings | None:
    return MemorySettings.objects.filter(tenant=tenant, character_id=character_id).first()
