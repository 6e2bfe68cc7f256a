"""Re-aiming a story line (seed 002, ``NarrativeRebranchTool``): ``main`` toward the user's
confirmed new pursuit (a direction is required), or ``sub`` replaced after it starved. The
model proposes the line's theme, direction and expected experience; the program keeps the
facts (settled events, completed goals) and the unpaid promises, resets the line's
starvation and asks for a new plan. Unfinished goals of the old line are kept. Re-aiming the
main line answers the pursuits recorded so far: they are cleared, so the next rebranch needs
``branchConsecutiveEvents`` more settled events with a new pursuit."""

from __future__ import annotations

import copy

from .initialise import InitInvalid, clean_text
from .narrative import Narrative

FIELDS = {"theme", "direction", "expected", "continuity"}


class RebranchInvalid(ValueError):
    code = "story_rebranch_invalid"


def rebranch(
    narrative: Narrative, scope: str, proposal: object, direction: str | None = None
) -> Narrative:
    if scope not in ("main", "sub"):
        raise RebranchInvalid("scope must be main or sub")
    if scope == "main" and not (direction or "").strip():
        raise RebranchInvalid("a main rebranch needs a direction")
    if not isinstance(proposal, dict) or set(proposal) - FIELDS:
        raise RebranchInvalid(f"a rebranch has only these fields: {', '.join(sorted(FIELDS))}")
    try:
        theme = clean_text(proposal.get("theme"), "theme")
        new_direction = clean_text(proposal.get("direction"), "direction")
    except InitInvalid as exc:
        raise RebranchInvalid(str(exc)) from exc
    expected = proposal.get("expected") or ""
    if not isinstance(expected, str):
        raise RebranchInvalid("expected must be a string")
    after = copy.deepcopy(narrative)
    line = after.line(scope)
    line.theme, line.direction, line.expected = theme, new_direction, expected.strip()[:500]
    line.starve = 0
    if scope == "main":
        after.clock.recentDirections = []
    after.cycle.needPlan = True
    return after
