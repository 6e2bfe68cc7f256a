"""Step 2 of selection: which eligible entries are activated this turn, and why.

Sources, strongest reason first: ``required``, ``constant``, ``keyword`` (primary key in the
scan window, then the secondary-key logic), ``hybrid`` (an injected recall score at or above
the threshold) and ``sticky`` (a timed effect still running). Then up to
``max_recursion_rounds`` rounds let the text of newly activated entries activate others
(``recursion``), when both sides allow it.

The scan window is the last ``scan_depth`` messages of history plus the query (the query is
one message). Each message is scanned on its own, so a key never matches across a message
boundary, and each hit remembers how far back its message is; an entry with its own
``scan_depth`` simply keeps the hits within its depth. Depth 0 turns window scanning off for
that entry; recursion still scans entry text, which is not part of the chat window.

``delay_until_recursion`` holds back keyword and hybrid activation only: a required, constant
or sticky entry is active from the first round, as the author asked for it unconditionally.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from worldbook.engine.entry import Entry
from worldbook.engine.matcher import CompiledBook, ScanHits, entry_of

Slot = tuple[int, int]  # (position of the book in the request, entry index in the book)

REQUIRED = "required"
CONSTANT = "constant"
KEYWORD = "keyword"
HYBRID = "hybrid"
STICKY = "sticky"
RECURSION = "recursion"


@dataclass(slots=True)
class Activation:
    """Why an entry is active and what the budget ordering needs to know about it."""

    reason: str
    round: int = 0
    keyword_hit: bool = False
    score: int = 0
    hybrid_score: float | None = None
    sticky: bool = False
    details: dict[str, Any] = field(default_factory=dict)


# The activation of most standing entries: active for being constant, and nothing more (no
# key in the window, no recall score, not sticky). Over 20 books they are a thousand a turn,
# all alike, so they share this one; it is never changed (``_own`` copies it first), and the
# budget recognises it to order such entries by a key fixed for the revision.
PLAIN_CONSTANT = Activation(CONSTANT)


@dataclass(slots=True)
class ActivationInput:
    books: list[CompiledBook]
    reasons: list[list[str | None]]  # eligibility per book and entry; None = eligible
    content_of: Callable[[Slot], str]  # prepared (substituted) content of an eligible entry
    standing: list[Slot]  # eligible entries that are required, constant or sticky
    sticky: set[Slot]
    messages: list[str]  # history contents then the query
    scan_depth: int
    max_rounds: int
    hybrid_scores: dict[tuple[str, str], float] | None
    hybrid_threshold: float


@dataclass(slots=True)
class ActivationResult:
    active: dict[Slot, Activation]
    near_misses: dict[Slot, dict[str, Any]]
    # Entries a primary key of which occurred in the window or in recursed text, eligible
    # or not: what a caller asking for the ``matched`` decisions sees.
    matched: set[Slot] = field(default_factory=set)


def secondary_ok(entry: Entry, hits: set[int] | None) -> bool:
    """The seed's secondary logic, applied only when selective and secondary keys exist."""
    if not entry.selective or not entry.secondary_keys:
        return True
    found = len(hits) if hits else 0
    total = len(entry.secondary_keys)
    if entry.logic == "and_any":
        return found >= 1
    if entry.logic == "and_all":
        return found >= total
    if entry.logic == "not_any":
        return found == 0
    return found < total


def match_score(entry: Entry, primary: set[int] | None, secondary: set[int] | None) -> int:
    """Keys matched, as inclusion-group scoring counts them (negated logics add nothing)."""
    score = len(primary) if primary else 0
    if secondary and entry.logic in ("and_any", "and_all"):
        score += len(secondary)
    return score


