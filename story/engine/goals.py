"""Narrative goals and a plan's merge (seed 002, ``NarrativePlanCycleTool``): a plan adds
``planMin``..``planMax`` new goals, at least ``planMinSub`` serving the sub line, and keeps
every unfinished goal. The model proposes; the program assigns ids, never lets a proposal
complete a goal, and requires a reward goal to depend on an explicit setup goal (a goal that
is not itself a reward)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Literal

from .policy import NarrativePolicy

Line = Literal["main", "sub"]
LINES: tuple[str, ...] = ("main", "sub")
ANGLES: tuple[str, ...] = ("character", "relationship", "conflict", "reveal", "reward")
GIST_CHARS = 500
PRIORITY_RANGE = (1, 5)


class PlanInvalid(ValueError):
    code = "story_plan_invalid"


@dataclass(frozen=True)
class Goal:
    id: str
    serves: Line
    angle: str
    gist: str
    reward: str = ""
    core: bool = False
    done: bool = False
    priority: int = 3
    prerequisites: tuple[str, ...] = ()

    def as_json(self) -> dict:
        data = asdict(self)
        data["prerequisites"] = list(self.prerequisites)
        return data

    @classmethod
    def from_json(cls, data: dict) -> Goal:
        return cls(**{**data, "prerequisites": tuple(data.get("prerequisites") or ())})


def merge_plan(
    pending: list[Goal], proposal: object, policy: NarrativePolicy, next_number: int
) -> tuple[list[Goal], int]:
    """The unfinished goals of ``pending`` followed by the proposal's goals, which get ids
    ``g<next_number>``, ``g<next_number+1>``…; (goals, the next free number). A proposal's
    prerequisites name its own goals by their ``ref`` or a kept goal by its id.
    :class:`PlanInvalid` says what is wrong; nothing is half-applied."""
    if not isinstance(proposal, list):
        raise PlanInvalid("the plan must be a list of goals")
    if not policy.planMin <= len(proposal) <= policy.planMax:
        raise PlanInvalid(f"a plan adds {policy.planMin} to {policy.planMax} goals")
    kept = [g for g in pending if not g.done]
    known = {g.id: g for g in pending}
    ids: dict[str, str] = {}
    for offset, item in enumerate(proposal):
        ref = item.get("ref") if isinstance(item, dict) else None
        if not isinstance(ref, str) or not ref.strip():
            raise PlanInvalid(f"goal {offset + 1}: ref is required")
        if ref in ids or ref in known:
            raise PlanInvalid(f"goal {offset + 1}: ref {ref!r} is not unique")
        ids[ref] = f"g{next_number + offset}"
    added = [_goal(item, ids, known) for item in proposal]
    if sum(1 for g in added if g.serves == "sub") < policy.planMinSub:
        raise PlanInvalid(f"at least {policy.planMinSub} new goal(s) must serve the sub line")
    everything = {g.id: g for g in kept + added}
    for goal in added:
        if goal.angle == "reward" and not any(
            pid in everything and everything[pid].angle != "reward" or _done_setup(pid, known)
            for pid in goal.prerequisites
        ):
            raise PlanInvalid(f"reward goal {goal.id} needs an explicit setup goal")
    _no_cycles(everything)
    return kept + added, next_number + len(added)


def _done_setup(goal_id: str, known: dict[str, Goal]) -> bool:
    goal = known.get(goal_id)
    return goal is not None and goal.done and goal.angle != "reward"


def _goal(item: dict, ids: dict[str, str], known: dict[str, Goal]) -> Goal:
    gid = ids[item["ref"]]
    serves, angle = item.get("serves"), item.get("angle")
    if serves not in LINES:
        raise PlanInvalid(f"{gid}: serves must be main or sub")
    if angle not in ANGLES:
        raise PlanInvalid(f"{gid}: angle must be one of {', '.join(ANGLES)}")
    gist = item.get("gist")
    if not isinstance(gist, str) or not gist.strip():
        raise PlanInvalid(f"{gid}: gist is required")
    priority = item.get("priority", 3)
    if isinstance(priority, bool) or not isinstance(priority, int):
        raise PlanInvalid(f"{gid}: priority must be an integer")
    prerequisites = item.get("prerequisites") or []
    if not isinstance(prerequisites, list) or not all(isinstance(p, str) for p in prerequisites):
        raise PlanInvalid(f"{gid}: prerequisites must be a list of refs")
    mapped = []
    for pid in prerequisites:
        target = ids.get(pid) or (pid if pid in known else None)
        if target is None:
            raise PlanInvalid(f"{gid}: unknown prerequisite {pid!r}")
        if target == gid:
            raise PlanInvalid(f"{gid}: a goal cannot depend on itself")
        mapped.append(target)
    low, high = PRIORITY_RANGE
    return Goal(
        id=gid,
        serves=serves,
        angle=angle,
        gist=gist.strip()[:GIST_CHARS],
        reward=str(item.get("reward") or "")[:GIST_CHARS],
        core=bool(item.get("core", False)),
        done=False,  # a plan never completes anything
        priority=min(max(priority, low), high),
        prerequisites=tuple(dict.fromkeys(mapped)),
    )


def _no_cycles(goals: dict[str, Goal]) -> None:
    state: dict[str, int] = {}  # 1 visiting, 2 done

    def visit(gid: str) -> None:
        if state.get(gid) == 2 or gid not in goals:
            return
        if state.get(gid) == 1:
            raise PlanInvalid(f"the prerequisites of {gid} form a cycle")
        state[gid] = 1
        for pid in goals[gid].prerequisites:
            visit(pid)
        state[gid] = 2

    for gid in goals:
        visit(gid)


def promotion_threshold(total: int) -> int:
    """ceil(total × 2/3): the completed goals a cycle needs before its promotion test."""
    return (2 * total + 2) // 3


def promotion_due(goals: list[Goal]) -> bool:
    total = len(goals)
    return total > 0 and sum(1 for g in goals if g.done) >= promotion_threshold(total)
