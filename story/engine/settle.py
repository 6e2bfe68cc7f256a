"""Settling one event (seed 002, ``NarrativeSettleEventTool``): the model judges the event's
accepted prose; the program checks the judgement and applies it.

A proposal is ``{"outcome": "settled" | "unknown", "completedGoals": [{"id", "evidence"}],
"progress": {"main"|"sub": {"advance", "evidence"}}, "observed": {valence, arousal,
dominance}, "direction": str | null}``. Completing a goal and moving a line are separate, and
each needs evidence: message ids among the event's own, at least one of them the accepted
prose (the seed's "正文证据": a user's action says what was tried, the prose what happened).
A model can complete only pending goals and can touch no counter, id or capacity.
``unknown`` changes nothing and is not "no progress" (no starvation is counted); the caller
keeps the evidence and retries. A settled event advances ``clock.eventCount`` once; settling
it again is a ``duplicate``.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, replace

from .emotion import EmotionInvalid, axes
from .goals import promotion_due
from .narrative import AXES, RECENT_DIRECTIONS, SETTLED_KEPT, Narrative
from .policy import NarrativePolicy
from .triggers import after_settlement

FIELDS = {"outcome", "completedGoals", "progress", "observed", "direction"}
DIRECTION_CHARS = 300


class SettlementInvalid(ValueError):
    code = "story_settlement_invalid"


@dataclass(frozen=True)
class Settled:
    outcome: str  # "settled", "unknown" or "duplicate"
    narrative: Narrative
    actions: list[dict]
    diagnostics: list[str]


def settle_event(
    narrative: Narrative,
    event_id: str,
    proposal: object,
    evidence: Mapping[str, str],
    policy: NarrativePolicy,
) -> Settled:
    """Apply ``proposal`` for ``event_id`` (``evidence``: its pieces' message id -> kind);
    :class:`SettlementInvalid` when the proposal breaks a rule (nothing applied)."""
    if event_id in narrative.clock.settledEvents:
        return Settled("duplicate", narrative, [], [])
    if not isinstance(proposal, dict) or set(proposal) - FIELDS:
        raise SettlementInvalid("a settlement is an object with known fields only")
    if proposal.get("outcome") == "unknown":
        return Settled("unknown", narrative, [], ["settlement_unknown"])
    if proposal.get("outcome") != "settled":
        raise SettlementInvalid("outcome must be settled or unknown")
    completed = _completed(narrative, proposal.get("completedGoals") or [], evidence)
    progress = _progress(proposal.get("progress") or {}, evidence)
    observed = _observed(proposal.get("observed"))
    direction = proposal.get("direction")
    if direction is not None and not isinstance(direction, str):
        raise SettlementInvalid("direction must be a string or null")

    after = copy.deepcopy(narrative)
    goals = {g.id: g for g in after.cycle.pending}
    for gid in completed:
        goal = goals[gid]
        goals[gid] = replace(goal, done=True)
        line = after.line(goal.serves)
        if goal.angle == "reward" and line.unpaid:
            line.unpaid.pop(0)
        elif goal.reward:
            line.unpaid.append(goal.reward)
    after.cycle.pending = [goals[g.id] for g in after.cycle.pending]
    for name in ("main", "sub"):
        line = after.line(name)
        if progress.get(name):
            line.cursor, line.starve = line.cursor + 1, 0
        else:
            line.starve += 1
    if observed is not None:
        after.emotion["observed"] = observed
    clock = after.clock
    clock.eventCount += 1
    clock.settledEvents = (clock.settledEvents + [event_id])[-SETTLED_KEPT:]
    clock.completedGoals += [g for g in completed if g not in clock.completedGoals]
    clean = (direction or "").strip()[:DIRECTION_CHARS] or None
    clock.recentDirections = (clock.recentDirections + [clean])[-RECENT_DIRECTIONS:]
    diagnostics = _promotion(after, policy)
    actions, more = after_settlement(
        main_starve=after.main.starve,
        sub_starve=after.sub.starve,
        directions=clock.recentDirections,
        need_plan=after.cycle.needPlan,
        policy=policy,
        main_direction=after.main.direction,
    )
    return Settled("settled", after, actions, diagnostics + more)


def _completed(narrative: Narrative, items: object, evidence: Mapping[str, str]) -> list[str]:
    if not isinstance(items, list):
        raise SettlementInvalid("completedGoals must be a list")
    open_ids = {g.id for g in narrative.cycle.pending if not g.done}
    out: list[str] = []
    for item in items:
        gid = item.get("id") if isinstance(item, dict) else None
        if gid not in open_ids:
            raise SettlementInvalid(f"{gid!r} is not an open goal of this cycle")
        _evidence(item.get("evidence"), evidence, f"goal {gid}")
        if gid not in out:
            out.append(gid)
    return out


def _progress(data: object, evidence: Mapping[str, str]) -> dict[str, bool]:
    if not isinstance(data, dict) or set(data) - {"main", "sub"}:
        raise SettlementInvalid("progress names main and sub only")
    moved: dict[str, bool] = {}
    for name, item in data.items():
        if not isinstance(item, dict) or not isinstance(item.get("advance"), bool):
            raise SettlementInvalid(f"progress.{name} needs advance true or false")
        if item["advance"]:
            _evidence(item.get("evidence"), evidence, f"progress.{name}")
        moved[name] = item["advance"]
    return moved


def _evidence(ids: object, evidence: Mapping[str, str], where: str) -> None:
    if not isinstance(ids, list) or not ids:
        raise SettlementInvalid(f"{where} needs evidence")
    stray = [i for i in ids if not isinstance(i, str) or i not in evidence]
    if stray:
        raise SettlementInvalid(f"{where} cites {stray[0]!r}, which is not this event's evidence")
    if not any(evidence[i] == "prose" for i in ids):
        raise SettlementInvalid(
            f"{where} cites only the user's messages: cite the reply that shows it happened"
        )


def _observed(data: object) -> dict | None:
    if data is None:
        return None
    if not isinstance(data, dict) or set(data) != set(AXES):
        raise SettlementInvalid(f"observed needs {', '.join(AXES)}")
    try:
        return axes(data, "observed")
    except EmotionInvalid as exc:
        raise SettlementInvalid(str(exc)) from None


def _promotion(narrative: Narrative, policy: NarrativePolicy) -> list[str]:
    """The cycle's promotion test: begun once ceil(2n/3) goals are done; the cycle advances
    when its core goals (if it has any) are all done, or ``promotionWaitEvents`` more events
    have settled."""
    cycle, count = narrative.cycle, narrative.clock.eventCount
    if cycle.trialSince is None:
        if promotion_due(cycle.pending):
            cycle.trialSince = count
            return ["promotion_test_started"]
        return []
    cores = [g for g in cycle.pending if g.core]
    cores_done = bool(cores) and all(g.done for g in cores)
    if cores_done or count - cycle.trialSince >= policy.promotionWaitEvents:
        cycle.number += 1
        cycle.pending = [g for g in cycle.pending if not g.done]
        cycle.needPlan, cycle.trialSince = True, None
        return ["cycle_promoted"]
    return []
