"""Dealing a goal for the turn (seed 002, ``NarrativeDealBeatTool``; no model): among the
unfinished goals whose prerequisites are all done, by priority, then a reward the line still
owes, then the line that went longest without progress, then what fits the event's phase,
then a goal not dealt before. When the last ``dealEveryTurns`` deals all served one line and
the other has an eligible goal, the other line is dealt (forced rotation). Nothing eligible
→ no goal: an unprepared reward is never forced in."""

from __future__ import annotations

from dataclasses import dataclass, field

from .goals import Goal
from .ids import id_order
from .policy import NarrativePolicy

PHASES = ("start", "develop", "end")
# The angles that fit each phase of an event best (a tie-breaker, never a filter).
PHASE_FIT = {
    "start": ("character", "relationship"),
    "develop": ("conflict", "relationship", "reveal"),
    "end": ("reveal", "reward"),
}


@dataclass
class DealState:
    recent_lines: list[str] = field(default_factory=list)  # newest last
    dealt: list[str] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"recentLines": list(self.recent_lines), "dealt": list(self.dealt)}

    @classmethod
    def from_json(cls, data: dict) -> DealState:
        return cls(list(data.get("recentLines") or []), list(data.get("dealt") or []))


@dataclass(frozen=True)
class Dealt:
    goal: Goal | None
    fresh: bool
    forced_rotation: bool
    bias: str | None  # preferBackgroundKind: "conflict", "progress" or None


def eligible(goals: list[Goal], completed: frozenset[str] | set[str] = frozenset()) -> list[Goal]:
    done = {g.id for g in goals if g.done} | set(completed)
    return [g for g in goals if not g.done and all(p in done for p in g.prerequisites)]


def deal(
    goals: list[Goal],
    phase: str,
    state: DealState,
    policy: NarrativePolicy,
    *,
    starve: dict[str, int] | None = None,
    unpaid: dict[str, int] | None = None,
    completed: set[str] | None = None,
) -> tuple[Dealt, DealState]:
    """The goal for this turn and the deal state to save with it (``state`` is not changed)."""
    if phase not in PHASES:
        raise ValueError(f"phase must be one of {', '.join(PHASES)}")
    starve, unpaid = starve or {}, unpaid or {}
    candidates = eligible(goals, completed or set())
    forced = False
    window = state.recent_lines[-policy.dealEveryTurns :]
    if len(window) >= policy.dealEveryTurns and len(set(window)) == 1:
        others = [g for g in candidates if g.serves != window[0]]
        if others:
            candidates, forced = others, True
    if not candidates:
        return Dealt(None, False, False, None), DealState(
            list(state.recent_lines), list(state.dealt)
        )

    def rank(goal: Goal) -> tuple:
        owes = goal.angle == "reward" and unpaid.get(goal.serves, 0) > 0
        return (
            -goal.priority,
            0 if owes else 1,
            -starve.get(goal.serves, 0),
            0 if goal.angle in PHASE_FIT[phase] else 1,
            1 if goal.id in state.dealt else 0,
            id_order(goal.id),
        )

    goal = min(candidates, key=rank)
    fresh = goal.id not in state.dealt
    recent = (state.recent_lines + [goal.serves])[-policy.dealEveryTurns :]
    dealt = state.dealt + ([goal.id] if fresh else [])
    bias = (
        "conflict"
        if goal.angle == "conflict"
        else "progress"
        if goal.angle in ("reveal", "reward")
        else None
    )
    return Dealt(goal, fresh, forced, bias), DealState(recent, dealt)
