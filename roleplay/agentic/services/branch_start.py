"""A branch's Agent V2 state starts where its parent's stood at the fork point.

The rule is the one an edit rolls the state back by (``agent_state.withdraw_from``): a
revision is in force while the message it was built from is in the history. In a branch the
history is the parent's up to the fork point, so the state in force there is the parent's
newest revision, not withdrawn, whose source message is in that shared part. That one
revision (with the ledger entries in force with it) becomes the branch's revision 1, origin
``branch``; the parent's earlier revisions stay the parent's (docs/branches.md).
"""

from __future__ import annotations

from django.db.models import Exists, OuterRef, Q

from memory import forks
from memory.models import Message
from roleplay.models import AgentLedgerEntry, AgentStateHead, AgentStateRevision, Conversation


def start_branch(sources: list[Conversation], branch: Conversation, segments) -> int:
    """Start in ``branch``, whose shared history is ``segments`` (``memory.forks`` pairs),
    every Agent V2 state of the conversation it was branched from; ``sources`` is that one,
    then the one it was branched from, and so on: a state with no revision in force at the
    fork among a branch's own revisions stood there as its parent left it. The number of
    states started."""
    tenant_id = branch.tenant_id
    shared = Message.objects.filter(forks.history_filter(segments), tenant_id=tenant_id)
    started: set = set()
    for source in sources:
        for head in AgentStateHead.objects.filter(tenant_id=tenant_id, conversation=source):
            if head.scenario_id in started:
                continue
            revision = (
                AgentStateRevision.objects.filter(
                    conversation=source,
                    scenario_id=head.scenario_id,
                    withdrawn_at__isnull=True,
                    source_message_id__in=shared.values("pk"),
                )
                .order_by("-revision")
                .first()
            )
            if revision is not None:
                _copy(source, revision, branch)
                started.add(head.scenario_id)
    return len(started)


def _copy(source: Conversation, revision: AgentStateRevision, branch: Conversation) -> None:
    """``revision`` of ``source``, with the ledger entries in force with it, as the branch's
    revision 1."""
    key = {"conversation": source, "scenario_id": revision.scenario_id}
    out_of_force = AgentStateRevision.objects.filter(
        Q(withdrawn_at__isnull=False)
        | Q(source_message_id__isnull=False)
        & ~Exists(Message.objects.filter(pk=OuterRef("source_message_id"))),
        **key,
        revision=OuterRef("revision"),
    )
    entries = AgentLedgerEntry.objects.filter(**key, revision__lte=revision.revision).exclude(
        Exists(out_of_force)
    )
    copy = {
        "tenant_id": branch.tenant_id,
        "conversation": branch,
        "scenario_id": revision.scenario_id,
    }
    AgentStateRevision.objects.create(
        **copy,
        revision=1,
        state=revision.state,
        tools_called=revision.tools_called,
        source_turn=revision.source_turn,
        source_message_id=revision.source_message_id,
        origin="branch",
    )
    AgentLedgerEntry.objects.bulk_create(
        AgentLedgerEntry(
            **copy, revision=1, type=e.type, key=e.key, status=e.status, payload=e.payload
        )
        for e in entries.order_by("id")
    )
    AgentStateHead.objects.create(**copy, revision=1)
