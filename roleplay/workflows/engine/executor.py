"""The executor: runs a :class:`~.contracts.Plan`'s nodes and answers with every node's
trace (seed 002 lines 1410 and 1480–1488, ``CapabilityExecutor.execute``).

How nodes run:

- **Serial by default**, in plan order: a node without ``parallel`` starts only when every
  node before it has ended, and nothing after it starts until it ends.
- **Parallel where declared**: between two serial nodes, ``parallel: true`` nodes start as
  soon as their dependencies have ended (in plan order, at most ``max_parallel`` at once,
  :data:`MAX_PARALLEL` by default), as asyncio tasks of this loop.
- Each node's call carries its ``input``, the turn's ``query`` and the outputs of the nodes
  completed before it started (by node id; a node should read only the ones it declared).

How failures travel:

- A capability named by a node but absent from ``capabilities`` fails the workflow before
  any node runs (``unregistered_capability``, even for an optional node): never a skip.
- A **required** node's failure fails the workflow (``required_node_failed``, its code as
  ``cause``): nothing new starts, nodes already running finish, the nodes that depend on it
  (directly or through other nodes) are ``blocked`` and the other unstarted ones ``not_run``.
- An **optional** node's failure is in its trace; it has no output, and its dependents run.
- ``cancel`` set, or ``timeout_s`` past: the running nodes' tasks are cancelled (their
  traces ``failed`` with ``cancelled`` / ``timeout``), the unstarted are ``not_run``, and
  the workflow fails with that code. Cancelling the task that awaits :func:`execute`
  cancels the running nodes and propagates.
- A :class:`~.contracts.CapabilityError` keeps its code and message (clipped); any other
  exception is ``capability_error`` with the exception's type name only (a message may
  carry a URL, a key or a player's text). A result that is not a ``CapabilityValue`` of
  JSON, or past :data:`MAX_OUTPUT_BYTES`, is ``invalid_output`` / ``output_too_large``.

Each trace has ``started_ms`` / ``ended_ms`` from the workflow's start (``clock``, for
tests), the status, ``output_bytes`` (the UTF-8 length of the result's JSON) and the error.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any

from console.storable import unstorable_at
from roleplay.frontloop.engine.text import clip

from .contracts import (
    Capability,
    CapabilityCall,
    CapabilityError,
    CapabilityValue,
    Node,
    NodeOutput,
    NodeTrace,
    Plan,
    WorkflowResult,
)

MAX_PARALLEL = 4
MAX_OUTPUT_BYTES = 1_000_000  # one node's result as JSON: kept in the run's record
CANCEL_GRACE_S = 2.0  # how long a cancelled node may take to stop before it is left behind
_MAX_MESSAGE = 500

UNREGISTERED_CAPABILITY = "unregistered_capability"
REQUIRED_NODE_FAILED = "required_node_failed"
CAPABILITY_ERROR = "capability_error"
INVALID_OUTPUT = "invalid_output"
OUTPUT_TOO_LARGE = "output_too_large"
BLOCKED = "blocked"
CANCELLED = "cancelled"
TIMEOUT = "timeout"


async def execute(
    plan: Plan,
    capabilities: Mapping[str, Capability],
    *,
    query: str,
    cancel: asyncio.Event,
    timeout_s: float | None = None,
    clock: Callable[[], float] = time.monotonic,
    max_parallel: int = MAX_PARALLEL,
) -> WorkflowResult:
    """Run ``plan``; never raises for a node's failure (see the module's docstring)."""
    run = _Run(plan, capabilities, query, cancel, clock, max(1, max_parallel))
    missing = [node for node in plan.nodes if node.capability not in capabilities]
    if missing:
        return run.unregistered(missing)
    return await run.go(timeout_s)


class _Run:
    """One execution's state: what runs, what ended, what the workflow's outcome is."""

    def __init__(
        self,
        plan: Plan,
        capabilities: Mapping[str, Capability],
        query: str,
        cancel: asyncio.Event,
        clock: Callable[[], float],
        max_parallel: int,
    ) -> None:
        self.plan = plan
        self.capabilities = capabilities
        self.query = query
        self.cancel = cancel
        self.clock = clock
        self.max_parallel = max_parallel
        self.start = clock()
        self.traces = {
            node.id: NodeTrace(node.id, node.capability, "not_run") for node in plan.nodes
        }
        self.pending: list[Node] = list(plan.nodes)
        self.running: dict[asyncio.Future[Any], Node] = {}
        self.ended: set[str] = set()
        self.failed_required: set[str] = set()
        self.outputs: dict[str, NodeOutput] = {}
        self.error: dict[str, str] | None = None

    def unregistered(self, missing: list[Node]) -> WorkflowResult:
        for node in missing:
            self.traces[node.id].status = "failed"
            self.traces[node.id].error = {
                "code": UNREGISTERED_CAPABILITY,
                "message": f"no capability {node.capability!r} for this run",
            }
        first = missing[0]
        self.error = {
            "code": UNREGISTERED_CAPABILITY,
            "message": f"node {first.id!r} uses {first.capability!r}, which is not registered",
            "node": first.id,
        }
        return self._result()

    async def go(self, timeout_s: float | None) -> WorkflowResult:
        loop = asyncio.get_running_loop()
        deadline = None if timeout_s is None else loop.time() + timeout_s
        cancelled = asyncio.ensure_future(self.cancel.wait())
        try:
            while True:
                if self.cancel.is_set():
                    await self._abort(CANCELLED, "the workflow was cancelled")
                    break
                if deadline is not None and loop.time() >= deadline:
                    await self._abort(TIMEOUT, f"the workflow ran past {timeout_s} s")
                    break
                self._start_ready()
                if not self.running:
                    break
                wait = None if deadline is None else max(0.0, deadline - loop.time())
                done, _ = await asyncio.wait(
                    {*self.running, cancelled}, timeout=wait, return_when=asyncio.FIRST_COMPLETED
                )
                for task in [t for t in self.running if t in done]:
                    self._finish(task)
        finally:
            cancelled.cancel()
            if self.running:  # this task was cancelled: stop the nodes, then propagate
                for task in self.running:
                    task.cancel()
                await asyncio.wait(list(self.running), timeout=CANCEL_GRACE_S)
        return self._result()

    def _start_ready(self) -> None:
        """Start what may start now: the next serial node alone, or ready parallel ones."""
        if self.error is not None:
            return
        for node in list(self.pending):
            if len(self.running) >= self.max_parallel:
                return
            if not node.parallel:
                if not self.running and node is self.pending[0]:
                    self._launch(node)
                return  # a serial node is a barrier: nothing after it starts before it ends
            if all(dep in self.ended for dep in node.depends_on):
                self._launch(node)

    def _launch(self, node: Node) -> None:
        self.pending.remove(node)
        call = CapabilityCall(
            node_id=node.id,
            input=MappingProxyType(dict(node.input)),
            query=self.query,
            dependencies=MappingProxyType(dict(self.outputs)),
        )
        task = asyncio.ensure_future(_call(self.capabilities[node.capability], call, self.cancel))
        self.running[task] = node
        trace = self.traces[node.id]
        trace.started_ms = self._ms()

    def _finish(self, task: asyncio.Future[Any]) -> None:
        node = self.running.pop(task)
        trace = self.traces[node.id]
        trace.ended_ms = self._ms()
        self.ended.add(node.id)
        if task.cancelled():
            failure: dict[str, str] | None = {"code": CAPABILITY_ERROR, "message": "CancelledError"}
        elif task.exception() is not None:
            failure = _failure(task.exception())
        else:
            failure, size = _accepted(task.result())
            if failure is None:
                trace.status, trace.output_bytes = "succeeded", size
                self.outputs[node.id] = NodeOutput(node.id, node.capability, task.result())
                return
        trace.status, trace.error = "failed", failure
        if node.required and failure is not None:
            self.failed_required.add(node.id)
            if self.error is None:
                self.error = {
                    "code": REQUIRED_NODE_FAILED,
                    "message": f"required node {node.id!r} failed: {failure['code']}",
                    "node": node.id,
                    "cause": failure["code"],
                }

    async def _abort(self, code: str, message: str) -> None:
        """Cancel the running nodes: their traces fail with ``code``, so does the workflow."""
        stopping = {}
        for task, node in list(self.running.items()):
            if task.done():
                self._finish(task)
            else:
                task.cancel()
                stopping[task] = node
        if stopping:
            await asyncio.wait(list(stopping), timeout=CANCEL_GRACE_S)
        for task, node in stopping.items():
            self.running.pop(task, None)
            trace = self.traces[node.id]
            trace.ended_ms = self._ms()
            trace.status, trace.error = "failed", {"code": code, "message": message}
        if self.error is None:  # a required node's failure came first: it stays the cause
            self.error = {"code": code, "message": message}

    def _result(self) -> WorkflowResult:
        """Unstarted nodes: ``blocked`` behind a failed required node, else ``not_run``."""
        blocked = set(self.failed_required)
        for node in self.plan.nodes:
            trace = self.traces[node.id]
            if trace.started_ms is not None or trace.status != "not_run":
                continue
            cause = next((dep for dep in node.depends_on if dep in blocked), None)
            if cause is not None:
                blocked.add(node.id)
                trace.status = "blocked"
                trace.error = {"code": BLOCKED, "message": f"dependency {cause!r} did not complete"}
        return WorkflowResult(
            status="failed" if self.error is not None else "succeeded",
            outputs=self.outputs,
            traces=[self.traces[node.id] for node in self.plan.nodes],
            error=self.error,
        )

    def _ms(self) -> float:
        return round((self.clock() - self.start) * 1000.0, 3)


async def _call(capability: Capability, call: CapabilityCall, cancel: asyncio.Event) -> Any:
    return await capability.execute(call, cancel)


def _failure(exc: BaseException | None) -> dict[str, str]:
    if isinstance(exc, CapabilityError):
        return {"code": clip(exc.code, 64), "message": clip(exc.message, _MAX_MESSAGE)}
    return {"code": CAPABILITY_ERROR, "message": type(exc).__name__}


def _accepted(result: object) -> tuple[dict[str, str] | None, int]:
    """(None, its JSON size) for a usable result, else (the failure, 0)."""
    if not isinstance(result, CapabilityValue):
        what = f"returned {type(result).__name__}, not a CapabilityValue"
        return {"code": INVALID_OUTPUT, "message": what}, 0
    if result.prompt_content is not None and not isinstance(result.prompt_content, str):
        return {"code": INVALID_OUTPUT, "message": "prompt_content is not text"}, 0
    body = {
        "value": result.value,
        "promptContent": result.prompt_content,
        "artifacts": list(result.artifacts),
    }
    try:
        text = json.dumps(body, ensure_ascii=False, allow_nan=False)
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError:
        return {"code": INVALID_OUTPUT, "message": "holds text that is not valid Unicode"}, 0
    except (TypeError, ValueError, RecursionError) as exc:
        return {"code": INVALID_OUTPUT, "message": f"not JSON ({type(exc).__name__})"}, 0
    if size > MAX_OUTPUT_BYTES:
        message = f"{size} bytes of JSON; at most {MAX_OUTPUT_BYTES}"
        return {"code": OUTPUT_TOO_LARGE, "message": message}, 0
    if "\\u0000" in text and unstorable_at(body, "output") is not None:
        return {"code": INVALID_OUTPUT, "message": "holds a NUL character"}, 0
    return None, size
