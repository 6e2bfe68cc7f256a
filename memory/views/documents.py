"""Console pages of a conversation's JSON memory documents: the slots, one document with its
revisions and what each changed, and (operators) a new revision written by compare-and-set
through ``memory.documents.services`` like every other door. Viewers read."""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render

from console.access import console_view
from console.numbers import parse_int
from console.owners import conversation_or_404
from console.storable import loads as loads_json
from memory.documents import selectors as documents
from memory.documents import services as document_writes
from memory.engine.documents import DEFAULT_SLOT, check_slot, diff, pretty
from memory.errors import MemoryInvalid, RevisionConflict

HISTORY_SHOWN = 20


@console_view()
def memory_documents(request, pk):
    """The conversation's slots; a slot name typed in opens (or starts) that document."""
    conversation = conversation_or_404(request, pk)
    if "slot" in request.GET:
        try:
            slot = check_slot(request.GET["slot"].strip())
        except MemoryInvalid as exc:
            flash.error(request, exc.message)
        else:
            return redirect("memory_document", pk=conversation.pk, slot=slot)
    rows = documents.slots(request.tenant, str(conversation.id))
    return render(
        request,
        "roleplay/memory/documents.html",
        {"conversation": conversation, "rows": rows, "default_slot": DEFAULT_SLOT},
    )


@console_view()
def memory_document(request, pk, slot):
    """One document: the current object, an editor for operators, its revisions with what
    each changed from the one before, and the Actor's changes held for acceptance."""
    conversation = conversation_or_404(request, pk)
    session_id = str(conversation.id)
    try:
        slot = check_slot(slot)
    except MemoryInvalid as exc:
        flash.error(request, exc.message)
        return redirect("memory_documents", pk=conversation.pk)
    draft, problem = None, None
    if request.method == "POST":
        draft = request.POST.get("memory", "")
        problem = _save(request, session_id, slot, draft, request.POST.get("expected_revision"))
        if problem is None:
            return redirect("memory_document", pk=conversation.pk, slot=slot)
    current = documents.read_document(request.tenant, session_id, slot)
    history = documents.document_history(request.tenant, session_id, slot, HISTORY_SHOWN + 1)
    changes = []
    for n, item in enumerate(history[:HISTORY_SHOWN]):  # one more was read: the diff base
        older = history[n + 1]["memory"] if n + 1 < len(history) else None
        changes.append({**item, "diff": diff(older, item["memory"])})
    held = documents.held_changes(request.tenant, session_id, slot)
    for item in held:
        if item["status"] == "pending":  # what it would change, against the current object
            item["diff"] = diff(current["memory"], item["data"])
    return render(
        request,
        "roleplay/memory/document.html",
        {
            "conversation": conversation,
            "slot": slot,
            "current": current,
            "text": draft if draft is not None else pretty(current["memory"]) or "{}",
            "problem": problem,
            "changes": changes,
            "held": held,
        },
        status=409 if problem and problem.get("conflict") else 422 if problem else 200,
    )


def _save(request, session_id: str, slot: str, text: str, expected: str | None) -> dict | None:
    """Write the posted JSON as the next revision; a problem to show next to the editor, or
    None when it was saved."""
    try:
        memory = loads_json(text, "memory")
    except ValueError as exc:
        return {"message": f"This is not JSON: {exc}."}
    try:
        revision = document_writes.put_document(
            request.tenant,
            session_id,
            slot,
            parse_int(expected, expected),  # a non-number as sent: the service refuses it
            memory,
            origin="console",
        )
    except RevisionConflict as exc:
        current = exc.details["current_revision"]
        return {
            "conflict": True,
            "message": f"Someone saved revision {current} meanwhile. Your text is kept below; "
            "compare it with the current document and save again.",
        }
    except MemoryInvalid as exc:
        return {"message": exc.message}
    flash.success(request, f"Saved revision {revision}.")
    return None
