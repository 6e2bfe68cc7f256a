"""The planner's and the executor's own cost, for ``manage.py bench_workflow`` (pure, so a
fresh process can time its very first call without Django).

The graph: six nodes, serial and parallel mixed, as a turn's workflow might be::

    rule (serial) → lore, memory, state (parallel; memory after rule) → scene (serial,
    after lore and memory) → model (serial, after scene)

Its capabilities do no work of their own: half await ``asyncio.sleep(0)`` (a real await,
so the loop switches tasks as with a network call), half return at once. One sample is
``plan`` + ``execute`` of the parsed spec; ``capability_ms`` is the union of the intervals
in which at least one capability call was in progress, and ``overhead_ms`` is the total
minus that: what the planner and the executor add to a turn beyond the capabilities' time.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from .contracts import CapabilityCall, CapabilityValue
from .executor import execute
from .planner import plan
from .spec import WorkflowSpec, parse_workflow

PROFILE = "bench-workflow"
QUERY = "I hand over the copper key."
GOAL_P50_MS = 5.0

WORKFLOW: dict[str, Any] = {
    "visibleCapabilities": ["read_rule", "search_lore", "recall", "read_state", "prepare", "call"],
    "executionGraph": {
        "nodes": [
            {"id": "rule", "capability": "read_rule", "input": {"location": "gate"}},
            {"id": "lore", "capability": "search_lore", "parallel": True, "required": False},
            {"id": "memory", "capability": "recall", "dependsOn": ["rule"], "parallel": True},
            {"id": "state", "capability": "read_state", "parallel": True, "projectTo": "none"},
            {"id": "scene", "capability": "prepare", "dependsOn": ["lore", "memory"]},
            {"id": "model", "capability": "call", "dependsOn": ["scene"]},
        ]
    },
}


class _Timed:
    """A capability that records when it was entered and left, and does nothing else."""

    input_schema: Mapping[str, Any] = MappingProxyType({})

    def __init__(self, name: str, spans: list[tuple[float, float]], awaits: bool) -> None:
        self.name = name
        self.spans = spans
        self.awaits = awaits

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        entered = time.perf_counter()
        if self.awaits:
            await asyncio.sleep(0)
        value = CapabilityValue(value={"node": call.node_id}, prompt_content=f"{call.node_id}.")
        self.spans.append((entered, time.perf_counter()))
        return value


def capabilities(spans: list[tuple[float, float]]) -> dict[str, _Timed]:
    names = WORKFLOW["visibleCapabilities"]
    return {name: _Timed(name, spans, awaits=i % 2 == 0) for i, name in enumerate(names)}


async def sample(spec: WorkflowSpec) -> dict[str, float]:
    """One plan + execute of ``spec``: total, capability and overhead milliseconds."""
    spans: list[tuple[float, float]] = []
    caps = capabilities(spans)
    started = time.perf_counter()
    made = plan(spec, profile_id=PROFILE, scenario_id=PROFILE, registered=caps.keys())
    planned = time.perf_counter()
    result = await execute(made, caps, query=QUERY, cancel=asyncio.Event())
    total = time.perf_counter() - started
    if result.status != "succeeded":
        raise RuntimeError(f"the bench workflow failed: {result.error}")
    busy = _union(spans)
    return {
        "total_ms": total * 1000.0,
        "plan_ms": (planned - started) * 1000.0,
        "capability_ms": busy * 1000.0,
        "overhead_ms": (total - busy) * 1000.0,
    }


async def samples(runs: int) -> list[dict[str, float]]:
    """``runs`` samples, each with a freshly parsed spec (as a turn reads its scenario)."""
    out = []
    for _ in range(runs):
        out.append(await sample(parse_workflow(WORKFLOW)))
    return out


def parse_ms(runs: int) -> list[float]:
    """How long reading the workflow JSON takes (done on save, and per turn if re-read)."""
    out = []
    for _ in range(runs):
        started = time.perf_counter()
        parse_workflow(WORKFLOW)
        out.append((time.perf_counter() - started) * 1000.0)
    return out


def cold_run() -> dict[str, float]:
    """The first plan + execute of this process (call it in a fresh one)."""
    return asyncio.run(sample(parse_workflow(WORKFLOW)))


def _union(spans: list[tuple[float, float]]) -> float:
    total = 0.0
    end = float("-inf")
    for start, stop in sorted(spans):
        if start > end:
            total += stop - start
            end = stop
        elif stop > end:
            total += stop - end
            end = stop
    return total
