"""The executor: serial order, parallel overlap (seen through events, not the clock), the
concurrency cap, required against optional failure, blocked dependents, an unregistered
capability, cancel, timeout and what a capability may return. Pure: no database."""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from roleplay.workflows.engine import executor
from roleplay.workflows.engine.contracts import (
    CapabilityCall,
    CapabilityError,
    CapabilityValue,
    Node,
    Plan,
)
from roleplay.workflows.engine.executor import execute

pytestmark = pytest.mark.asyncio
BOUND = 10.0  # a hang fails the test instead of blocking the run (never a figure)

Body = Callable[[CapabilityCall, asyncio.Event], Awaitable[Any]]


class Probe:
    """A capability that logs its start and end, and runs ``body`` (default: echo)."""

    input_schema: dict = {}

    def __init__(self, name: str, log: list, body: Body | None = None) -> None:
        self.name = name
        self.log = log
        self.body = body
        self.calls: list[CapabilityCall] = []

    async def execute(self, call: CapabilityCall, cancel: asyncio.Event) -> Any:
        self.calls.append(call)
        self.log.append(("start", call.node_id))
        try:
            if self.body is not None:
                return await self.body(call, cancel)
            await asyncio.sleep(0)
            return CapabilityValue(value={"node": call.node_id, "input": dict(call.input)})
        except asyncio.CancelledError:
            self.log.append(("cancelled", call.node_id))
            raise
        finally:
            self.log.append(("end", call.node_id))


def node(node_id: str, *deps: str, cap: str = "echo", **extra: Any) -> Node:
    return Node(id=node_id, capability=cap, depends_on=deps, **extra)


def plan(*nodes: Node) -> Plan:
    return Plan(profile_id="s1", nodes=nodes)


def ticking_clock() -> Callable[[], float]:
    counter = itertools.count()
    return lambda: next(counter) / 1000.0  # one millisecond per reading


async def run(the_plan: Plan, caps: dict, **kwargs: Any):
    kwargs.setdefault("cancel", asyncio.Event())
    kwargs.setdefault("query", "I hand over the copper key.")
    return await asyncio.wait_for(execute(the_plan, caps, **kwargs), BOUND)


def statuses(result) -> dict[str, str]:
    return {trace.node_id: trace.status for trace in result.traces}


async def test_serial_nodes_run_one_after_another_in_plan_order_with_input_query_and_outputs():
    log: list = []
    echo = Probe("echo", log)
    result = await run(
        plan(node("a", input={"location": "gate"}), node("b", "a"), node("c")), {"echo": echo}
    )
    assert result.status == "succeeded" and result.error is None
    assert log == [
        ("start", "a"),
        ("end", "a"),
        ("start", "b"),
        ("end", "b"),
        ("start", "c"),
        ("end", "c"),
    ]
    first, second, third = echo.calls
    assert (
        dict(first.input) == {"location": "gate"} and first.query == "I hand over the copper key."
    )
    assert dict(first.dependencies) == {}
    assert second.dependencies["a"].result.value == {"node": "a", "input": {"location": "gate"}}
    assert set(third.dependencies) == {"a", "b"}  # every completed output, by node id
    assert list(result.outputs) == ["a", "b", "c"]


