"""An operator's decision on a quarantined story event, from any door (REST, console).

The decision itself is Story's (``story.services.decide_quarantine``: retry puts the event
back in the settlement queue, discard drops it, resolve with a note counts it settled, each
a new story revision). What the doors add is the audit trail: the decision and its
``story.quarantine`` audit event are written in one transaction, so neither exists alone.
"""

from __future__ import annotations

from django.db import transaction

from console import audit
from console.models import AuditAction
from story import services as story
from story.models import StoryQuarantine

DECISIONS = ("retry", "discard", "resolve")


def decide(
    record: StoryQuarantine,
    decision: str,
    *,
    note: str = "",
    by: str = "",
    request=None,
    user=None,
) -> StoryQuarantine:
    """Decide ``record`` (``story.errors``: ``note_required`` without a note to resolve,
    ``quarantine_decided`` when it was decided already) and audit it as ``by``/``user``."""
    with transaction.atomic():
        decided = story.decide_quarantine(record, decision, note=note, by=by)
        audit.record(
            AuditAction.STORY_QUARANTINE,
            request=request,
            user=user,
            username=by,
            tenant=decided.tenant,
            details={
                "conversation": str(decided.conversation_id),
                "event_id": decided.event_id,
                "decision": decision,
            },
        )
    return decided
