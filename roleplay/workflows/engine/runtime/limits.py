"""The runtime's budget (seed ``002`` line 1394 on): steps, tool calls, batch size, time,
and optionally tokens and cost, with the seed's defaults. An operator's ``limits`` object
is read strictly (unknown keys, wrong types and values out of range are refused, never
clamped), and capped so a scenario cannot ask for an unbounded run.

Tokens and cost are checked *before* each model call on the running totals (no room left:
the call is not made) and *after* each call on its usage (the totals went over: the run
fails). One call can still take the totals past the limit; the limit stops the run there,
it is not a provider-side cap.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .result import RuntimeFailure

MAX_STEPS_CAP = 32
MAX_TOOL_CALLS_CAP = 128
MAX_PARALLEL_CAP = 16
TIMEOUT_MS_CAP = 900_000  # 15 minutes


@dataclass(frozen=True)
class Limits:
    max_steps: int = 4
    max_tool_calls: int = 8
    max_parallel_tools: int = 4
    timeout_ms: int = 180_000
    max_total_tokens: int | None = None
    max_cost_usd: float | None = None


class LimitsError(ValueError):
    """A ``limits`` object that is not valid: the message names the field."""


_INTS = {
    "maxSteps": ("max_steps", 1, MAX_STEPS_CAP),
    "maxToolCalls": ("max_tool_calls", 0, MAX_TOOL_CALLS_CAP),
    "maxParallelTools": ("max_parallel_tools", 1, MAX_PARALLEL_CAP),
    "timeoutMs": ("timeout_ms", 1, TIMEOUT_MS_CAP),
    "maxTotalTokens": ("max_total_tokens", 1, 100_000_000),
}


def limits_from(raw: Mapping[str, Any] | None) -> Limits:
    """``Limits`` from the seed's camelCase object; the defaults for what it leaves out."""
    if raw is None:
        return Limits()
    if not isinstance(raw, Mapping):
        raise LimitsError("limits must be an object")
    values: dict[str, Any] = {}
    for key, value in raw.items():
        if key in _INTS:
            name, low, high = _INTS[key]
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise LimitsError(f"limits.{key} must be an integer from {low} to {high}")
            values[name] = value
        elif key == "maxCostUsd":
            ok = isinstance(value, int | float) and not isinstance(value, bool)
            if not ok or not math.isfinite(value) or value <= 0:
                raise LimitsError("limits.maxCostUsd must be a positive number")
            values["max_cost_usd"] = float(value)
        else:
            raise LimitsError(f"limits.{key} is not a known limit")
    return Limits(**values)


@dataclass
class Totals:
    """The run's usage so far; ``cost_usd`` stays None until a call reports one."""

    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens

    def as_json(self) -> dict[str, Any]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "total_tokens": self.total_tokens,
            "cost_usd": self.cost_usd,
        }


def check_before_call(limits: Limits, totals: Totals) -> None:
    """No room left for another call: fail before making it."""
    if limits.max_total_tokens is not None and totals.total_tokens >= limits.max_total_tokens:
        raise RuntimeFailure(
            "token_budget_exceeded",
            f"{totals.total_tokens} tokens used, the limit is {limits.max_total_tokens}",
        )
    if limits.max_cost_usd is not None and (totals.cost_usd or 0.0) >= limits.max_cost_usd:
        raise RuntimeFailure(
            "cost_budget_exceeded",
            f"${totals.cost_usd or 0.0:g} spent, the limit is ${limits.max_cost_usd:g}",
        )


def add_usage(limits: Limits, totals: Totals, usage: Any) -> None:
    """Add one call's usage, then fail if a limit needs what it lacks or the totals are over
    a limit."""
    needs_tokens = limits.max_total_tokens is not None
    needs_cost = limits.max_cost_usd is not None
    if usage is None:
        if needs_tokens or needs_cost:
            raise RuntimeFailure("usage_missing", "the model reported no usage")
        return
    totals.input_tokens += usage.input_tokens
    totals.output_tokens += usage.output_tokens
    if usage.cost_usd is not None:
        totals.cost_usd = (totals.cost_usd or 0.0) + usage.cost_usd
    elif needs_cost:
        raise RuntimeFailure("usage_missing", "the model reported no cost; maxCostUsd needs it")
    if needs_tokens and totals.total_tokens > limits.max_total_tokens:  # type: ignore[operator]
        raise RuntimeFailure(
            "token_budget_exceeded",
            f"{totals.total_tokens} tokens used, over the limit of {limits.max_total_tokens}",
        )
    if needs_cost and (totals.cost_usd or 0.0) > limits.max_cost_usd:  # type: ignore[operator]
        raise RuntimeFailure(
            "cost_budget_exceeded",
            f"${totals.cost_usd:g} spent, over the limit of ${limits.max_cost_usd:g}",
        )
