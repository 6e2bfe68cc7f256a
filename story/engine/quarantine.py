"""The quarantine rule for an event that cannot be settled (seed 002, Story, failure table):
after attempts at 3 distinct source positions, or once 12 source positions have passed since
the first attempt, the event leaves the settlement queue for a ``story_event_quarantine``
record of at most 64 KiB, both in the same compare-and-set. Positions are message positions,
neither wall-clock time nor ``world.round``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

DISTINCT_ATTEMPTS = 3
POSITION_SPAN = 12
RECORD_MAX_BYTES = 64 * 1024
DIAGNOSTIC_CHARS = 2_000


@dataclass
class Attempt:
    source_position: int
    outcome: str  # "unknown", "invalid", "evidence_changed", ...
    diagnostic: str = ""


@dataclass
class Unresolved:
    """An event waiting for its settlement: its references and the attempts so far."""

    event_id: str
    evidence: list[dict] = field(default_factory=list)
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def positions(self) -> list[int]:
        return sorted({a.source_position for a in self.attempts})

    @property
    def first_position(self) -> int | None:
        return min((a.source_position for a in self.attempts), default=None)


def record_attempt(event: Unresolved, position: int, outcome: str, diagnostic: str = "") -> None:
    """Add an attempt; a second one at the same position replaces the first (a retried request
    is not a new position)."""
    event.attempts = [a for a in event.attempts if a.source_position != position]
    event.attempts.append(Attempt(position, outcome, diagnostic[:DIAGNOSTIC_CHARS]))
    event.attempts.sort(key=lambda a: a.source_position)


def quarantine_due(event: Unresolved, position: int) -> bool:
    """Whether ``event`` must be quarantined at source position ``position``."""
    first = event.first_position
    if first is None:
        return False
    return len(event.positions) >= DISTINCT_ATTEMPTS or position - first >= POSITION_SPAN


def quarantine_record(event: Unresolved, position: int, reason: str) -> dict:
    """The record kept for the operator: the event, its evidence and attempts. Diagnostics are
    shortened (oldest first) until the record fits in :data:`RECORD_MAX_BYTES`; the evidence
    and the attempts' positions are never dropped."""
    attempts = [
        {"source_position": a.source_position, "outcome": a.outcome, "diagnostic": a.diagnostic}
        for a in event.attempts
    ]
    record = {
        "type": "story_event_quarantine",
        "event_id": event.event_id,
        "reason": reason,
        "quarantined_at_position": position,
        "evidence": list(event.evidence),
        "attempts": attempts,
    }
    for attempt in attempts:
        if _bytes(record) <= RECORD_MAX_BYTES:
            break
        attempt["diagnostic"] = ""
    if _bytes(record) > RECORD_MAX_BYTES:
        raise ValueError("the quarantine record is over 64 KiB even without diagnostics")
    return record


def _bytes(record: dict) -> int:
    return len(json.dumps(record, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
