"""Acceptance-gated document changes (the settings' ``document_commit: on_accept``, beyond
seed 000, where gating is only advice): a turn's ``update_memory`` is checked and scrubbed
like any write and compared with the revision it was based on, then held as a
``MemoryProposal`` instead of committed. The turn reads its own proposal back
(``turn_view``); a second call in the same turn replaces it, based on the proposal's
revision.

:func:`settle` runs when the player goes on from the conversation (a new chat turn): each
pending proposal whose reply is still the text the history shows is applied through the
document service's compare-and-set (``applied``, or ``conflicted`` when the document moved
on in between); one whose reply was regenerated (another alternative shown), failed,
cancelled or rolled back is ``dropped`` with that reason. Nothing is half applied: each
proposal is applied or not in its own savepoint.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from django.db import transaction
from django.utils import timezone

from memory.documents.selectors import current_revision
from memory.documents.services import conflict, put_document, stored_form
from memory.engine.documents import check_expected_revision, check_slot
from memory.errors import RevisionConflict
from memory.models import (
    MemoryProposal,
    Message,
    MessageAlternative,
    MessageStatus,
    ProposalStatus,
)


@dataclass(frozen=True)
class Gate:
    """The turn a gated tool call belongs to and the reply it writes."""

    turn_id: uuid.UUID
    message_id: uuid.UUID


def propose(tenant, session_id: str, slot: str, gate: Gate, expected_revision, memory) -> int:
    """Hold ``memory`` for the turn's acceptance if ``expected_revision`` is the revision
    the turn sees (the document's, or its own proposal's); the revision it would become."""
    slot = check_slot(slot)
    expected = check_expected_revision(expected_revision)
    data = stored_form(memory)
    with transaction.atomic():
        held = (
            MemoryProposal.objects.select_for_update()
            .filter(tenant=tenant, turn_id=gate.turn_id, slot=slot)
            .first()
        )
        seen = held.base_revision + 1 if held else current_revision(tenant, session_id, slot)
        if expected != seen:
            raise conflict(tenant, session_id, slot, expected, current=seen)
        if held is not None:
            MemoryProposal.objects.filter(pk=held.pk).update(data=data)
        else:
            MemoryProposal.objects.create(
                tenant=tenant,
                session_id=session_id,
                slot=slot,
                turn_id=gate.turn_id,
                message_id=gate.message_id,
                base_revision=expected,
                data=data,
            )
    return expected + 1


def turn_view(tenant, slot: str, gate: Gate) -> dict | None:
    """``{revision, memory}`` as the turn's own proposal would leave the slot, or None."""
    held = (
        MemoryProposal.objects.filter(tenant=tenant, turn_id=gate.turn_id, slot=slot)
        .values_list("base_revision", "data")
        .first()
    )
    return None if held is None else {"revision": held[0] + 1, "memory": held[1]}


def settle(tenant, session_id: str) -> list[dict]:
    """Apply or drop the conversation's pending proposals, oldest first; what became of
    each (``{id, slot, status, reason, revision}``). Cheap when there are none."""
    with transaction.atomic():
        pending = list(
            MemoryProposal.objects.select_for_update(skip_locked=True)
            .filter(tenant=tenant, session_id=session_id, status=ProposalStatus.PENDING)
            .order_by("created_at")
        )
        if not pending:
            return []
        shown = _shown_turns(tenant, {p.message_id for p in pending})
        return [_decide(tenant, proposal, shown.get(proposal.message_id)) for proposal in pending]


def _decide(tenant, proposal: MemoryProposal, shown: tuple[str, str] | None) -> dict:
    status, reason, revision = ProposalStatus.DROPPED, "", None
    if shown is None:
        reason = "reply_missing"
    elif shown[0] != str(proposal.turn_id):
        reason = "reply_replaced"
    elif shown[1] != MessageStatus.COMPLETE:
        reason = "reply_not_complete"
    else:
        try:
            with transaction.atomic():
                revision = put_document(
                    tenant,
                    proposal.session_id,
                    proposal.slot,
                    proposal.base_revision,
                    proposal.data,
                    origin="tool",
                )
            status = ProposalStatus.APPLIED
        except RevisionConflict:
            status, reason = ProposalStatus.CONFLICTED, "revision_conflict"
    MemoryProposal.objects.filter(pk=proposal.pk).update(
        status=status, reason=reason, revision=revision, decided_at=timezone.now()
    )
    return {
        "id": proposal.pk,
        "slot": proposal.slot,
        "status": status,
        "reason": reason,
        "revision": revision,
    }


def _shown_turns(tenant, message_ids: set) -> dict:
    """message id -> (the turn id of the text the history shows, its status) for the
    messages that still exist: the selected alternative's when the message has any."""
    messages = Message.objects.filter(tenant=tenant, pk__in=message_ids).values_list(
        "pk", "metadata", "status", "selected_alternative"
    )
    shown = {pk: (str((meta or {}).get("turn_id", "")), status) for pk, meta, status, _ in messages}
    selected = {pk: index for pk, _, _, index in messages}
    alternatives = MessageAlternative.objects.filter(message_id__in=list(selected)).values_list(
        "message_id", "index", "metadata", "status"
    )
    for message_id, index, meta, status in alternatives:
        if selected[message_id] == index:
            shown[message_id] = (str((meta or {}).get("turn_id", "")), status)
    return shown


def forget(tenant, session_ids: list[str] | None) -> int:
    """Delete the proposals of these conversations (every one when None); how many went."""
    rows = MemoryProposal.objects.filter(tenant=tenant)
    if session_ids is not None:
        rows = rows.filter(session_id__in=session_ids)
    return rows.delete()[0]
