"""The capability ``bounded_runtime``: a workflow node that runs the bounded model-and-tool
runtime (``engine.runtime``) with the node's model config, system or role prompt, tools
(other registered capabilities, built for the same run), limits and state key
(``runtime_node``); the results of its completed dependencies follow its system prompt.

``mode: "slow"`` (the default) awaits the run: the node's value is the run's summary
(status, final, tool results, usage, calls, state outcome, revision) and, with
``emitPrompt: true``, its ``prompt_content`` is the final text (for the compiler to place).
A failed run fails the node with the run's code (a required node then fails the workflow).
``mode: "fast+slow"`` freezes the snapshot and sends the run to Celery beside the Actor
(``runtime_runs``): the node's value is the queued run's id and frozen revision, and it
offers no prompt content (the Actor does not wait for it). The turn's cancel, set while the
run may still go, cancels it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from roleplay.workflows import registry, runtime_runs
from roleplay.workflows.engine.contracts import CapabilityCall, CapabilityError, CapabilityValue
from roleplay.workflows.engine.runtime import limits_from
from roleplay.workflows.runtime_node import (
    INPUT_SCHEMA,
    NAME,
    check_input,
    context_for,
    earlier_steps,
    history_for,
    runtime_for,
)

DESCRIPTION = (
    "Run a bounded model-and-tool loop: a model config with a system or role prompt, the "
    "named capabilities as its tools, the seed's limits, and the conversation's saved state "
    "under a key (committed by compare-and-set)."
)


@dataclass(frozen=True)
class BoundedRuntime:
    scope: registry.RunScope
    name: str = NAME
    input_schema = INPUT_SCHEMA

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        node = check_input(call.input)
        earlier = earlier_steps(call.dependencies)
        if node.get("mode") == "fast+slow":
            started = await runtime_runs.start(self.scope, call.node_id, node, call.query, earlier)
            timeout_s = limits_from(node.get("limits")).timeout_ms / 1000.0
            within = runtime_runs.STALLED_QUEUED.total_seconds() + timeout_s
            runtime_runs.forward_cancel(cancel, started["runId"], within)
            return CapabilityValue(started)
        runtime, _store = await runtime_for(node, self.scope, earlier)
        history = await history_for(self.scope, node, call.query)
        result = await runtime.run(context_for(call.query, history, self.scope), cancel)
        if result.status == "failed":
            error = result.error or {"code": "runtime_failed", "message": "the run failed"}
            raise CapabilityError(error["code"], error["message"])
        summary = {"mode": "slow", **result.as_json()}
        prompt = (result.final or {}).get("content") if node.get("emitPrompt") else None
        return CapabilityValue(summary, prompt_content=prompt or None)


registry.register(NAME, BoundedRuntime, description=DESCRIPTION, input_schema=INPUT_SCHEMA)
