"""Percentiles of timings (pure; ``memory`` may not import the runtime's bench helpers)."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


def percentile(values: Sequence[float], q: float) -> float | None:
    """Linear-interpolated ``q``-th percentile (0-100) of ``values``; None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100.0
    low, high = math.floor(rank), math.ceil(rank)
    return round(ordered[low] + (ordered[high] - ordered[low]) * (rank - low), 2)


def summary(values: Iterable[float]) -> dict:
    """``{n, p50, p95, max}`` of ``values`` (milliseconds, say)."""
    present = list(values)
    return {
        "n": len(present),
        "p50": percentile(present, 50),
        "p95": percentile(present, 95),
        "max": round(max(present), 2) if present else None,
    }