def window_hits(inp: ActivationInput) -> list[ScanHits]:
    """Per book, the key hits inside each entry's own scan window."""
    reversed_messages = inp.messages[::-1]
    lowered: list[str | None] = [None] * len(reversed_messages)
    result: list[ScanHits] = []
    for book in inp.books:
        depth_needed = min(
            max(inp.scan_depth, book.max_scan_depth_override), len(reversed_messages)
        )
        codes: set[int] = set()
        uniform = book.max_scan_depth_override < 0
        for back in range(depth_needed):
            text = reversed_messages[back]
            low = lowered[back]
            if low is None:
                low = lowered[back] = text.lower()
            found = book.scan_codes(text, low)
            if uniform:
                codes |= found
                continue
            entries = book.entries
            for code in found:
                depth = entries[entry_of(code)].scan_depth
                if back < (inp.scan_depth if depth is None else depth):
                    codes.add(code)
        result.append(ScanHits.from_codes(codes))
    return result


def _keys(keys: Sequence[str], found: set[int] | None) -> list[str]:
    return [keys[i] for i in sorted(found)] if found else []


def activate(inp: ActivationInput) -> ActivationResult:
    hits = window_hits(inp)
    active: dict[Slot, Activation] = {}
    near: dict[Slot, dict[str, Any]] = {}

    def hit_info(slot: Slot) -> tuple[set[int] | None, set[int] | None]:
        b, i = slot
        return hits[b].primary.get(i), hits[b].secondary.get(i)

    sticky = inp.sticky
    for slot in inp.standing:
        entry = inp.books[slot[0]].entries[slot[1]]
        if not entry.required and not entry.group and not hits[slot[0]].primary.get(slot[1]):
            # Most standing entries (constants): no primary key in the window, so no keyword
            # hit; and outside an inclusion group, the one place a score counts.
            if slot in sticky:
                active[slot] = Activation(CONSTANT if entry.constant else STICKY, sticky=True)
            else:
                active[slot] = PLAIN_CONSTANT if entry.constant else Activation(STICKY)
            continue
        primary, secondary = hit_info(slot)
        keyword_hit = bool(primary) and secondary_ok(entry, secondary)
        reason = REQUIRED if entry.required else CONSTANT if entry.constant else STICKY
        if reason == STICKY and keyword_hit and not entry.recursion_level:
            reason = KEYWORD
        active[slot] = Activation(
            reason,
            keyword_hit=keyword_hit,
            score=match_score(entry, primary, secondary),
            sticky=slot in inp.sticky,
            details={"keys": _keys(entry.keys, primary)} if reason == KEYWORD else {},
        )

    for b, book in enumerate(inp.books):
        reasons = inp.reasons[b]
        for i, primary in hits[b].primary.items():
            slot = (b, i)
            if slot in active or reasons[i] is not None:
                continue
            entry = book.entries[i]
            secondary = hits[b].secondary.get(i)
            if entry.recursion_level:
                continue  # waits for a recursion round
            if not secondary_ok(entry, secondary):
                near[slot] = {
                    "primary_keys": _keys(entry.keys, primary),
                    "secondary_logic": entry.logic,
                    "secondary_keys": _keys(entry.secondary_keys, secondary),
                }
                continue
            active[slot] = Activation(
                KEYWORD,
                keyword_hit=True,
                score=match_score(entry, primary, secondary),
                details={"keys": _keys(entry.keys, primary)},
            )

    _hybrid(inp, active)
    for slot in inp.sticky:
        if slot in active:
            _own(active, slot).sticky = True
    seen = _recurse(inp, hits, active, near)
    matched = {(b, i) for b, book_hits in enumerate(hits) for i in book_hits.primary}
    matched.update((b, i) for b, primary in enumerate(seen) for i in primary)
    return ActivationResult(active, near, matched)


