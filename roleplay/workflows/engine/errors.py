"""The errors a declared workflow raises before it runs: a bad ``workflow`` JSON
(:class:`WorkflowInvalid`, every bad field with its path) and a graph the planner refuses
(:class:`PlanError`, one stable code naming the node).

Both are 422 over HTTP (``console.failures.Invalid``), never a 500: the scenario's
``workflow`` is written by operators, imports and the console's editor, and the editor shows
each message beside the field or node it names. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from console import failures

# The planner's stable codes (seed 002: StaticPlanner's checks).
PROFILE_MISMATCH = "profile_mismatch"  # the profile is not the scenario's
DUPLICATE_NODE = "duplicate_node"  # two nodes share an id
MISSING_DEPENDENCY = "missing_dependency"  # dependsOn names no node of the graph
DEPENDENCY_CYCLE = "dependency_cycle"  # a node depends on itself, directly or around a cycle
INVISIBLE_CAPABILITY = "invisible_capability"  # not in visibleCapabilities
UNREGISTERED_CAPABILITY = "unregistered_capability"  # no code registered under the name

# In the order the planner checks them (its first error is of the earliest code here).
PLAN_CODES = (
    PROFILE_MISMATCH,
    DUPLICATE_NODE,
    INVISIBLE_CAPABILITY,
    UNREGISTERED_CAPABILITY,
    MISSING_DEPENDENCY,
    DEPENDENCY_CYCLE,
)


@dataclass(frozen=True)
class FieldError:
    """One bad field: a stable ``code`` (``wrong_type``, ``too_long``, ``duplicate`` …), a
    message, the dotted ``path`` (``workflow.executionGraph.nodes.2.dependsOn.0``) and the
    node's id when the field belongs to a node whose id could be read."""

    code: str
    message: str
    path: str
    node: str | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message, "path": self.path}
        if self.node is not None:
            data["node"] = self.node
        return data


class WorkflowInvalid(failures.Invalid):
    """The ``workflow`` JSON breaks field rules. ``code`` and ``message`` are the first
    error's; ``details.errors`` lists them all (at most ``spec.MAX_ERRORS``)."""

    def __init__(self, errors: list[FieldError]) -> None:
        first = errors[0]
        super().__init__(
            first.code,
            f"{first.path}: {first.message}",
            {"field": first.path, "errors": [error.to_json() for error in errors]},
        )
        self.errors = tuple(errors)
        self.field = first.path


class PlanError(failures.Invalid):
    """The graph cannot run: ``code`` (one of :data:`PLAN_CODES`), a message, and the
    ``node`` it names (None only for ``profile_mismatch``)."""

    def __init__(self, code: str, message: str, node: str | None = None) -> None:
        super().__init__(code, message, {"node": node} if node is not None else {})
        self.node = node

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.node is not None:
            data["node"] = self.node
        return data
