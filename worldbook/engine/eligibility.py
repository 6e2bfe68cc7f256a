"""Step 1 of selection: may this entry take part in this turn at all?

Checks run in the seed's order and the first failure is the entry's decision, so "why was
this not read?" always has one precise answer. Everything here is deterministic: probability
is a hash of the request seed and the entry's identity, never a random number generator.

:func:`check_entry` is the reference semantics for one entry; whole books are judged by
:mod:`.verdicts`, which does the request-independent part once per revision.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from worldbook.engine.entry import Entry
from worldbook.engine.placement import capability_for, placeable
from worldbook.engine.schema import SELECTABLE_KINDS, Condition
from worldbook.engine.timed import TimedEffects, TimedStatus, state_key

DISABLED = "disabled"
AUDIENCE_MISMATCH = "audience_mismatch"
KIND_EXCLUDED = "kind_excluded"
CONDITION_FAILED = "condition_failed"
RUNTIME_BLOCKED = "runtime_blocked"
PROBABILITY_FAILED = "probability_failed"
EMPTY_CONTENT = "empty_content"
PLACEMENT_UNSUPPORTED = "placement_unsupported"
MISSING_TEMPLATE_VAR = "missing_template_var"

# SillyTavern macro spelling; macros are case-insensitive there too.
_MACRO = re.compile(r"\{\{(char|user)\}\}", re.IGNORECASE)
_MISSING = object()


def resolve_path(state: Any, path: str) -> Any:
    """The value at a dotted path (dict keys, or list indexes), or ``_MISSING``."""
    current = state
    for part in path.split("."):
        if isinstance(current, dict):
            if part not in current:
                return _MISSING
            current = current[part]
        elif isinstance(current, list) and part.isdigit() and int(part) < len(current):
            current = current[int(part)]
        else:
            return _MISSING
    return current


def _same(a: Any, b: Any) -> bool:
    """JSON equality: ``true`` is not ``1`` even though Python says ``True == 1``."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a is b
    return bool(a == b)


def condition_passes(condition: Condition, state: dict[str, Any]) -> bool:
    """``eq``/``in`` need the path present; ``ne`` passes when it is absent; ``exists`` may be
    given ``value: false`` to require absence."""
    value = resolve_path(state, condition.path)
    present = value is not _MISSING
    if condition.op == "exists":
        return present if condition.value is not False else not present
    if condition.op == "eq":
        return present and _same(value, condition.value)
    if condition.op == "ne":
        return not (present and _same(value, condition.value))
    return present and any(_same(value, option) for option in condition.value)


def probability_draw(seed: str, book_id: str, entry_id: str) -> float:
    """A stable number in [0, 100) for this seed and entry; the entry passes if draw < p."""
    digest = hashlib.sha256(f"{seed}\x1f{book_id}\x1f{entry_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 * 100


def template_vars_needed(content: str) -> tuple[str, ...]:
    return tuple(sorted({m.group(1).lower() for m in _MACRO.finditer(content)}))


def substitute(content: str, template_vars: dict[str, str]) -> str:
    return _MACRO.sub(lambda m: template_vars[m.group(1).lower()], content)


@dataclass(slots=True)
class EligibilityContext:
    """The parts of a request the eligibility checks read, normalised once per selection."""

    audience: str
    state: dict[str, Any]
    seed: str
    capabilities: frozenset[str]
    template_vars: dict[str, str]
    timed: TimedEffects


@dataclass(slots=True)
class Verdict:
    """An eligible entry's prepared content, or the reason it is out."""

    reason: str | None
    details: dict[str, Any]
    content: str = ""
    sticky: bool = False


def check_entry(ctx: EligibilityContext, book_id: str, entry_id: str, entry: Entry) -> Verdict:
    """Run the checks in the seed's order; the first failure wins."""
    if not entry.enabled:
        return Verdict(DISABLED, {})
    if ctx.audience not in entry.audience:
        return Verdict(
            AUDIENCE_MISMATCH, {"audience": ctx.audience, "allowed": list(entry.audience)}
        )
    if entry.kind not in SELECTABLE_KINDS:
        return Verdict(KIND_EXCLUDED, {"kind": entry.kind})
    for index, condition in enumerate(entry.conditions):
        if not condition_passes(condition, ctx.state):
            return Verdict(
                CONDITION_FAILED,
                {"index": index, "condition": condition.model_dump(mode="json")},
            )
    if entry.runtime_requirements:
        return Verdict(RUNTIME_BLOCKED, {"runtime_requirements": list(entry.runtime_requirements)})
    timed = ctx.timed.status(state_key(book_id, entry_id), entry) if _timed(entry) else _NO_TIMED
    if timed.blocked is not None:
        return Verdict(timed.blocked, dict(timed.details or {}))
    if entry.probability < 100 and not timed.sticky:
        draw = probability_draw(ctx.seed, book_id, entry_id)
        if draw >= entry.probability:
            return Verdict(
                PROBABILITY_FAILED,
                {"probability": entry.probability, "draw": round(draw, 6)},
            )
    content = entry.content
    if not content.strip():
        return Verdict(EMPTY_CONTENT, {})
    if not placeable(entry, ctx.capabilities):
        return Verdict(
            PLACEMENT_UNSUPPORTED,
            {"position": entry.position, "needs": capability_for(entry)},
        )
    if "{{" in content:
        needed = template_vars_needed(content)
        missing = [name for name in needed if name not in ctx.template_vars]
        if missing:
            return Verdict(MISSING_TEMPLATE_VAR, {"vars": missing})
        if needed:
            content = substitute(content, ctx.template_vars)
    details = dict(timed.details) if timed.sticky and timed.details else {}
    return Verdict(None, details, content, timed.sticky)


_NO_TIMED = TimedStatus()


def _timed(entry: Entry) -> bool:
    return bool(entry.sticky or entry.cooldown or entry.delay)