async def test_parallel_nodes_overlap_and_a_serial_node_waits_for_them():
    log: list = []
    started = {"p": asyncio.Event(), "q": asyncio.Event()}

    async def meet(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        started[call.node_id].set()
        other = "q" if call.node_id == "p" else "p"
        await started[other].wait()  # returns only if the other one runs at the same time
        return CapabilityValue(value=call.node_id)

    caps = {"meet": Probe("meet", log, meet), "echo": Probe("echo", log)}
    result = await run(
        plan(
            node("p", cap="meet", parallel=True),
            node("q", cap="meet", parallel=True),
            node("s", "p"),
        ),
        caps,
    )
    assert result.status == "succeeded"
    assert log.index(("start", "q")) < log.index(("end", "p"))  # overlap
    assert log.index(("start", "s")) > max(log.index(("end", "p")), log.index(("end", "q")))


async def test_serial_nodes_never_overlap_even_when_independent():
    log: list = []

    async def slow(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        for _ in range(5):
            await asyncio.sleep(0)  # ample chance for another node to start, were it allowed
        return CapabilityValue(value=1)

    caps = {"echo": Probe("echo", log, slow)}
    await run(plan(node("a"), node("b"), node("c", parallel=True), node("d")), caps)
    assert log == [
        ("start", "a"), ("end", "a"), ("start", "b"), ("end", "b"),
        ("start", "c"), ("end", "c"), ("start", "d"), ("end", "d"),
    ]  # fmt: skip


async def test_a_parallel_node_waits_for_its_dependencies_and_the_cap_holds():
    log: list = []
    live = {"now": 0, "most": 0}

    async def count(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        live["now"] += 1
        live["most"] = max(live["most"], live["now"])
        for _ in range(3):
            await asyncio.sleep(0)
        live["now"] -= 1
        return CapabilityValue(value=call.node_id)

    caps = {"echo": Probe("echo", log, count)}
    nodes = [node(f"n{i}", parallel=True) for i in range(5)] + [node("after", "n0", parallel=True)]
    result = await run(plan(*nodes), caps, max_parallel=2)
    assert result.status == "succeeded"
    assert live["most"] == 2
    assert log.index(("start", "after")) > log.index(("end", "n0"))
    assert executor.MAX_PARALLEL == 4


async def test_a_required_failure_fails_the_workflow_and_blocks_dependents_transitively():
    log: list = []

    async def boom(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        raise CapabilityError("upstream_error", "the rule service answered 503")

    caps = {"echo": Probe("echo", log), "boom": Probe("boom", log, boom)}
    the_plan = plan(
        node("a"),
        node("b", "a", cap="boom"),
        node("c", "b"),
        node("d"),
        node("e", "c"),
        node("f", "a"),
    )
    result = await run(the_plan, caps)
    assert result.status == "failed"
    assert result.error == {
        "code": "required_node_failed",
        "message": "required node 'b' failed: upstream_error",
        "node": "b",
        "cause": "upstream_error",
    }
    assert statuses(result) == {
        "a": "succeeded", "b": "failed", "c": "blocked",
        "d": "not_run", "e": "blocked", "f": "not_run",
    }  # fmt: skip
    traces = {t.node_id: t for t in result.traces}
    assert traces["b"].error == {
        "code": "upstream_error",
        "message": "the rule service answered 503",
    }
    assert traces["c"].error["code"] == "blocked" and traces["c"].started_ms is None
    assert ("start", "d") not in log
    assert list(result.outputs) == ["a"]


async def test_in_parallel_a_required_failure_lets_started_nodes_finish_and_blocks_its_dependents():
    log: list = []
    slow_started = asyncio.Event()

    async def fail_later(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        await slow_started.wait()
        raise RuntimeError("boom")

    async def slow(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        slow_started.set()
        for _ in range(5):
            await asyncio.sleep(0)
        return CapabilityValue(value="done")

    caps = {
        "fail": Probe("fail", log, fail_later),
        "slow": Probe("slow", log, slow),
        "echo": Probe("echo", log),
    }
    the_plan = plan(
        node("x", cap="fail", parallel=True),
        node("y", cap="slow", parallel=True),
        node("z", "x", parallel=True),
        node("w"),
    )
    result = await run(the_plan, caps)
    assert result.status == "failed" and result.error["node"] == "x"
    assert statuses(result) == {"x": "failed", "y": "succeeded", "z": "blocked", "w": "not_run"}
    assert result.outputs["y"].result.value == "done"


async def test_an_optional_failure_is_visible_and_its_dependents_still_run():
    log: list = []

    async def leaky(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        raise ValueError("api key sk-secret-123 rejected by https://internal.example")

    echo = Probe("echo", log)
    caps = {"echo": echo, "leaky": Probe("leaky", log, leaky)}
    result = await run(plan(node("opt", cap="leaky", required=False), node("next", "opt")), caps)
    assert result.status == "succeeded" and result.error is None
    assert statuses(result) == {"opt": "failed", "next": "succeeded"}
    failure = result.traces[0].error
    assert failure == {"code": "capability_error", "message": "ValueError"}  # no secret, no URL
    assert "opt" not in echo.calls[0].dependencies  # its output is missing, not empty


async def test_an_unregistered_capability_is_an_error_never_a_skip_even_when_optional():
    log: list = []
    caps = {"echo": Probe("echo", log)}
    result = await run(plan(node("a"), node("ghost", cap="missing", required=False)), caps)
    assert result.status == "failed"
    assert result.error["code"] == "unregistered_capability" and result.error["node"] == "ghost"
    assert statuses(result) == {"a": "not_run", "ghost": "failed"}
    assert result.traces[1].error["code"] == "unregistered_capability"
    assert log == []  # nothing ran


async def test_cancel_stops_the_running_node_and_leaves_the_rest_unstarted():
    log: list = []
    cancel = asyncio.Event()
    waiting = asyncio.Event()

    async def forever(call: CapabilityCall, cancel_event: asyncio.Event) -> CapabilityValue:
        assert cancel_event is cancel  # the capability sees the workflow's cancel
        waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    caps = {"hang": Probe("hang", log, forever), "echo": Probe("echo", log)}
    task = asyncio.ensure_future(
        run(plan(node("a"), node("h", "a", cap="hang"), node("later")), caps, cancel=cancel)
    )
    await asyncio.wait_for(waiting.wait(), BOUND)
    cancel.set()
    result = await task
    assert result.status == "failed" and result.error["code"] == "cancelled"
    assert statuses(result) == {"a": "succeeded", "h": "failed", "later": "not_run"}
    assert result.traces[1].error["code"] == "cancelled"
    assert ("cancelled", "h") in log


async def test_cancel_set_before_the_start_runs_nothing():
    log: list = []
    cancel = asyncio.Event()
    cancel.set()
    result = await run(plan(node("a")), {"echo": Probe("echo", log)}, cancel=cancel)
    assert result.status == "failed" and result.error["code"] == "cancelled"
    assert statuses(result) == {"a": "not_run"} and log == []


async def test_cancelling_the_awaiting_task_cancels_the_nodes_and_propagates():
    log: list = []
    waiting = asyncio.Event()

    async def forever(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        waiting.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    caps = {"hang": Probe("hang", log, forever)}
    task = asyncio.ensure_future(
        execute(plan(node("h", cap="hang")), caps, query="", cancel=asyncio.Event())
    )
    await asyncio.wait_for(waiting.wait(), BOUND)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert ("cancelled", "h") in log


async def test_a_timeout_fails_the_workflow_and_cancels_the_running_node():
    log: list = []

    async def forever(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    caps = {"hang": Probe("hang", log, forever), "echo": Probe("echo", log)}
    result = await run(plan(node("h", cap="hang"), node("b")), caps, timeout_s=0.05)
    assert result.status == "failed" and result.error["code"] == "timeout"
    assert statuses(result) == {"h": "failed", "b": "not_run"}
    assert result.traces[0].error["code"] == "timeout" and ("cancelled", "h") in log
    nothing = await run(plan(node("b")), caps, timeout_s=0)
    assert nothing.error["code"] == "timeout" and statuses(nothing) == {"b": "not_run"}


@pytest.mark.parametrize(
    ("returned", "code"),
    [
        ({"value": 1}, "invalid_output"),
        (CapabilityValue(value=object()), "invalid_output"),
        (CapabilityValue(value=float("nan")), "invalid_output"),
        (CapabilityValue(value="\ud800"), "invalid_output"),
        (CapabilityValue(value="a\x00b"), "invalid_output"),
        (CapabilityValue(value=1, prompt_content=5), "invalid_output"),  # type: ignore[arg-type]
        (CapabilityValue(value="x" * executor.MAX_OUTPUT_BYTES), "output_too_large"),
    ],
)
async def test_a_result_that_cannot_be_kept_fails_the_node(returned, code):
    async def give(call: CapabilityCall, cancel: asyncio.Event) -> Any:
        return returned

    result = await run(plan(node("a", required=False)), {"echo": Probe("echo", [], give)})
    assert result.traces[0].status == "failed" and result.traces[0].error["code"] == code
    assert result.outputs == {}


async def test_a_capability_that_is_not_async_or_raises_at_call_is_a_coded_failure():
    class Sync:
        name = "sync"
        input_schema: dict = {}

        def execute(self, call, cancel):
            return CapabilityValue(value=1)  # not awaitable

    result = await run(plan(node("a", cap="sync", required=False)), {"sync": Sync()})
    assert result.traces[0].error == {"code": "capability_error", "message": "TypeError"}


async def test_every_node_has_a_trace_with_times_status_and_output_size():
    async def text(call: CapabilityCall, cancel: asyncio.Event) -> CapabilityValue:
        return CapabilityValue(value={"rule": "手令"}, prompt_content="Check the pass.")

    result = await run(
        plan(node("a"), node("b", "a")), {"echo": Probe("echo", [], text)}, clock=ticking_clock()
    )
    first, second = result.traces
    assert first.started_ms is not None and first.ended_ms is not None
    assert 0 <= first.started_ms < first.ended_ms <= second.started_ms < second.ended_ms
    body = {"value": {"rule": "手令"}, "promptContent": "Check the pass.", "artifacts": []}
    assert first.output_bytes == len(json.dumps(body, ensure_ascii=False).encode("utf-8"))
    assert (first.capability, first.status, first.error) == ("echo", "succeeded", None)


async def test_a_cancel_after_a_required_failure_keeps_that_failure_as_the_cause():
    log: list = []
    cancel = asyncio.Event()
    y_started = asyncio.Event()

    async def fail_then_cancel(
        call: CapabilityCall, cancel_event: asyncio.Event
    ) -> CapabilityValue:
        await y_started.wait()
        cancel_event.set()  # the turn is stopped as the failure lands
        raise CapabilityError("bad_input", "no location")

    async def forever(call: CapabilityCall, cancel_event: asyncio.Event) -> CapabilityValue:
        y_started.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    caps = {"fail": Probe("fail", log, fail_then_cancel), "hang": Probe("hang", log, forever)}
    the_plan = plan(node("x", cap="fail", parallel=True), node("y", cap="hang", parallel=True))
    result = await run(the_plan, caps, cancel=cancel)
    assert result.error["code"] == "required_node_failed" and result.error["cause"] == "bad_input"
    assert result.traces[1].status == "failed" and result.traces[1].error["code"] == "cancelled"
    assert ("cancelled", "y") in log