def _hybrid(inp: ActivationInput, active: dict[Slot, Activation]) -> None:
    if not inp.hybrid_scores:
        return
    positions = {book.book_id: b for b, book in enumerate(inp.books)}
    for (book_id, entry_id), score in inp.hybrid_scores.items():
        b = positions.get(book_id)
        if b is None:
            continue
        book = inp.books[b]
        i = book.index.get(entry_id)
        if i is None or inp.reasons[b][i] is not None:
            continue
        slot = (b, i)
        if slot in active:
            _own(active, slot).hybrid_score = float(score)
            continue
        entry = book.entries[i]
        if score < inp.hybrid_threshold or entry.recursion_level:
            continue
        if not entry.keys and not entry.vectorized:
            continue  # keyless entries join hybrid recall only when marked vectorized
        active[slot] = Activation(
            HYBRID, hybrid_score=float(score), details={"score": round(float(score), 6)}
        )


def _own(active: dict[Slot, Activation], slot: Slot) -> Activation:
    """The slot's activation, made its own first if it is the shared one."""
    act = active[slot]
    if act is PLAIN_CONSTANT:
        act = active[slot] = Activation(CONSTANT)
    return act


def _recurse(
    inp: ActivationInput,
    window: list[ScanHits],
    active: dict[Slot, Activation],
    near: dict[Slot, dict[str, Any]],
) -> list[dict[int, set[int]]]:
    """Extra rounds: text of newly active entries (unless ``prevent_recursion``) can activate
    entries that allow it (``exclude_recursion`` false); entries delayed until recursion
    level L may also fire from their window hits from round L on. Returns, per book, the
    primary keys found in recursed text."""
    newly = list(active)
    seen_primary: list[dict[int, set[int]]] = [{} for _ in inp.books]
    seen_secondary: list[dict[int, set[int]]] = [{} for _ in inp.books]
    delayed = [
        (b, i)
        for b, book in enumerate(inp.books)
        for i in window[b].primary
        if inp.reasons[b][i] is None and book.entries[i].recursion_level and (b, i) not in active
    ]
    for round_no in range(1, inp.max_rounds + 1):
        texts = [
            inp.content_of(slot)
            for slot in newly
            if not inp.books[slot[0]].entries[slot[1]].prevent_recursion
        ]
        if not texts:
            return seen_primary
        text = "\n".join(texts)
        low = text.lower()
        candidates: dict[Slot, str] = {}
        for b, book in enumerate(inp.books):
            found = ScanHits.from_codes(book.scan_codes(text, low))
            for store, new in (
                (seen_primary[b], found.primary),
                (seen_secondary[b], found.secondary),
            ):
                for i, keys in new.items():
                    store.setdefault(i, set()).update(keys)
            for i in found.primary:
                entry = book.entries[i]
                if inp.reasons[b][i] is None and not entry.exclude_recursion:
                    if entry.recursion_level <= round_no:
                        candidates[(b, i)] = "content"
        for slot in delayed:
            entry = inp.books[slot[0]].entries[slot[1]]
            if entry.recursion_level <= round_no:
                candidates.setdefault(slot, "window")
        newly = []
        for slot in sorted(candidates):
            if slot in active:
                continue
            b, i = slot
            entry = inp.books[b].entries[i]
            primary = _union(window[b].primary.get(i), seen_primary[b].get(i))
            secondary = _union(window[b].secondary.get(i), seen_secondary[b].get(i))
            if not secondary_ok(entry, secondary):
                near[slot] = {
                    "primary_keys": _keys(entry.keys, primary),
                    "secondary_logic": entry.logic,
                    "secondary_keys": _keys(entry.secondary_keys, secondary),
                    "round": round_no,
                }
                continue
            near.pop(slot, None)
            active[slot] = Activation(
                RECURSION,
                round=round_no,
                keyword_hit=True,
                score=match_score(entry, primary, secondary),
                sticky=slot in inp.sticky,
                details={
                    "round": round_no,
                    "source": candidates[slot],
                    "keys": _keys(entry.keys, primary),
                },
            )
            newly.append(slot)
    return seen_primary


def _union(a: set[int] | None, b: set[int] | None) -> set[int] | None:
    if a and b:
        return a | b
    return a or b
