"""What memory's REST door hands to the runtime: a port (``console.ports``).

Two of memory's doors do work that needs the turn's runtime, which memory never imports:
the prepare/commit memory service (``memory.api.service``) builds a turn's memory text the
way a chat turn does and records the round in its transcript, and ``POST
…/memory/consolidate`` sends consolidation runs that call a model. The runtime registers a
:class:`MemoryRuntime` when its app is ready (``roleplay.owners``); the doors ask
:func:`runtime`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from console.ports import Port


@dataclass(frozen=True)
class MemoryRuntime:
    prepare: Callable[..., dict]
    """(tenant, conversation, *, messages, ids) -> ``{claim_id, memory, turn, …}``."""
    commit: Callable[..., dict]
    """(tenant, claim_id, *, user, assistant) -> ``{committed: true}``."""
    consolidation_settings: Callable[[Any, str], Any]
    """(tenant, character id) -> the consolidation settings in force, None when it is off."""
    request_consolidation: Callable[[Any, Any, list], list[str]]
    """(tenant, player, conversations) -> the ids of the conversations sent a run."""


PORT: Port[MemoryRuntime] = Port("memory.runtime")


def runtime() -> MemoryRuntime:
    return PORT.get()
