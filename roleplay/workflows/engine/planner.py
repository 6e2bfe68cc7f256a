"""The static planner: is this graph runnable here, and in which order (seed 002 line 1410,
``StaticPlanner.plan``).

Run on save and again before each run (a capability may have been unregistered since). The
checks, in this order, each naming the first node (in declaration order) that breaks it:
the profile is the scenario's (``profile_mismatch``); node ids are unique
(``duplicate_node``); each capability is visible (``invisible_capability``) and registered
(``unregistered_capability``); each dependency names a node (``missing_dependency``); no node
depends on itself, directly or around a cycle (``dependency_cycle``, naming a node on the
cycle and the cycle itself).

The order: a node comes after all its dependencies; among the nodes that are ready, the one
declared first goes first (Kahn's algorithm over declaration indexes), so the same graph
always gives the same plan, and a graph already in dependency order keeps its order.
"""

from __future__ import annotations

import heapq
from collections.abc import Collection

from . import errors
from .contracts import Node, Plan
from .errors import PlanError
from .spec import WorkflowSpec


def plan(
    spec: WorkflowSpec, *, profile_id: str, scenario_id: str, registered: Collection[str]
) -> Plan:
    """``spec``'s nodes in run order, or the first :class:`PlanError`."""
    found = problems(spec, profile_id=profile_id, scenario_id=scenario_id, registered=registered)
    if found:
        raise found[0]
    return Plan(profile_id=profile_id, nodes=_ordered(spec.nodes))


def problems(
    spec: WorkflowSpec, *, profile_id: str, scenario_id: str, registered: Collection[str]
) -> list[PlanError]:
    """Every reason the graph cannot run (the editor shows them all), the first check's
    first; empty when :func:`plan` would succeed."""
    if str(profile_id) != str(scenario_id):
        message = f"the workflow's profile {profile_id!r} is not scenario {scenario_id!r}"
        return [PlanError(errors.PROFILE_MISMATCH, message)]
    found: list[PlanError] = []
    ids: set[str] = set()
    visible = set(spec.visible_capabilities)
    registered_names = set(registered)
    for node in spec.nodes:
        if node.id in ids:
            found.append(
                PlanError(errors.DUPLICATE_NODE, f"node id {node.id!r} is used twice", node.id)
            )
        ids.add(node.id)
        if node.capability not in visible:
            found.append(
                PlanError(
                    errors.INVISIBLE_CAPABILITY,
                    f"node {node.id!r} uses {node.capability!r}, which is not in "
                    "visibleCapabilities",
                    node.id,
                )
            )
        elif node.capability not in registered_names:
            found.append(
                PlanError(
                    errors.UNREGISTERED_CAPABILITY,
                    f"node {node.id!r} uses {node.capability!r}, which no capability is "
                    "registered as",
                    node.id,
                )
            )
    for node in spec.nodes:
        for dep in node.depends_on:
            if dep not in ids:
                found.append(
                    PlanError(
                        errors.MISSING_DEPENDENCY,
                        f"node {node.id!r} depends on {dep!r}, which is not a node",
                        node.id,
                    )
                )
    if not any(error.code == errors.DUPLICATE_NODE for error in found):
        found.extend(_cycles(spec.nodes, ids))
    order = {code: rank for rank, code in enumerate(errors.PLAN_CODES)}
    return sorted(found, key=lambda error: order[error.code])  # stable: declaration order kept


def _ordered(nodes: tuple[Node, ...]) -> tuple[Node, ...]:
    """Dependencies first; among ready nodes, the earliest declared (the graph is valid)."""
    index = {node.id: i for i, node in enumerate(nodes)}
    waiting = [len(set(node.depends_on)) for node in nodes]
    dependents: list[list[int]] = [[] for _ in nodes]
    for i, node in enumerate(nodes):
        for dep in set(node.depends_on):
            dependents[index[dep]].append(i)
    ready = [i for i, count in enumerate(waiting) if count == 0]
    heapq.heapify(ready)
    out: list[Node] = []
    while ready:
        i = heapq.heappop(ready)
        out.append(nodes[i])
        for j in dependents[i]:
            waiting[j] -= 1
            if waiting[j] == 0:
                heapq.heappush(ready, j)
    return tuple(out)


def _cycles(nodes: tuple[Node, ...], ids: set[str]) -> list[PlanError]:
    """Each node that depends on itself, then the first longer cycle (``a → b → a``: ``a``
    depends on ``b``, which depends on ``a``), named by its earliest-declared node."""
    found = [
        PlanError(errors.DEPENDENCY_CYCLE, f"node {node.id!r} depends on itself", node.id)
        for node in nodes
        if node.id in node.depends_on
    ]
    cycle = _cycle(nodes, ids)
    if cycle is not None:
        shown = " → ".join(cycle)
        found.append(
            PlanError(
                errors.DEPENDENCY_CYCLE, f"node {cycle[0]!r} is on a cycle: {shown}", cycle[0]
            )
        )
    return found


def _cycle(nodes: tuple[Node, ...], ids: set[str]) -> list[str] | None:
    """A cycle of two or more nodes as ``[a, b, …, a]`` starting at its earliest-declared
    node, or None. Only the dependencies that name other nodes count (the missing ones and
    the self-dependencies are reported apart)."""
    deps = {node.id: [d for d in node.depends_on if d in ids and d != node.id] for node in nodes}
    position = {node.id: i for i, node in enumerate(nodes)}
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in (node.id for node in nodes):
        if root in state:
            continue
        path: list[str] = [root]
        stack = [iter(deps[root])]
        state[root] = 1
        while stack:
            step = next(stack[-1], None)
            if step is None:
                state[path.pop()] = 2
                stack.pop()
                continue
            if state.get(step) == 1:
                loop = path[path.index(step) :]
                first = min(range(len(loop)), key=lambda k: position[loop[k]])
                loop = loop[first:] + loop[:first]
                return [*loop, loop[0]]
            if step not in state:
                state[step] = 1
                path.append(step)
                stack.append(iter(deps[step]))
    return None
