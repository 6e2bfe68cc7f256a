"""A branch's Compact checkpoint starts from its parent's at the fork point.

A checkpoint summarises the messages between its two ends. In a branch the history is the
parent's up to the fork point, so a parent's checkpoint whose covered ends both lie in that
shared part summarises history the branch holds: the newest such version (under each
scenario) becomes the branch's version 1, its content as it was, and the branch's first
turn past the trigger continues from it instead of compacting the shared history again.
A version covering messages after the fork point summarises what the branch does not hold
and is never carried. The turn checks a carried version as it checks any (its covered
messages and their fingerprint, ``compact.selectors.covered_messages``), so one whose
messages changed is rebuilt, never trusted (docs/branches.md).
"""

from __future__ import annotations

from memory import forks
from memory.models import Message
from roleplay.models import CompactCheckpoint, Conversation

from .checkpoints import as_checkpoint, content_of


def start_branch(sources: list[Conversation], branch: Conversation, segments) -> int:
    """Start in ``branch``, whose shared history is ``segments`` (``memory.forks`` pairs),
    the checkpoint of each scenario of the conversation it was branched from; ``sources``
    is that one, then the one it was branched from, and so on (the nearest first). The
    number of checkpoints started."""
    tenant_id = branch.tenant_id
    shared = Message.objects.filter(forks.history_filter(segments), tenant_id=tenant_id)
    started: set = set()
    for source in sources:
        rows = CompactCheckpoint.objects.filter(
            tenant_id=tenant_id,
            conversation=source,
            status="active",
            first_message_id__in=shared.values("pk"),
            last_message_id__in=shared.values("pk"),
        ).order_by("scenario_id", "-version")
        for row in rows:
            if row.scenario_id in started:
                continue
            started.add(row.scenario_id)
            CompactCheckpoint.objects.create(
                tenant_id=tenant_id,
                conversation=branch,
                scenario_id=row.scenario_id,
                version=1,
                audit={**row.audit, "branched_from": [str(source.pk), row.version]},
                **{**content_of(as_checkpoint(row)), "chain": None},
            )
    return len(started)
