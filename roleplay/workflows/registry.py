"""The capabilities a workflow node may name: each registered once, by name, with a factory
that builds it for one run (the run's tenant, conversation, scenario and turn).

A name is only a name: registering is what makes code runnable, and the planner refuses a
node whose capability is not registered here (never a silent skip). Capability modules
register themselves when ``roleplay.workflows.capabilities`` is imported (at app start).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .engine.contracts import Capability


@dataclass(frozen=True)
class RunScope:
    """Whose run: what a capability may read or write, nothing wider."""

    tenant_id: Any
    conversation_id: Any
    scenario_id: Any
    player_id: Any
    turn_id: Any = None
    extra: Mapping[str, Any] = field(default_factory=dict)


Factory = Callable[[RunScope], Capability]


@dataclass(frozen=True)
class Entry:
    name: str
    description: str
    input_schema: Mapping[str, Any]
    factory: Factory


_REGISTRY: dict[str, Entry] = {}


def register(
    name: str, factory: Factory, *, description: str, input_schema: Mapping[str, Any]
) -> None:
    """Register ``name`` (once; registering another factory under a taken name is a bug)."""
    existing = _REGISTRY.get(name)
    if existing is not None and existing.factory is not factory:
        raise ValueError(f"capability {name!r} is registered twice")
    _REGISTRY[name] = Entry(name, description, input_schema, factory)


def registered() -> frozenset[str]:
    return frozenset(_REGISTRY)


def entries() -> list[Entry]:
    """Every registered capability, by name (the console's palette, the API's listing)."""
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def entry(name: str) -> Entry | None:
    return _REGISTRY.get(name)


def build(name: str, scope: RunScope) -> Capability:
    """The capability ``name`` for one run; ``KeyError`` when it is not registered."""
    return _REGISTRY[name].factory(scope)
