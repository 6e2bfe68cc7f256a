"""Story's reads: the story in force for a conversation, its revisions, events and
quarantine records, always within one tenant."""

from __future__ import annotations

from console import history
from console.scoping import scoped
from story.models import EventStatus, StoryEvent, StoryHead, StoryQuarantine, StoryRevision


def head(tenant, conversation_id, scenario_id=None) -> StoryHead | None:
    """The conversation's story under ``scenario_id`` (else its most recent one)."""
    found = scoped(StoryHead, tenant).filter(conversation_id=conversation_id)
    if scenario_id is not None:
        found = found.filter(scenario_id=scenario_id)
    return found.order_by("-updated_at").first()


def read_for_turn(conversation_id, scenario_id) -> tuple[int, dict | None]:
    """(revision, envelope) a turn starts from; (0, None) when there is no story yet."""
    row = (
        StoryHead.objects.filter(conversation_id=conversation_id, scenario_id=scenario_id)
        .values_list("revision", "envelope")
        .first()
    )
    return (row[0], row[1]) if row else (0, None)


def revisions(tenant, conversation_id):
    return (
        scoped(StoryRevision, tenant).filter(conversation_id=conversation_id).order_by("-revision")
    )


def revision(tenant, conversation_id, number: int) -> StoryRevision | None:
    return (
        scoped(StoryRevision, tenant)
        .filter(conversation_id=conversation_id, revision=number)
        .order_by("-created_at")
        .first()
    )


def revisions_before(
    conversation_id, scenario_id, position: int, count: int = 4
) -> list[tuple[int, dict]]:
    """The newest ``count`` revisions saved at source positions before ``position``, newest
    first: what a rollback (or a history that no longer matches) may restore."""
    return list(
        StoryRevision.objects.filter(
            conversation_id=conversation_id, scenario_id=scenario_id, source_position__lt=position
        )
        .order_by("-revision")
        .values_list("revision", "envelope")[:count]
    )


def revision_before(conversation_id, scenario_id, position: int) -> tuple[int, dict, int] | None:
    """(revision, envelope, source position) of the newest revision saved at a source
    position before ``position``; None when there is none."""
    return (
        StoryRevision.objects.filter(
            conversation_id=conversation_id, scenario_id=scenario_id, source_position__lt=position
        )
        .order_by("-revision")
        .values_list("revision", "envelope", "source_position")
        .first()
    )


def live_events(conversation_id, scenario_id) -> list[StoryEvent]:
    """The story's events that still count (every one but the discarded)."""
    return list(
        StoryEvent.objects.filter(conversation_id=conversation_id, scenario_id=scenario_id)
        .exclude(status=EventStatus.DISCARDED)
        .order_by("id")
    )


def message_texts(conversation_id, ids) -> dict[str, str]:
    """Message id → its text now, for those of ``ids`` still in the conversation (read from
    the message store through the kernel's port, ``console.history``)."""
    return history.message_texts(str(conversation_id), ids)


def events(tenant, conversation_id):
    return scoped(StoryEvent, tenant).filter(conversation_id=conversation_id).order_by("id")


def quarantines(tenant, conversation_id):
    return scoped(StoryQuarantine, tenant).filter(conversation_id=conversation_id)


def quarantine(tenant, conversation_id, qid) -> StoryQuarantine | None:
    return quarantines(tenant, conversation_id).filter(pk=qid).first()
