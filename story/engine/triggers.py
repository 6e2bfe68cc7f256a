"""What follows a settled event (seed 002, Story, narrative policy): the next actions the
coordinator runs and the diagnostics it records.

- the same explicit new pursuit in the last ``branchConsecutiveEvents`` settled events →
  ``rebranch`` of the main line toward it, unless it is the main line's direction already
  (a rebranch clears the recorded pursuits, so one sustained pursuit asks once);
- the sub line without progress for ``subStarveEvents`` settled events → ``rebranch`` of the
  sub line;
- the main line without progress for ``mainStarveEvents`` → a diagnostic only (the user's
  pursuit is never changed for them);
- a plan needed → ``plan-cycle``.
An ``unknown`` settlement is not "no progress": it never reaches these counters.
"""

from __future__ import annotations

import unicodedata

from .policy import NarrativePolicy


def normal_direction(text: str | None) -> str:
    """A pursuit compared loosely: NFKC, case-folded, spaces collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text or "").casefold().split())


def after_settlement(
    *,
    main_starve: int,
    sub_starve: int,
    directions: list[str | None],
    need_plan: bool,
    policy: NarrativePolicy,
    main_direction: str = "",
) -> tuple[list[dict], list[str]]:
    """``directions``: the explicit new pursuit each settled event recorded (None or "" when
    none), oldest first, since the main line was last re-aimed; ``main_direction`` the main
    line's direction now. (actions, diagnostics)."""
    actions: list[dict] = []
    diagnostics: list[str] = []
    recent = directions[-policy.branchConsecutiveEvents :]
    wanted = {normal_direction(d) for d in recent}
    sustained = len(recent) == policy.branchConsecutiveEvents and len(wanted) == 1
    if sustained and "" not in wanted and wanted != {normal_direction(main_direction)}:
        actions.append(
            {"type": "rebranch", "scope": "main", "direction": (recent[-1] or "").strip()}
        )
    elif sub_starve >= policy.subStarveEvents:
        actions.append({"type": "rebranch", "scope": "sub"})
    if main_starve >= policy.mainStarveEvents:
        diagnostics.append("main_line_starving")
    if need_plan:
        actions.append({"type": "plan-cycle"})
    return actions, diagnostics
