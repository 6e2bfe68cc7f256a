"""The bounded model-and-tool loop (the seed's ``SlowTurnRuntime``, ``002`` lines 1365–1400).

The model reads, in order: the configured system prompt, the saved state as a system
message, the history, this turn's input. Its tools are the capabilities given to the
runtime, nothing else. Each step is one model call; a reply with tool calls has the batch
checked (``maxParallelTools``, ``maxToolCalls``), each call's arguments validated
(``tools``), the batch run side by side and the results given back; a reply without tool
calls is the final one. Time is the injected clock's (``timeoutMs`` from the run's start,
checked around every call); cancel is an event checked at each step and raced against every
wait.

At the end, ``prepare_commit(final, tool_results, context)`` may propose a state candidate;
it is written by compare-and-set on the revision read at the start of the run (or the frozen
snapshot's), and a conflict is ``stale_write_rejected`` (the run still completed: its
analysis is there, its write is not). Without ``prepare_commit``, or when it answers None,
the state is unchanged.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..contracts import Capability
from . import gate as gates
from .limits import Limits, Totals, add_usage, check_before_call
from .ports import (
    Model,
    ModelReply,
    ModelRequest,
    RunContext,
    StateCandidate,
    StateSnapshot,
    StateStore,
)
from .result import RuntimeFailure, RuntimeResult
from .tools import Toolbox, assistant_message, tool_message
from .waits import race

PrepareCommit = Callable[
    [dict[str, Any], list[dict[str, Any]], RunContext],
    StateCandidate | None | Awaitable[StateCandidate | None],
]
Clock = Callable[[], float]  # seconds, monotonic
# The commit of a final answer that came within the deadline is not cut by it: one write,
# bounded on its own.
COMMIT_WAIT_S = 30.0


@dataclass
class SlowTurnRuntime:
    model: Model
    system_prompt: str
    capabilities: Sequence[Capability] = ()
    state: StateStore | None = None
    limits: Limits = field(default_factory=Limits)
    gate: gates.Gate | None = None
    prepare_commit: PrepareCommit | None = None
    clock: Clock = time.monotonic

    def __post_init__(self) -> None:
        self.toolbox = Toolbox(self.capabilities)  # duplicate names, bad schemas: refused now

    async def run(
        self,
        context: RunContext,
        cancel: asyncio.Event | None = None,
        *,
        snapshot: StateSnapshot | None = None,
    ) -> RuntimeResult:
        """One run. ``snapshot``: the state frozen by the caller (fast+slow), else read now."""
        job = _Job(self, context, cancel or asyncio.Event())
        try:
            await job.execute(snapshot)
        except RuntimeFailure as exc:
            job.result.status = "failed"
            job.result.error = {"code": exc.code, "message": exc.message}
        job.result.usage = job.totals.as_json()
        return job.result


class _Job:
    """One run's moving parts."""

    def __init__(self, runtime: SlowTurnRuntime, context: RunContext, cancel: asyncio.Event):
        self.rt, self.context, self.cancel = runtime, context, cancel
        self.limits = runtime.limits
        self.started = runtime.clock()
        self.totals = Totals()
        self.result = RuntimeResult(status="completed")

    def checkpoint(self, *, starting: bool = True) -> float:
        """Seconds left by the injected clock. Before a wait (``starting``) the deadline
        must still be ahead; after one, a result that came exactly at it is kept."""
        if self.cancel.is_set():
            raise RuntimeFailure("cancelled", "the run was cancelled")
        left = self.limits.timeout_ms / 1000.0 - (self.rt.clock() - self.started)
        if left < 0 or (starting and left == 0):
            raise RuntimeFailure("timeout", f"the run reached timeoutMs {self.limits.timeout_ms}")
        return left

    async def execute(self, snapshot: StateSnapshot | None) -> None:
        self.checkpoint()
        if snapshot is None:
            snapshot = await self.read_state()
        self.result.revision = snapshot.revision
        if self.rt.gate is not None:
            left = self.checkpoint()
            self.result.gate = await gates.evaluate(self.rt.gate, self.context, self.cancel, left)
            self.checkpoint(starting=False)
            if not self.result.gate["run"]:
                return
        final = await self.loop(self.messages(snapshot))
        self.result.final = final
        await self.commit(final, snapshot)

    async def read_state(self) -> StateSnapshot:
        if self.rt.state is None:
            return StateSnapshot(None, 0)
        try:
            got = await race(self.rt.state.get(), self.cancel, self.checkpoint())
        except RuntimeFailure:
            raise
        except Exception as exc:
            raise RuntimeFailure("state_read_failed", str(exc)) from exc
        return StateSnapshot(*got)

    def messages(self, snapshot: StateSnapshot) -> list[dict[str, Any]]:
        if snapshot.state is None:
            saved = "Saved state: none yet (revision 0)."
        else:
            text = json.dumps(snapshot.state, ensure_ascii=False, sort_keys=True, default=str)
            saved = f"Saved state (revision {snapshot.revision}):\n{text}"
        history = [
            {"role": str(m["role"]), "content": str(m["content"])} for m in self.context.history
        ]
        return [
            {"role": "system", "content": self.rt.system_prompt},
            {"role": "system", "content": saved},
            *history,
            {"role": "user", "content": self.context.input},
        ]

    async def loop(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        definitions = self.rt.toolbox.definitions()
        for step in range(1, self.limits.max_steps + 1):
            reply = await self.call_model(messages, definitions, step)
            if not reply.tool_calls:
                return {"content": reply.content, "model": reply.model}
            await self.run_tools(messages, reply)
        raise RuntimeFailure(
            "max_steps_exceeded",
            f"no final answer within maxSteps {self.limits.max_steps}",
        )

    async def call_model(
        self, messages: list[dict[str, Any]], definitions: list[dict[str, Any]], step: int
    ) -> ModelReply:
        left = self.checkpoint()
        check_before_call(self.limits, self.totals)
        request = ModelRequest(list(messages), definitions, step, left)
        try:
            reply = await race(self.rt.model.complete(request, self.cancel), self.cancel, left)
        except RuntimeFailure:
            raise
        except Exception as exc:
            code = getattr(exc, "code", None)
            detail = f"{code}: {exc}" if isinstance(code, str) else str(exc)
            raise RuntimeFailure("model_error", detail) from exc
        self.result.calls += 1
        add_usage(self.limits, self.totals, reply.usage)  # spent even when it came too late
        self.checkpoint(starting=False)
        return reply

    async def run_tools(self, messages: list[dict[str, Any]], reply: ModelReply) -> None:
        batch = reply.tool_calls
        if len(batch) > self.limits.max_parallel_tools:
            raise RuntimeFailure(
                "too_many_parallel_tools",
                f"{len(batch)} tool calls in one batch, the limit is "
                f"{self.limits.max_parallel_tools}",
            )
        if self.result.tool_calls + len(batch) > self.limits.max_tool_calls:
            raise RuntimeFailure(
                "too_many_tool_calls",
                f"{self.result.tool_calls + len(batch)} tool calls, the limit is "
                f"{self.limits.max_tool_calls}",
            )
        self.result.tool_calls += len(batch)
        left = self.checkpoint()
        query = self.context.input
        work = asyncio.gather(*(self.rt.toolbox.call(c, query, self.cancel) for c in batch))
        records = await race(work, self.cancel, left)
        self.checkpoint(starting=False)
        self.result.tool_results.extend(records)
        messages.append(assistant_message(reply.content, batch))
        messages.extend(tool_message(record) for record in records)

    async def commit(self, final: dict[str, Any], snapshot: StateSnapshot) -> None:
        if self.rt.prepare_commit is None or self.rt.state is None:
            return
        try:
            candidate = self.rt.prepare_commit(final, list(self.result.tool_results), self.context)
            if inspect.isawaitable(candidate):
                candidate = await candidate
        except Exception as exc:
            raise RuntimeFailure("prepare_commit_failed", str(exc)) from exc
        if candidate is None:
            return
        if not isinstance(candidate, StateCandidate):
            raise RuntimeFailure("prepare_commit_failed", "prepare_commit gave no StateCandidate")
        self.checkpoint(starting=False)
        try:
            written = await race(
                self.rt.state.compare_and_set(snapshot.revision, candidate),
                self.cancel,
                COMMIT_WAIT_S,
            )
        except RuntimeFailure:
            raise
        except Exception as exc:
            raise RuntimeFailure("state_write_failed", str(exc)) from exc
        if written:
            self.result.state_outcome = "committed"
            self.result.revision = snapshot.revision + 1
        else:
            self.result.state_outcome = "stale_write_rejected"
