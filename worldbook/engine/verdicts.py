"""Eligibility of a whole book per request, with the request-independent part done once.

:func:`~worldbook.engine.eligibility.check_entry` is the reference semantics, one entry at a
time. Running it for each of 5,000 entries on every turn costs more than the rest of the
selection, yet for almost every entry the outcome depends on nothing but a handful of request
fields. So each compiled revision is profiled once into *cohorts*: entries whose verdict is a
function of (request audience, the request ``state`` through the same conditions, placement
capabilities) only. A cohort is judged once per request and every member shares the verdict;
each distinct condition is evaluated once, however many entries carry it.

An entry joins a cohort when nothing per-entry-and-request can decide its verdict before the
checks that the cohort key covers have run: no timed effects, ``probability`` 100 and no
template variables (or a failure decided earlier, by kind or runtime requirements). Everything
else (``other``) still goes through :func:`check_entry`.

Failure details of cohort members are produced on demand (:meth:`BookVerdicts.details_for`),
because only a decision rendering reads them.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any
from weakref import WeakKeyDictionary

from worldbook.engine.eligibility import (
    AUDIENCE_MISMATCH,
    CONDITION_FAILED,
    DISABLED,
    EMPTY_CONTENT,
    KIND_EXCLUDED,
    PLACEMENT_UNSUPPORTED,
    RUNTIME_BLOCKED,
    EligibilityContext,
    check_entry,
    condition_passes,
)
from worldbook.engine.entry import Entry
from worldbook.engine.matcher import CompiledBook
from worldbook.engine.placement import capability_for
from worldbook.engine.schema import SELECTABLE_KINDS, Condition
from worldbook.engine.timed import has_timed_effect


@dataclass(slots=True)
class Cohort:
    """Entries sharing one verdict per request (see the module docstring).

    ``terminal`` is the static failure met once audience and conditions pass (kind excluded,
    runtime blocked, empty content), or ``None`` when placement decides.
    """

    audience: frozenset[str]
    conditions: tuple[int, ...]  # ids into StaticProfile.conditions, in the entries' order
    terminal: str | None
    needed: str | None  # capability the members need when ``terminal`` is None
    members: list[int] = field(default_factory=list)
    standing: list[int] = field(default_factory=list)  # required or constant members
    required: list[int] = field(default_factory=list)


@dataclass(slots=True)
class StaticProfile:
    """The request-independent part of eligibility for one compiled revision."""

    disabled: list[int]
    cohorts: list[Cohort]
    other: list[int]  # entries judged one by one with check_entry
    conditions: list[Condition]  # distinct conditions (one representative each)
    condition_json: list[dict[str, Any]]
    cohort_of: list[int]  # per entry: its cohort's index, or -1


_profiles: WeakKeyDictionary[CompiledBook, StaticProfile] = WeakKeyDictionary()
_profiles_lock = threading.Lock()


def _cohort_key(
    entry: Entry, condition_ids: tuple[int, ...]
) -> tuple[tuple[int, ...], str | None, str | None] | None:
    """(conditions, terminal, needed) for an enabled entry, or ``None`` if it is "other"."""
    if entry.kind not in SELECTABLE_KINDS:
        return (), KIND_EXCLUDED, None  # decided right after the audience check
    if entry.runtime_requirements:
        return condition_ids, RUNTIME_BLOCKED, None  # decided right after the conditions
    if has_timed_effect(entry) or entry.probability < 100 or "{{" in entry.content:
        return None
    if not entry.content.strip():
        return condition_ids, EMPTY_CONTENT, None
    return condition_ids, None, capability_for(entry)


def build_profile(book: CompiledBook) -> StaticProfile:
    disabled: list[int] = []
    other: list[int] = []
    cohorts: dict[tuple[Any, ...], Cohort] = {}
    signatures: dict[tuple[str, str, str, str], int] = {}
    conditions: list[Condition] = []
    cohort_of = [-1] * len(book.entries)
    index_of: dict[int, int] = {}  # id(cohort) -> position in the final list
    for i, entry in enumerate(book.entries):
        if not entry.enabled:
            disabled.append(i)
            continue
        ids = []
        for condition in entry.conditions:
            # repr keeps 1, 1.0, True, [1] and (1,) apart, as the equality checks do.
            value = condition.value
            sig = (condition.path, condition.op, type(value).__name__, repr(value))
            cid = signatures.get(sig)
            if cid is None:
                cid = signatures[sig] = len(conditions)
                conditions.append(condition)
            ids.append(cid)
        key = _cohort_key(entry, tuple(ids))
        if key is None:
            other.append(i)
            continue
        audience = frozenset(entry.audience)
        full_key = (audience, *key)
        cohort = cohorts.get(full_key)
        if cohort is None:
            cohort = cohorts[full_key] = Cohort(audience, *key)
            index_of[id(cohort)] = len(index_of)
        cohort.members.append(i)
        if entry.required or entry.constant:
            cohort.standing.append(i)
        if entry.required:
            cohort.required.append(i)
        cohort_of[i] = index_of[id(cohort)]
    return StaticProfile(
        disabled,
        list(cohorts.values()),
        other,
        conditions,
        [c.model_dump(mode="json") for c in conditions],
        cohort_of,
    )


def profile_for(book: CompiledBook) -> StaticProfile:
    """The cached :class:`StaticProfile` of a compiled revision (built on first use)."""
    with _profiles_lock:
        found = _profiles.get(book)
    if found is not None:
        return found
    profile = build_profile(book)
    with _profiles_lock:
        _profiles[book] = profile
    return profile


@dataclass(slots=True)
class BookVerdicts:
    """Eligibility of every entry of one book: ``reasons[i] is None`` means eligible.

    ``details`` and ``contents`` are sparse: details of cohort-judged failures are derived by
    :meth:`details_for` when decisions are rendered, and an eligible entry without a prepared
    content uses its own ``content``.
    """

    reasons: list[str | None]
    details: dict[int, dict[str, Any]]
    contents: dict[int, str]
    sticky: set[int]
    standing: list[int]  # eligible entries that are required, constant or sticky
    required_unplaceable: list[int]
    profile: StaticProfile | None = None
    failed_condition: dict[int, int] = field(default_factory=dict)  # cohort -> position
    failed: list[int] = field(default_factory=list)  # entries with a reason, in no order

    def details_for(self, ctx: EligibilityContext, book: CompiledBook, i: int) -> dict[str, Any]:
        found = self.details.get(i)
        if found is not None:
            return found
        reason = self.reasons[i]
        if reason is None or reason == DISABLED:
            return {}
        cohort = self.profile.cohort_of[i] if self.profile is not None else -1
        if cohort < 0:
            return check_entry(ctx, book.book_id, book.ids[i], book.entries[i]).details
        return self._cohort_details(ctx, book.entries[i], reason, cohort)

    def _cohort_details(
        self, ctx: EligibilityContext, entry: Entry, reason: str, cohort: int
    ) -> dict[str, Any]:
        """The details :func:`check_entry` gives for the same failure."""
        assert self.profile is not None
        if reason == AUDIENCE_MISMATCH:
            return {"audience": ctx.audience, "allowed": list(entry.audience)}
        if reason == CONDITION_FAILED:
            position = self.failed_condition[cohort]
            cid = self.profile.cohorts[cohort].conditions[position]
            return {"index": position, "condition": copy_json(self.profile.condition_json[cid])}
        if reason == KIND_EXCLUDED:
            return {"kind": entry.kind}
        if reason == RUNTIME_BLOCKED:
            return {"runtime_requirements": list(entry.runtime_requirements)}
        if reason == PLACEMENT_UNSUPPORTED:
            return {"position": entry.position, "needs": capability_for(entry)}
        return {}


def copy_json(value: Any) -> Any:
    """A fresh copy of JSON-shaped data, so no two decision records share a container."""
    if isinstance(value, dict):
        return {k: copy_json(v) if isinstance(v, dict | list) else v for k, v in value.items()}
    if isinstance(value, list):
        return [copy_json(v) if isinstance(v, dict | list) else v for v in value]
    return value


def _judge(
    ctx: EligibilityContext, profile: StaticProfile, cohort: Cohort, passes: list[bool | None]
) -> tuple[str | None, int | None]:
    """A cohort's verdict, in check_entry's order; the failing condition's position too."""
    if ctx.audience not in cohort.audience:
        return AUDIENCE_MISMATCH, None
    for position, cid in enumerate(cohort.conditions):
        ok = passes[cid]
        if ok is None:
            ok = passes[cid] = condition_passes(profile.conditions[cid], ctx.state)
        if not ok:
            return CONDITION_FAILED, position
    if cohort.terminal is not None:
        return cohort.terminal, None
    if cohort.needed is None or cohort.needed not in ctx.capabilities:
        return PLACEMENT_UNSUPPORTED, None
    return None, None


