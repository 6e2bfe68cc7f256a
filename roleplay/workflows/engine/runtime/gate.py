"""The optional gate (seed ``002`` line 1399): asked once at the start of a run whether the
loop should run at all. A valid answer is ``{run: bool, reason?: str, confidence?: 0..1,
latencyMs?: ≥ 0}`` and nothing else; ``run: false`` skips the loop, its tools and the
commit (the run completes with the state kept and zero loop calls). An answer of another
shape, a gate that raises and a cancel are failures (``gate_invalid``, ``gate_failed``,
``cancelled``): an unreadable gate never silently runs or skips the loop.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from .ports import RunContext
from .result import RuntimeFailure
from .waits import race

Gate = Callable[[RunContext, asyncio.Event], Awaitable[Any] | Any]
GATE_KEYS = frozenset({"run", "reason", "confidence", "latencyMs"})


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def validate(answer: Any) -> dict[str, Any]:
    """The gate's answer as a plain dict, or ``gate_invalid`` naming what is wrong."""
    if not isinstance(answer, Mapping):
        raise RuntimeFailure("gate_invalid", "the gate's answer is not an object")
    unknown = sorted(str(k) for k in answer if k not in GATE_KEYS)
    if unknown:
        raise RuntimeFailure("gate_invalid", f"the gate's answer has unknown keys {unknown}")
    if not isinstance(answer.get("run"), bool):
        raise RuntimeFailure("gate_invalid", "the gate's answer needs a boolean run")
    if "reason" in answer and not isinstance(answer["reason"], str):
        raise RuntimeFailure("gate_invalid", "the gate's reason must be a string")
    if "confidence" in answer and not (
        _number(answer["confidence"]) and 0 <= answer["confidence"] <= 1
    ):
        raise RuntimeFailure("gate_invalid", "the gate's confidence must be a number from 0 to 1")
    if "latencyMs" in answer and not (_number(answer["latencyMs"]) and answer["latencyMs"] >= 0):
        raise RuntimeFailure("gate_invalid", "the gate's latencyMs must be a number ≥ 0")
    return dict(answer)


async def evaluate(
    gate: Gate, context: RunContext, cancel: asyncio.Event, seconds: float
) -> dict[str, Any]:
    """Ask the gate once (within ``seconds``, raced against ``cancel``); its validated
    answer."""
    if cancel.is_set():
        raise RuntimeFailure("cancelled", "cancelled before the gate")
    try:
        answer = gate(context, cancel)
        if inspect.isawaitable(answer):
            answer = await race(answer, cancel, seconds)
    except (asyncio.CancelledError, RuntimeFailure):
        raise
    except Exception as exc:
        raise RuntimeFailure("gate_failed", f"the gate failed: {exc}") from exc
    if cancel.is_set():
        raise RuntimeFailure("cancelled", "cancelled during the gate")
    return validate(answer)
