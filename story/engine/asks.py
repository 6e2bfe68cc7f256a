"""The two readings a turn asks of models before its stage (seed 002, Story): the user's
action (``story_action``: ``normal``, a ``cue`` or a ``signal`` with a legal target, and for
those whether the companion goes along) and, when the cycle needs one and nothing blocks,
the plan (``story_plan``: 5–7 goals and the cycle's emotion target). Either failing in a way
a retry may fix leaves the turn as it was (``normal``, no new plan) with a diagnostic; an
unrecoverable model failure is raised (``tools.tolerated``)."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from . import tools
from .emotion import with_target
from .goals import PlanInvalid, merge_plan
from .narrative import Narrative
from .prepare import ActionInvalid
from .prepare import read_action as legal_action
from .world import World

if TYPE_CHECKING:
    from .coordinator import Preparation, Request


async def read_action(
    world: World, action: dict, req: Request, models: tools.Models, prep: Preparation
) -> dict:
    """A free text with somewhere to go is read by the action model (cue / signal need a
    legal target); anything else, or a failure, is ``normal``."""
    text = action.get("text") or ""
    targets = [{"id": b.id, "title": b.title, "kind": "cue"} for b in world.backgrounds]
    targets += [
        {"id": u.id, "title": u.title, "kind": "cue"} for u in world.undercurrents if u.stage >= 2
    ]
    targets += [
        {"id": i["id"], "title": i.get("title", ""), "kind": "signal"}
        for i in world.pendingInjections
        if i.get("kind") == "invitation" and "id" in i
    ]
    if action.get("type") != "free" or not text.strip() or not targets or req.kind == "continue":
        return action

    def check(data: Any) -> dict:
        intent = {"kind": data["kind"]}
        if data["kind"] != "normal":
            intent["targetId"] = data.get("targetId")
            if isinstance(data.get("companionFollows"), bool):
                intent["companionFollows"] = data["companionFollows"]
        chosen = {"type": "intent", "text": text, "intent": intent}
        legal_action(world, chosen)
        return chosen

    material = tools.user_text(
        scene=world.foreground.title,
        targets=targets,
        companion=req.character_name,
        setting=req.source.render(),
        user_action=text,
    )
    try:
        return await tools.call(
            models,
            prep.log,
            "story_action",
            material,
            check,
        )
    except (tools.ToolInvalid, tools.ModelUnavailable, ActionInvalid) as exc:
        tools.tolerated(exc)
        prep.diagnostics.append(f"story_action_failed: {getattr(exc, 'code', exc)}")
        return action


async def plan(
    narrative: Narrative, req: Request, models: tools.Models, prep: Preparation
) -> Narrative:
    def check(data: Any) -> Narrative:
        goals, number = merge_plan(
            narrative.cycle.pending, data["goals"], req.narrative_policy, narrative.nextGoal
        )
        after = copy.deepcopy(narrative)
        after.cycle.pending, after.nextGoal, after.cycle.needPlan = goals, number, False
        if data.get("emotion") is not None:  # the feeling this cycle aims for
            after.emotion = with_target(after.emotion, data["emotion"])
        return after

    material = tools.user_text(
        main={
            "theme": narrative.main.theme,
            "direction": narrative.main.direction,
            "unpaid": narrative.main.unpaid,
        },
        sub={
            "theme": narrative.sub.theme,
            "direction": narrative.sub.direction,
            "unpaid": narrative.sub.unpaid,
        },
        kept_goals=[g.as_json() for g in narrative.cycle.pending if not g.done],
        observed_emotion=narrative.emotion.get("observed"),
        setting=req.source.render(),
        lore=req.lore,
    )
    try:
        return await tools.call(
            models,
            prep.log,
            "story_plan",
            material,
            check,
        )
    except (tools.ToolInvalid, tools.ModelUnavailable, PlanInvalid) as exc:
        tools.tolerated(exc)
        prep.diagnostics.append(f"story_plan_failed: {getattr(exc, 'code', exc)}")
        return narrative
