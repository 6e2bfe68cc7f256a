"""Per-entry decisions: one record for every entry of every book, rendered on demand.

A 5,000-entry book needs 5,000 decision records, and building them costs more than the whole
selection. The selection therefore keeps the compact facts (eligibility reasons, activation,
groups, drops) and renders the records the first time someone reads ``decisions``; the
result is identical whenever it is rendered, because the facts are frozen by then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from worldbook.engine.activation import Activation, Slot
from worldbook.engine.budget import BUDGET_DROPPED, Drop
from worldbook.engine.eligibility import DISABLED, EligibilityContext
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.groups import GROUP_LOST
from worldbook.engine.matcher import CompiledBook
from worldbook.engine.revision import NOT_TRIGGERED, revision_view
from worldbook.engine.verdicts import BookVerdicts

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
    matched: set[Slot] = field(default_factory=set)  # a primary key occurred (activation)


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
    """Decision records in book order, then entry order.

    Every record starts as a copy of the revision's common-case record (``not_triggered``,
    empty details); then only the entries that need more (eligibility failures, activation,
    drops, near misses) are patched in place, which keeps the keys in their documented order.
    """
    out: list[dict[str, Any]] = []
    special: dict[int, set[int]] = {}
    for slots in (facts.selected, facts.lost, facts.drops, facts.active, facts.near):
        for b, i in slots:
            special.setdefault(b, set()).add(i)
    for b, book in enumerate(facts.books):
        verdicts = facts.verdicts[b]
        records = [base.copy() for base in revision_view(book, facts.revisions[b]).decision_bases()]
        for record in records:
            record["details"] = {}
        patched = special.get(b, set())
        reasons = verdicts.reasons
        for i in verdicts.failed:
            if i not in patched:
                record = records[i]
                reason = record["reason"] = reasons[i]
                if reason != DISABLED:
                    details = verdicts.details_for(facts.ctx, book, i)
                    if details:
                        record["details"] = dict(details)
        for i in patched:
            record = records[i]
            record["selected"] = (b, i) in facts.selected
            record["reason"], record["details"] = _decision(facts, b, i)
        out.extend(records)
    return out


def notable(facts: DecisionFacts, limit: int) -> list[dict[str, Any]]:
    """The records of entries that were not selected for a reason worth showing (anything
    but not triggered or disabled), at most ``limit``, in book and entry order, without
    rendering every entry's record: what a turn's trace lists."""
    out: list[dict[str, Any]] = []
    if limit <= 0:
        return out
    for b in range(len(facts.books)):
        verdicts = facts.verdicts[b]
        candidates: set[int] = {i for i in verdicts.failed if verdicts.reasons[i] != DISABLED}
        for slots in (facts.lost, facts.drops, facts.active, facts.near):
            candidates.update(i for bb, i in slots if bb == b)
        for i in sorted(candidates):
            if (b, i) in facts.selected:
                continue
            reason, details = _decision(facts, b, i)
            if reason == NOT_TRIGGERED:
                continue
            out.append(_record(facts, b, i, False, reason, details))
            if len(out) >= limit:
                return out
    return out


def slots_for(facts: DecisionFacts, detail: str) -> list[Slot]:
    """The entries whose records a ``detail`` other than ``all`` keeps, in book and entry
    order (see ``SelectRequest.decisions``)."""
    if detail == "none":
        return []
    chosen = set(facts.selected)
    if detail == "matched":
        for slots in (facts.active, facts.lost, facts.drops, facts.near, facts.matched):
            chosen.update(slots)
    return sorted(chosen)


def render_slots(facts: DecisionFacts, slots: list[Slot]) -> list[dict[str, Any]]:
    """The records of just these entries, equal to theirs in :func:`render`."""
    out = []
    for b, i in slots:
        reason, details = _decision(facts, b, i)
        out.append(_record(facts, b, i, (b, i) in facts.selected, reason, details))
    return out


def _record(
    facts: DecisionFacts, b: int, i: int, selected: bool, reason: str, details: dict[str, Any]
) -> dict[str, Any]:
    """One record built on its own, keys in :func:`render`'s order: a few records must not
    make the revision keep a cached record for every one of its entries."""
    book = facts.books[b]
    return {
        "book_id": book.book_id,
        "revision": facts.revisions[b],
        "entry_id": book.ids[i],
        "title": book.titles[i],
        "selected": selected,
        "reason": reason,
        "details": details,
    }


def renderer(facts: DecisionFacts, detail: str = "all") -> Callable[[], list[dict[str, Any]]]:
    """The lazy renderer a result calls on first access to ``decisions``: for ``all``, one
    tracked dict per entry in a burst, so with the collector paused (see :mod:`.gc_pause`;
    measured through the Django test client, the collector otherwise tripled its time per
    request)."""

    def run() -> list[dict[str, Any]]:
        if detail != "all":
            return render_slots(facts, slots_for(facts, detail))
        with paused_gc():
            return render(facts)

    return run