def evaluate_book(ctx: EligibilityContext, book: CompiledBook) -> BookVerdicts:
    """Every entry's eligibility for this request; equal to check_entry entry by entry."""
    profile = profile_for(book)
    reasons: list[str | None] = [None] * len(book.entries)
    for i in profile.disabled:
        reasons[i] = DISABLED
    verdicts = BookVerdicts(reasons, {}, {}, set(), [], [], profile, failed=list(profile.disabled))
    passes: list[bool | None] = [None] * len(profile.conditions)
    for index, cohort in enumerate(profile.cohorts):
        reason, position = _judge(ctx, profile, cohort, passes)
        if reason is None:
            verdicts.standing.extend(cohort.standing)
            continue
        if position is not None:
            verdicts.failed_condition[index] = position
        if reason == PLACEMENT_UNSUPPORTED:
            verdicts.required_unplaceable.extend(cohort.required)
        for i in cohort.members:
            reasons[i] = reason
        verdicts.failed.extend(cohort.members)
    for i in profile.other:
        entry = book.entries[i]
        verdict = check_entry(ctx, book.book_id, book.ids[i], entry)
        reasons[i] = verdict.reason
        verdicts.details[i] = verdict.details
        if verdict.reason is not None:
            if entry.required and verdict.reason == PLACEMENT_UNSUPPORTED:
                verdicts.required_unplaceable.append(i)
            verdicts.failed.append(i)
            continue
        if verdict.content is not entry.content:
            verdicts.contents[i] = verdict.content
        if verdict.sticky:
            verdicts.sticky.add(i)
        if entry.required or entry.constant or verdict.sticky:
            verdicts.standing.append(i)
    verdicts.standing.sort()
    verdicts.required_unplaceable.sort()
    return verdicts
