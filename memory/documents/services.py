"""Writes of JSON memory documents: a whole new object by compare-and-set, or the slot gone.

Every door (REST, console, model tools) comes here. A write is checked
(``memory.engine.documents``), scrubbed of secrets and personal data like every memory write
(``memory.engine.scrub``), and committed in one transaction with its history row: one
conditional UPDATE when the slot has a revision, an INSERT guarded by the slot's unique
constraint when it is empty. Of concurrent writers based on one revision exactly one wins;
the others get a 409 ``revision_conflict`` carrying the revision to read again.
"""

from __future__ import annotations

from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from console.storable import unstorable_at
from memory.documents.selectors import current_revision
from memory.engine.documents import check_expected_revision, check_memory, check_slot
from memory.engine.scrub import scrub_value
from memory.errors import MemoryInvalid, RevisionConflict
from memory.models import MemoryDocument, MemoryDocumentRevision

ORIGINS = ("api", "console", "tool", "reply")  # reply: a memory table's edits


def put_document(
    tenant, session_id: str, slot: str, expected_revision, memory, *, origin: str
) -> int:
    """Replace the slot's object if it is still at ``expected_revision``; the new revision
    (always the old one + 1)."""
    if origin not in ORIGINS:
        raise ValueError(f"unknown origin {origin!r}")
    slot = check_slot(slot)
    expected = check_expected_revision(expected_revision)
    data = stored_form(memory)
    key = {"tenant": tenant, "session_id": session_id, "slot": slot}
    with transaction.atomic():
        if expected == 0:
            try:
                with transaction.atomic():
                    document = MemoryDocument.objects.create(**key, revision=1, data=data)
            except IntegrityError as exc:
                raise conflict(tenant, session_id, slot, expected) from exc
            document_id = document.pk
        else:
            changed = MemoryDocument.objects.filter(**key, revision=expected).update(
                revision=F("revision") + 1, data=data, updated_at=timezone.now()
            )
            if not changed:
                raise conflict(tenant, session_id, slot, expected)
            document_id = MemoryDocument.objects.filter(**key).values_list("pk", flat=True).get()
        MemoryDocumentRevision.objects.create(
            tenant=tenant, document_id=document_id, revision=expected + 1, data=data, origin=origin
        )
    return expected + 1


def stored_form(memory) -> dict:
    """``memory`` checked and scrubbed, as it would be stored; raises ``MemoryInvalid``."""
    check_memory(memory)
    found = unstorable_at(memory, "memory")
    if found is not None:
        raise MemoryInvalid("invalid_text", found[1], {"path": found[0]})
    data, _kinds = scrub_value(memory)
    check_memory(data)  # a placeholder may be longer than what it replaced
    return data


def forget_sessions(tenant, session_ids: list[str]) -> int:
    """Delete every document (and its history) of these conversations; how many went."""
    rows = MemoryDocument.objects.filter(tenant=tenant, session_id__in=session_ids)
    _total, per_model = rows.delete()
    return per_model.get(MemoryDocument._meta.label, 0)


def conflict(
    tenant, session_id: str, slot: str, expected: int, current: int | None = None
) -> RevisionConflict:
    """The 409 for a write based on ``expected``; ``current`` read unless given."""
    if current is None:
        current = current_revision(tenant, session_id, slot)
    return RevisionConflict(
        message=f"the memory document is at revision {current}, not {expected}: read it again "
        "and decide again",
        details={"current_revision": current, "expected_revision": expected, "slot": slot},
    )


def start_fork(tenant, sources: list[str], child_session: str, at) -> int:
    """A fork (``memory.forks``) starts with each document of the session it was forked
    from as it was at ``at`` (the time of the fork point's message): that one revision, not
    its history, becomes the fork's revision 1 (origin ``branch``). ``sources`` is that
    session, then the one it was forked from, and so on: a slot with no revision of its own
    by then stood as its parent left it. The number of documents."""
    started: set[str] = set()
    for session_id in sources:
        for document in MemoryDocument.objects.filter(tenant=tenant, session_id=session_id):
            then = (
                document.revisions.filter(created_at__lte=at)
                .order_by("-revision")
                .values_list("data", flat=True)
                .first()
            )
            if document.slot in started or then is None:
                continue
            copy = MemoryDocument.objects.create(
                tenant=tenant, session_id=child_session, slot=document.slot, revision=1, data=then
            )
            MemoryDocumentRevision.objects.create(
                tenant=tenant, document=copy, revision=1, data=then, origin="branch"
            )
            started.add(document.slot)
    return len(started)
