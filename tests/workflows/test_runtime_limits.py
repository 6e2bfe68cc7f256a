"""The runtime's limits at ±1 (seed 002 line 1394 on): steps, tool calls per run, calls per
batch, tokens and cost (before and after each call), usage missing, and the deadline on an
injected clock."""

from __future__ import annotations

import asyncio

import pytest

from roleplay.workflows.engine.runtime import (
    Limits,
    LimitsError,
    RunContext,
    SlowTurnRuntime,
    Usage,
    limits_from,
)

from .runtime_fakes import Clock, Echo, ScriptedModel, final, tools_reply


def run(script, limits: Limits, *, seconds: float = 0.0, echo: Echo | None = None):
    clock = Clock()
    model = ScriptedModel(clock, list(script), seconds=seconds)
    runtime = SlowTurnRuntime(
        model, "You check continuity.", [echo or Echo()], limits=limits, clock=clock
    )
    result = asyncio.run(runtime.run(RunContext("I hand over the key.")))
    return result, model


def code(result) -> str | None:
    return (result.error or {}).get("code")


def test_the_seed_defaults():
    assert Limits() == Limits(
        max_steps=4, max_tool_calls=8, max_parallel_tools=4, timeout_ms=180_000
    )
    assert limits_from(None) == Limits() == limits_from({})
    assert limits_from({"maxSteps": 2, "maxCostUsd": 1}).max_cost_usd == 1.0


@pytest.mark.parametrize(
    "raw",
    [
        {"maxSteps": 0},
        {"maxSteps": 33},
        {"maxSteps": True},
        {"maxSteps": 2.0},
        {"maxParallelTools": 0},
        {"maxToolCalls": -1},
        {"timeoutMs": 900_001},
        {"maxTotalTokens": 0},
        {"maxCostUsd": 0},
        {"maxCostUsd": float("inf")},
        {"maxCostUsd": "1"},
        {"maxTurns": 3},
        [],
    ],
)
def test_a_bad_limits_object_is_refused(raw):
    with pytest.raises(LimitsError):
        limits_from(raw)


@pytest.mark.parametrize(("max_steps", "status"), [(2, "completed"), (1, "failed")])
def test_max_steps(max_steps, status):
    result, model = run([tools_reply("echo"), final()], Limits(max_steps=max_steps))
    assert result.status == status
    assert result.calls == max_steps == len(model.requests)
    if status == "failed":
        assert code(result) == "max_steps_exceeded"
        assert result.final is None
    else:
        assert result.final == {"content": "done", "model": "fake"}


@pytest.mark.parametrize(("max_tool_calls", "status"), [(3, "completed"), (2, "failed")])
def test_max_tool_calls_counts_the_whole_run(max_tool_calls, status):
    echo = Echo()
    script = [tools_reply("echo", "echo"), tools_reply("echo"), final()]
    result, _ = run(script, Limits(max_tool_calls=max_tool_calls), echo=echo)
    assert result.status == status
    if status == "failed":
        assert code(result) == "too_many_tool_calls"
        assert len(echo.seen) == 2  # the second batch never ran
        assert result.tool_calls == 2
    else:
        assert len(echo.seen) == result.tool_calls == 3


@pytest.mark.parametrize(("batch", "status"), [(2, "completed"), (3, "failed")])
def test_max_parallel_tools_per_batch(batch, status):
    echo = Echo()
    script = [tools_reply(*["echo"] * batch), final()]
    result, _ = run(script, Limits(max_parallel_tools=2), echo=echo)
    assert result.status == status
    if status == "failed":
        assert code(result) == "too_many_parallel_tools"
        assert echo.seen == []
    else:
        assert len(echo.seen) == 2


@pytest.mark.parametrize(("limit", "status"), [(100, "completed"), (99, "failed")])
def test_max_total_tokens_after_a_call(limit, status):
    usage = Usage(30, 20)
    script = [tools_reply("echo", usage=usage), final(usage=usage)]
    result, _ = run(script, Limits(max_total_tokens=limit))
    assert result.status == status
    assert result.calls == 2
    assert result.usage["total_tokens"] == 100
    if status == "failed":
        assert code(result) == "token_budget_exceeded"


def test_max_total_tokens_before_a_call():
    """The totals reached the limit: the next call is not made."""
    usage = Usage(30, 20)
    script = [tools_reply("echo", usage=usage), tools_reply("echo", usage=usage), final()]
    result, model = run(script, Limits(max_total_tokens=100))
    assert code(result) == "token_budget_exceeded"
    assert result.calls == len(model.requests) == 2


@pytest.mark.parametrize(("limit", "status"), [(0.5, "completed"), (0.49, "failed")])
def test_max_cost_after_a_call(limit, status):
    usage = Usage(1, 1, cost_usd=0.25)
    script = [tools_reply("echo", usage=usage), final(usage=usage)]
    result, _ = run(script, Limits(max_cost_usd=limit))
    assert result.status == status
    assert result.usage["cost_usd"] == 0.5
    if status == "failed":
        assert code(result) == "cost_budget_exceeded"


def test_max_cost_before_a_call():
    usage = Usage(1, 1, cost_usd=0.25)
    script = [tools_reply("echo", usage=usage), tools_reply("echo", usage=usage), final()]
    result, model = run(script, Limits(max_cost_usd=0.5))
    assert code(result) == "cost_budget_exceeded"
    assert len(model.requests) == 2


@pytest.mark.parametrize(
    ("limits", "usage", "status"),
    [
        (Limits(max_total_tokens=1000), None, "failed"),
        (Limits(max_cost_usd=1.0), Usage(5, 5), "failed"),  # no cost reported
        (Limits(max_total_tokens=1000), Usage(5, 5), "completed"),  # no cost needed
        (Limits(), None, "completed"),  # no limit needs usage
    ],
)
def test_usage_missing_only_when_a_limit_needs_it(limits, usage, status):
    from roleplay.workflows.engine.runtime import ModelReply

    result, _ = run([ModelReply("done", (), usage, "fake")], limits)
    assert result.status == status
    if status == "failed":
        assert code(result) == "usage_missing"


@pytest.mark.parametrize(("seconds", "status"), [(1.0, "completed"), (1.001, "failed")])
def test_timeout_on_the_injected_clock(seconds, status):
    result, _ = run([final()], Limits(timeout_ms=1000), seconds=seconds)
    assert result.status == status
    if status == "failed":
        assert code(result) == "timeout"
        assert result.final is None


@pytest.mark.parametrize(("timeout_ms", "status"), [(2000, "completed"), (1999, "failed")])
def test_timeout_counts_from_the_run_start(timeout_ms, status):
    result, model = run([tools_reply("echo"), final()], Limits(timeout_ms=timeout_ms), seconds=1)
    assert result.status == status
    assert len(model.requests) == 2
    if status == "failed":
        assert code(result) == "timeout"


def test_no_call_starts_at_the_deadline():
    """A model call that ends exactly at the deadline is kept, but nothing starts after it:
    neither its tool batch nor the next call."""
    echo = Echo()
    script = [tools_reply("echo"), final()]
    result, model = run(script, Limits(timeout_ms=1000), seconds=1, echo=echo)
    assert code(result) == "timeout"
    assert result.calls == len(model.requests) == 1
    assert echo.seen == [] and result.tool_results == []


def test_a_late_reply_still_counts_its_usage():
    result, _ = run([final(usage=Usage(7, 3))], Limits(timeout_ms=1000), seconds=2)
    assert code(result) == "timeout"
    assert result.usage["total_tokens"] == 10 and result.calls == 1
