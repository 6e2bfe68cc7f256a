"""Story's writes: the one compare-and-set save of a conversation's story, and the
operator's decisions on a quarantined event.

A save compares the head revision the request read: one conditional UPDATE moves it on (or,
for the first revision, an INSERT guarded by the unique constraint); the revision row, the
events it touched and any quarantine records are written in the same transaction. A head
that moved meanwhile is ``stale_write_rejected``; nothing is rebased. The envelope's size is
checked against ``maxStateBytes`` before anything is written (``story_state_too_large``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from story.engine import size
from story.errors import Invalid, StaleWrite, TooLarge
from story.models import (
    EventStatus,
    QuarantineStatus,
    StoryEvent,
    StoryHead,
    StoryQuarantine,
    StoryRevision,
)


@dataclass
class Save:
    """One save: the envelope and status to write over revision ``expected`` (0: none)."""

    tenant_id: Any
    conversation_id: Any
    scenario_id: Any
    character_id: Any
    expected: int
    envelope: dict
    status: str
    outcome: str
    max_bytes: int = 60_000
    source_position: int = 0
    turn_id: Any = None
    message_id: Any = None
    stage: dict | None = None
    # {event_id, title, status, evidence, attempts}
    events: list[dict] = field(default_factory=list)
    # {event_id, record}
    quarantines: list[dict] = field(default_factory=list)

    @classmethod
    def over(cls, head, **fields: Any) -> Save:
        """A save of the same story as ``head`` (a stored revision), expecting it."""
        return cls(
            tenant_id=head.tenant_id,
            conversation_id=head.conversation_id,
            scenario_id=head.scenario_id,
            character_id=head.character_id,
            expected=head.revision,
            **fields,
        )


def save(s: Save) -> int:
    """Write ``s``; the new revision number. :class:`StaleWrite` when the head moved,
    :class:`TooLarge` when the envelope is over ``max_bytes``."""
    try:
        size.check_size(s.envelope, s.max_bytes)
    except size.StateTooLarge as exc:
        raise TooLarge(message=str(exc), details={"bytes": exc.size, "limit": exc.limit}) from None
    new = s.expected + 1
    key = {"conversation_id": s.conversation_id, "scenario_id": s.scenario_id}
    with transaction.atomic():
        if s.expected == 0:
            try:
                with transaction.atomic():
                    StoryHead.objects.create(
                        tenant_id=s.tenant_id,
                        character_id=s.character_id,
                        revision=new,
                        status=s.status,
                        envelope=s.envelope,
                        **key,
                    )
            except IntegrityError:
                raise StaleWrite(message="the story was saved by another request") from None
        else:
            moved = StoryHead.objects.filter(revision=s.expected, **key).update(
                revision=new,
                status=s.status,
                envelope=s.envelope,
                character_id=s.character_id,
                updated_at=timezone.now(),
            )
            if not moved:
                raise StaleWrite(message="the story was saved by another request")
        StoryRevision.objects.create(
            tenant_id=s.tenant_id,
            revision=new,
            status=s.status,
            outcome=s.outcome,
            envelope=s.envelope,
            source_position=s.source_position,
            turn_id=s.turn_id,
            message_id=s.message_id,
            stage=s.stage,
            **key,
        )
        if s.events:
            latest = {event["event_id"]: event for event in s.events}  # the last word wins
            StoryEvent.objects.bulk_create(
                [
                    StoryEvent(
                        tenant_id=s.tenant_id,
                        event_id=event_id,
                        title=(event.get("title") or "")[:500],
                        status=event["status"],
                        evidence=event.get("evidence") or [],
                        attempts=event.get("attempts") or [],
                        revision=new,
                        **key,
                    )
                    for event_id, event in latest.items()
                ],
                update_conflicts=True,
                unique_fields=["conversation", "scenario", "event_id"],
                update_fields=["title", "status", "evidence", "attempts", "revision", "updated_at"],
            )
        for item in s.quarantines:
            StoryQuarantine.objects.create(
                tenant_id=s.tenant_id,
                event_id=item["event_id"],
                record=item["record"],
                revision=new,
                **key,
            )
    return new


def decide_quarantine(
    record: StoryQuarantine, decision: str, *, note: str = "", by: str = ""
) -> StoryQuarantine:
    """An operator's decision on an open quarantine record: ``retry`` puts the event back in
    the settlement queue (its attempts start again), ``discard`` drops it, ``resolve``
    (with a note) counts it as settled without changing the narrative's goals."""
    if decision not in ("retry", "discard", "resolve"):
        raise Invalid(message="decision must be retry, discard or resolve")
    note = (note or "").strip()
    if decision == "resolve" and not note:
        raise Invalid("note_required", "resolving a quarantined event needs an operator note")
    with transaction.atomic():
        record = StoryQuarantine.objects.select_for_update().get(pk=record.pk)
        if record.status != QuarantineStatus.OPEN:
            raise StaleWrite("quarantine_decided", f"this record was already {record.status}")
        head = StoryHead.objects.select_for_update().get(
            conversation_id=record.conversation_id, scenario_id=record.scenario_id
        )
        envelope = dict(head.envelope)
        event = StoryEvent.objects.filter(
            conversation_id=record.conversation_id,
            scenario_id=record.scenario_id,
            event_id=record.event_id,
        ).first()
        if decision == "retry":
            queued = {
                "id": record.event_id,
                "title": event.title if event else "",
                "evidence": list(record.record.get("evidence") or []),
                "attempts": [],
                "interrupted": bool(record.record.get("interrupted")),
            }
            envelope["unresolved"] = [
                e for e in envelope.get("unresolved") or [] if e.get("id") != record.event_id
            ] + [queued]
            status = EventStatus.UNKNOWN
        elif decision == "resolve":
            narrative = dict(envelope.get("narrative") or {})
            clock = dict(narrative.get("clock") or {})
            clock["settledEvents"] = list(clock.get("settledEvents") or []) + [record.event_id]
            narrative["clock"] = clock
            envelope["narrative"] = narrative
            status = EventStatus.SETTLED
        else:
            status = EventStatus.DISCARDED
        save(
            Save.over(
                head,
                envelope=envelope,
                status=head.status,
                outcome=f"quarantine_{decision}",
                source_position=int(envelope.get("sourceWatermark") or 0),
                events=[
                    {
                        "event_id": event.event_id,
                        "title": event.title,
                        "status": status,
                        "evidence": event.evidence,
                        "attempts": event.attempts,
                    }
                ]
                if event is not None
                else [],
            )
        )
        record.status = {
            "retry": QuarantineStatus.RETRIED,
            "discard": QuarantineStatus.DISCARDED,
            "resolve": QuarantineStatus.RESOLVED,
        }[decision]
        record.note, record.decided_by, record.decided_at = note[:2000], by[:150], timezone.now()
        record.save(update_fields=["status", "note", "decided_by", "decided_at"])
    return record
