"""What the Actor is given (seed 002, ``projectStoryStage``): one non-compressible system block
``[CURRENT STORY STAGE]`` with JSON ``{stage, narrative}``: the current event and its phase,
the user's action to answer, the consequences now in the scene, the surfaced undercurrents
as hints of their kind only (atmosphere, signs, an invitation), whether the companion follows
a turn to another scene, the dealt goal, the lines' directions and the emotion guide. Never
the seeds, the counters, the dice or a hidden undercurrent's record."""

from __future__ import annotations

import json

from .deal import Dealt
from .emotion import guide
from .narrative import Narrative
from .world import World

HEADER = "[CURRENT STORY STAGE]"
HINT_KIND = {1: "atmosphere", 2: "sign", 3: "invitation"}
BIASES = (None, "conflict", "progress")


def project(
    world: World,
    narrative: Narrative,
    dealt: Dealt,
    surfaced: list[str],
    user_action: str,
    bias: str | None = None,
    companion_follows: bool | None = None,
) -> dict:
    """``{stage, narrative}`` for the Actor. ``bias`` (``conflict``/``progress``) tilts what
    the scene leans on between equal candidates; ``companion_follows`` (a turn to another
    scene only) says whether the companion goes along. The result is saved with the prepared
    turn."""
    if bias not in BIASES:
        raise ValueError("bias must be conflict, progress or none")
    by_id = {u.id: u for u in world.undercurrents}
    hints = [
        {"kind": HINT_KIND[by_id[uid].stage], "text": by_id[uid].title}
        for uid in surfaced
        if uid in by_id
    ]
    demand = world.pendingSignalDemand
    stage = {
        "event": {"title": world.foreground.title, "phase": world.foreground.phase},
        "userAction": user_action,
        "inScene": [
            {"kind": i.get("kind", "consequence"), "text": i.get("title", "")}
            for i in world.pendingInjections
        ],
        "hints": hints,
        "invitation": demand["title"] if demand else None,
        "lean": bias or dealt.bias,
    }
    if companion_follows is not None:
        stage["companionFollows"] = companion_follows
    goal = dealt.goal
    story = {
        "goal": None
        if goal is None
        else {"gist": goal.gist, "angle": goal.angle, "serves": goal.serves, "reward": goal.reward},
        "mainDirection": narrative.main.direction,
        "subDirection": narrative.sub.direction,
        "emotionGuide": guide(narrative.emotion),
    }
    return {"stage": stage, "narrative": story}


def render(projection: dict) -> str:
    return HEADER + "\n" + json.dumps(projection, ensure_ascii=False, sort_keys=True)
