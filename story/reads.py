"""Reads of a conversation's Story for the operator: the story in force and its envelope's
parts, its revisions, events (each piece of evidence marked when its message changed since
it was captured) and quarantine records. The REST API (``story.api``) and the console pages
(``story.views``) both read through here, so they show the same thing. The conversation is
the runtime's, its scenario asked through ``console.owners``; its messages are read through
the kernel's history port (``story.selectors.message_texts``).

A conversation's story is kept per scenario (``story.models.StoryHead``): the one shown is
the story of the scenario the conversation runs, else the most recent one it has; its
revisions, events and records are those of the same scenario.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from console.owners import owners
from console.scoping import is_uuid
from story import selectors as story
from story.engine import evidence as evidence_engine
from story.models import StoryEvent, StoryHead, StoryQuarantine, StoryRevision

MAX_INT = 2**31 - 1  # revision numbers are PostgreSQL integers
NO_STORY = "none"


def head_for(tenant, conversation) -> StoryHead | None:
    """The story shown for ``conversation``: its scenario's, else its most recent one."""
    scenario = owners().scenario_of(conversation)
    found = story.head(tenant, conversation.pk, scenario.pk) if scenario is not None else None
    return found or story.head(tenant, conversation.pk)


def envelope_of(head: StoryHead | None) -> dict:
    envelope = head.envelope if head is not None else None
    return envelope if isinstance(envelope, dict) else {}


def pending_of(envelope: dict) -> dict | None:
    """The prepared turn waiting for the Actor (``pendingActor``) without its ``prepared``
    payload, which is the engine's own working copy."""
    pending = envelope.get("pendingActor")
    if not isinstance(pending, dict):
        return None
    return {key: value for key, value in pending.items() if key != "prepared"}


def overview(conversation, head: StoryHead | None) -> dict[str, Any]:
    """What ``GET .../story`` answers: revision 0 and status ``none`` when there is none."""
    envelope = envelope_of(head)
    return {
        "conversation": conversation.pk,
        "scenario": head.scenario_id if head is not None else None,
        "revision": head.revision if head is not None else 0,
        "status": head.status if head is not None else NO_STORY,
        "world": _dict_or_none(envelope.get("world")),
        "narrative": _dict_or_none(envelope.get("narrative")),
        "pending": pending_of(envelope),
        "event": _dict_or_none(envelope.get("event")),
        "unresolved": [e for e in envelope.get("unresolved") or [] if isinstance(e, dict)],
        "updated_at": head.updated_at if head is not None else None,
    }


def revisions(tenant, conversation, head: StoryHead | None):
    """The story's revisions, newest first."""
    if head is None:
        return StoryRevision.objects.none()
    return story.revisions(tenant, conversation.pk).filter(scenario_id=head.scenario_id)


def revision(tenant, conversation, head: StoryHead | None, number) -> StoryRevision | None:
    if head is None or not isinstance(number, int) or not 0 < number <= MAX_INT:
        return None
    return revisions(tenant, conversation, head).filter(revision=number).first()


def events(tenant, conversation, head: StoryHead | None):
    if head is None:
        return StoryEvent.objects.none()
    return story.events(tenant, conversation.pk).filter(scenario_id=head.scenario_id)


def quarantines(tenant, conversation, head: StoryHead | None):
    """The quarantine records, open ones first, newest first within each."""
    if head is None:
        return StoryQuarantine.objects.none()
    rows = story.quarantines(tenant, conversation.pk).filter(scenario_id=head.scenario_id)
    return rows.order_by("decided_at", "-created_at")


def quarantine(tenant, conversation, quarantine_id) -> StoryQuarantine | None:
    """The conversation's record ``quarantine_id`` (None for a malformed or foreign id)."""
    if not is_uuid(quarantine_id):
        return None
    return story.quarantine(tenant, conversation.pk, quarantine_id)


def with_changes(tenant, conversation, rows: Iterable[StoryEvent]) -> list[dict]:
    """Each event as a dict whose evidence pieces carry ``changed``: the message is gone from
    the conversation or its text no longer hashes to the captured SHA-256."""
    rows = list(rows)
    marked = marked_evidence(tenant, conversation, [row.evidence for row in rows])
    return [
        {
            "event_id": row.event_id,
            "title": row.title,
            "status": row.status,
            "evidence": pieces,
            "attempts": [a for a in row.attempts or [] if isinstance(a, dict)],
            "revision": row.revision,
            "updated_at": row.updated_at,
        }
        for row, pieces in zip(rows, marked, strict=True)
    ]


def marked_evidence(tenant, conversation, lists: list) -> list[list[dict]]:
    """Every evidence list of ``lists`` with ``changed`` set on each piece (one query for all
    the messages). A piece that is not well formed cannot be checked: it counts as changed."""
    pieces = [[p for p in (items or []) if isinstance(p, dict)] for items in lists]
    ids = {str(p.get("message_id")) for items in pieces for p in items}
    stored = _texts(tenant, conversation, ids)
    out = []
    for items in pieces:
        parsed = [_parse(p) for p in items]
        changed = set(evidence_engine.changed([e for e in parsed if e is not None], stored))
        out.append(
            [_piece(p, e is None or e in changed) for p, e in zip(items, parsed, strict=True)]
        )
    return out


def _texts(tenant, conversation, ids: set[str]) -> dict[str, str | None]:
    """Message id → its text now, None when it is not (or no longer) in the conversation."""
    stored: dict[str, str | None] = dict.fromkeys(ids)
    stored.update(story.message_texts(conversation.session_id, ids))
    return stored


def _parse(piece: dict) -> evidence_engine.Evidence | None:
    try:
        return evidence_engine.Evidence.from_json(piece)
    except (KeyError, TypeError, ValueError):
        return None


def _piece(piece: dict, changed: bool) -> dict:
    position = piece.get("source_position")
    return {
        "message_id": str(piece.get("message_id") or ""),
        "sha256": str(piece.get("sha256") or ""),
        "kind": str(piece.get("kind") or ""),
        "source_position": position if isinstance(position, int) else None,
        "changed": changed,
    }


def _dict_or_none(value) -> dict | None:
    return value if isinstance(value, dict) else None
