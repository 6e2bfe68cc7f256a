"""Per-entry decisions: one record for every entry of every book, rendered on demand.

A 5,000-entry book needs 5,000 decision records, and building them costs more than the whole
selection. The selection therefore keeps the compact facts (eligibility reasons, activation,
groups, drops) and renders the records the first time someone reads ``decisions``; the
result is identical whenever it is rendered, because the facts are frozen by then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from worldbook.engine.activation import Activation, Slot
from worldbook.engine.budget import BUDGET_DROPPED, Drop
from worldbook.engine.eligibility import BookVerdicts, EligibilityContext
from worldbook.engine.groups import GROUP_LOST
from worldbook.engine.matcher import CompiledBook

NOT_TRIGGERED = "not_triggered"
DEPENDENCY = "dependency"


@dataclass(slots=True)
class DecisionFacts:
    """Everything the records are derived from, frozen at the end of a selection."""

    ctx: EligibilityContext
    books: list[CompiledBook]
    revisions: list[int]
    verdicts: list[BookVerdicts]
    selected: set[Slot]
    active: dict[Slot, Activation]  # after inclusion groups
    lost: dict[Slot, dict[str, str]]
    drops: dict[Slot, Drop]
    near: dict[Slot, dict[str, Any]]
    required_by: dict[Slot, list[str]]


def _decision(facts: DecisionFacts, b: int, i: int) -> tuple[str, dict[str, Any]]:
    """The most specific reason wins: selection, eligibility, group, drop, near miss."""
    slot = (b, i)
    verdicts = facts.verdicts[b]
    if slot in facts.selected:
        act = facts.active.get(slot)
        if act is None:
            return DEPENDENCY, {"required_by": list(facts.required_by.get(slot, []))}
        details = dict(act.details)
        if act.sticky:
            details.update(verdicts.details_for(facts.ctx, facts.books[b], i))
        return act.reason, details
    if verdicts.reasons[i] is not None:
        reason = verdicts.reasons[i]
        assert reason is not None
        return reason, dict(verdicts.details_for(facts.ctx, facts.books[b], i))
    if slot in facts.lost:
        return GROUP_LOST, dict(facts.lost[slot])
    if slot in facts.drops:
        return facts.drops[slot].reason, dict(facts.drops[slot].details)
    if slot in facts.active:
        return BUDGET_DROPPED, {}
    return NOT_TRIGGERED, dict(facts.near.get(slot, {}))


def render(facts: DecisionFacts) -> list[dict[str, Any]]:
    """Decision records in book order, then entry order."""
    out: list[dict[str, Any]] = []
    special = set(facts.selected) | set(facts.lost) | set(facts.drops) | set(facts.active)
    special |= set(facts.near)
    for b, book in enumerate(facts.books):
        revision = facts.revisions[b]
        reasons = facts.verdicts[b].reasons
        for i, entry in enumerate(book.entries):
            details: dict[str, Any]
            if reasons[i] is None and (b, i) not in special:
                reason, details = NOT_TRIGGERED, {}
            else:
                reason, details = _decision(facts, b, i)
            out.append(
                {
                    "book_id": book.book_id,
                    "revision": revision,
                    "entry_id": book.ids[i],
                    "title": entry.title,
                    "selected": (b, i) in facts.selected,
                    "reason": reason,
                    "details": details,
                }
            )
    return out


def renderer(facts: DecisionFacts) -> Callable[[], list[dict[str, Any]]]:
    return lambda: render(facts)
