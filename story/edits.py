"""When a message a story was built from is edited (or another alternative of it is
selected), the story goes back before it: the ``history_changed`` signal of the message
store reaches :func:`restore_after_edit` for each story of the conversation once the edit
commits, so the next turn reads a story that does not carry the old text.

The rule is :mod:`story.engine.edits`'s: the earliest piece of evidence whose message now
holds another text is where the story stops being true; when the story in force folded that
position in, a new revision (outcome ``restored_after_edit``) puts back the newest revision
saved before it (else an empty story the next request initialises), and the events built
from that position on are ``discarded``. The pending reply itself is not evidence yet: an
edit of it is what its acceptance reads (the seed).
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable

from console.history import history_changed
from story import selectors, services
from story.engine import edits
from story.engine.evidence import Evidence
from story.errors import StaleWrite
from story.models import EventStatus, StoryHead

logger = logging.getLogger(__name__)
TRIES = 3
UNCAPPED = 2**31


def restore_after_edit(head: StoryHead) -> int | None:
    """The revision written for ``head`` (None when the story does not carry an edited
    message); a head moved meanwhile is read again, up to :data:`TRIES` times."""
    for _ in range(TRIES):
        try:
            return _restore(head)
        except StaleWrite:
            head.refresh_from_db()
    logger.warning("story %s was not restored after an edit: it kept moving", head.pk)
    return None


def _restore(head: StoryHead) -> int | None:
    rows = selectors.live_events(head.conversation_id, head.scenario_id)
    pieces = {row.event_id: [Evidence.from_json(p) for p in row.evidence or []] for row in rows}
    ids = {p.message_id for items in pieces.values() for p in items}
    stored = selectors.message_texts(head.conversation_id, ids)
    position = edits.earliest_edit([p for items in pieces.values() for p in items], stored)
    if position is None or not edits.built_from(head.envelope, position):
        return None
    found = selectors.revision_before(head.conversation_id, head.scenario_id, position)
    if found is None:
        envelope, source_position = edits.rebuilt(head.envelope), 0
    else:
        envelope = edits.restored(found[1], head.envelope)
        source_position = found[2]
    kept = edits.event_ids(envelope)
    abandoned = [
        row
        for row in rows
        if row.event_id not in kept
        and any(p.source_position >= position for p in pieces[row.event_id])
    ]
    return services.save(
        services.Save.over(
            head,
            envelope=envelope,
            status="ready",
            outcome="restored_after_edit",
            # An earlier revision (saved within its cap), or an empty story: refusing it for
            # a cap lowered since would keep the edited text in force.
            max_bytes=UNCAPPED,
            source_position=source_position,
            events=_rows(envelope) + [_discarded(row) for row in abandoned],
        )
    )


def _rows(envelope: dict) -> list[dict]:
    """The restored envelope's own events, as it holds them."""
    found = [(e, EventStatus.UNKNOWN) for e in envelope.get("unresolved") or []]
    if isinstance(envelope.get("event"), dict):
        found.append((envelope["event"], EventStatus.OPEN))
    return [
        {
            "event_id": event["id"],
            "title": event.get("title") or "",
            "status": status,
            "evidence": event.get("evidence") or [],
            "attempts": event.get("attempts") or [],
        }
        for event, status in found
    ]


def _discarded(row) -> dict:
    return {
        "event_id": row.event_id,
        "title": row.title,
        "status": EventStatus.DISCARDED,
        "evidence": row.evidence,
        "attempts": row.attempts,
    }


def _history_changed(sender, *, tenant, session_id, **_) -> None:
    try:
        conversation_id = uuid.UUID(str(session_id))
    except ValueError:  # every conversation (None), or a store session of no conversation
        return
    for head in StoryHead.objects.filter(tenant=tenant, conversation_id=conversation_id):
        restore_after_edit(head)


def connect() -> None:
    history_changed.connect(_history_changed, dispatch_uid="story.edits.history")


def start_branch(tenant_id, sources, branch_id, position: Callable[[], int]) -> int:
    """A branch starts each story of the conversation it was branched from at the revision
    in force at the fork, by the rule an edit rolls back by: the newest revision saved at a
    source position before ``position()`` (the count of chat messages up to the fork point,
    counted only when there is a story).
    ``sources`` is the conversation it was branched from, then that one's parent, and so
    on: a story with no such revision of its own stood there as its parent left it (none
    at all: the branch's first request initialises one). That one revision becomes the
    branch's revision 1 (outcome ``branched``). The number of stories started."""
    started: set = set()
    count: list[int] = []
    for source_id in sources:
        for head in StoryHead.objects.filter(tenant_id=tenant_id, conversation_id=source_id):
            count = count or [position()]
            found = selectors.revision_before(source_id, head.scenario_id, count[0])
            if head.scenario_id in started or found is None:
                continue
            services.save(
                services.Save(
                    tenant_id=tenant_id,
                    conversation_id=branch_id,
                    scenario_id=head.scenario_id,
                    character_id=head.character_id,
                    expected=0,
                    envelope=found[1],
                    status="ready",
                    outcome="branched",
                    max_bytes=UNCAPPED,
                    source_position=found[2],
                    events=_rows(found[1]),
                )
            )
            started.add(head.scenario_id)
    return len(started)
