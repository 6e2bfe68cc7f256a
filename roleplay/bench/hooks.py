"""What a bench run's turns spent in their context hooks, read back from the stored turns.

``turns.context.load_context`` records each hook's time in the turn's trace
(``hooks_ms``, by plug-in name). The memory hooks (learning from the input, the one-statement
memory read and the preferences placed, the pre-turn pack taken from Redis and placed) are
what memory costs a turn's critical path. Timed inside each real turn under the run's load,
and compared between players with memory on and off in the same run
(:func:`memory_comparison`), they tell what memory adds without comparing two runs' times
to first delta, which vary by far more than the 2 ms being measured.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from datetime import datetime

from memory.bench.stats import percentile
from roleplay.bench.stats import summary
from roleplay.models import Turn

MEMORY_HOOKS = ("memory_learning", "memory_context", "memory_pack")
GOAL_ADDED_P50_MS = 2.0


def hook_figures(conversation_ids: Iterable, *, before: datetime | None = None) -> dict:
    """The hooks' times of the conversations' turns (started before ``before``): the
    memory hooks' sum per turn, each hook's p50, and how the pre-turn pack reads went."""
    turns = Turn.objects.filter(conversation_id__in=list(conversation_ids))
    if before is not None:
        turns = turns.filter(started_at__lt=before)
    memory: list[float] = []
    by_hook: dict[str, list[float]] = {}
    pack_reads: Counter = Counter()
    for trace in turns.values_list("trace", flat=True):
        hooks = trace.get("hooks_ms") or {}
        for name, ms in hooks.items():
            by_hook.setdefault(name, []).append(ms)
        if any(name in hooks for name in MEMORY_HOOKS):
            memory.append(sum(hooks.get(name, 0.0) for name in MEMORY_HOOKS))
        status = (trace.get("memory_pack") or {}).get("status")
        if status:
            pack_reads[status] += 1
    return {
        "turns": len(memory),
        "memory_hooks_ms": summary(memory),
        "hook_p50_ms": {name: percentile(values, 50) for name, values in sorted(by_hook.items())},
        "pack_reads": dict(pack_reads),
    }


def memory_comparison(on: Iterable, off: Iterable, *, before: datetime | None = None) -> dict:
    """The memory hooks of the players with memory on against those with it off, in the
    same run (``bench_turns --memory-warm``): the difference of their p50s is what memory
    adds to a turn's critical path (goal: at most 2 ms)."""
    with_memory = hook_figures(on, before=before)
    without = hook_figures(off, before=before)
    high, low = with_memory["memory_hooks_ms"]["p50"], without["memory_hooks_ms"]["p50"]
    added = round(high - low, 2) if high is not None and low is not None else None
    return {
        "memory_on": with_memory,
        "memory_off": without,
        "added_p50_ms": added,
        "goal": {"added_p50_ms": GOAL_ADDED_P50_MS},
        "meets_goal": added is not None and added <= GOAL_ADDED_P50_MS,
    }
