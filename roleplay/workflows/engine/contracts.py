"""The shapes a workflow is made of, shared by the planner, the executor, the prompt
compiler and every capability (seed ``002`` lines 1328–1503).

A capability is a small object with a ``name``, a JSON ``input_schema`` for its node
``input`` and an async ``execute``; the executor hands it a :class:`CapabilityCall` and a
cancel event and gets a :class:`CapabilityValue` back, or an exception (a
:class:`CapabilityError` carries a stable code). ``prompt_content`` is the only part of a
result that can reach the Actor, and only through the compiler, into the node's
``project_to`` region.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from console.failures import BadGateway

ProjectTo = Literal["foundation_context", "turn_context", "none"]
PROJECT_TO: tuple[str, ...] = ("foundation_context", "turn_context", "none")
NodeStatus = Literal["succeeded", "failed", "blocked", "not_run"]


@dataclass(frozen=True)
class Node:
    """One declared step: ``capability`` run with ``input`` once ``depends_on`` completed.
    ``required`` (default True): its failure fails the workflow and blocks its dependents;
    optional, its dependents still run and see it missing. ``parallel``: may run beside
    other ready parallel nodes."""

    id: str
    capability: str
    input: Mapping[str, Any] = field(default_factory=dict)
    depends_on: tuple[str, ...] = ()
    required: bool = True
    parallel: bool = False
    project_to: ProjectTo = "turn_context"


@dataclass(frozen=True)
class Plan:
    """The planner's answer: the nodes in dependency order (ties keep declaration order)."""

    profile_id: str
    nodes: tuple[Node, ...]


@dataclass(frozen=True)
class CapabilityValue:
    """What a capability returns: a JSON ``value``, and optionally the text it offers the
    Actor (``prompt_content``) and ``artifacts`` (JSON, never sent to a model)."""

    value: Any
    prompt_content: str | None = None
    artifacts: tuple[Any, ...] = ()


@dataclass(frozen=True)
class NodeOutput:
    node_id: str
    capability: str
    result: CapabilityValue


@dataclass(frozen=True)
class CapabilityCall:
    """A node's call: its ``input``, the turn's ``query`` (the player's text) and the
    outputs of the nodes completed so far, by node id."""

    node_id: str
    input: Mapping[str, Any]
    query: str
    dependencies: Mapping[str, NodeOutput]


class CapabilityError(BadGateway):
    """A capability's failure with a stable code (``bad_input``, ``timeout``,
    ``upstream_error``, ``forbidden_url`` …): ``CapabilityError(code, message)``."""


class Capability(Protocol):
    name: str
    input_schema: Mapping[str, Any]

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue: ...


@dataclass
class NodeTrace:
    """One node's run: times in ms from the workflow's start, status, output size in bytes
    (its JSON), the error's code and message when it failed or was blocked."""

    node_id: str
    capability: str
    status: NodeStatus
    started_ms: float | None = None
    ended_ms: float | None = None
    output_bytes: int = 0
    error: dict[str, str] | None = None


@dataclass
class WorkflowResult:
    status: Literal["succeeded", "failed"]
    outputs: dict[str, NodeOutput]
    traces: list[NodeTrace]
    error: dict[str, str] | None = None
