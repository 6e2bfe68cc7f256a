"""Console review queue of memory candidates, and what the memory console pages share.

The queue lists the tenant's ``candidate`` entries oldest first, each with its evidence: the
message span it came from, highlighted, and the messages before and after it in the same
conversation. Operators accept, edit-and-accept or reject each one; every action is a plain
form that posts here and comes back to the queue focused on the next candidate (the keyboard
of ``static/js/memory-queue.js`` only moves focus and presses those buttons). Every write
goes through ``memory.entries.services``; a refused write is shown as a flash message with
its 4xx status and changes nothing.
"""

from __future__ import annotations

import uuid

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.db import transaction
from django.db.models import OuterRef, Prefetch, Subquery
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console import numbers, refusals
from console.access import console_view
from console.failures import DomainError
from console.numbers import parse_int
from console.owners import owners
from console.scoping import get_scoped_or_404
from memory.entries import services as entry_writes
from memory.models import EntryStatus, MemoryEntry, MemoryEvidence, Message

QUEUE_PAGE_SIZE = 25
QUEUE_ACTIONS = ("accept", "edit_accept", "reject")
DONE = {"accept": "Accepted", "edit_accept": "Edited and accepted", "reject": "Rejected"}


# --- shared by the memory console pages -------------------------------------------------


def entry_or_404(request, entry_id) -> MemoryEntry:
    """The tenant's entry (another tenant's, or a missing one, is a 404)."""
    rows = MemoryEntry.objects.select_related("player")
    return get_scoped_or_404(rows, request.tenant, pk=entry_id)


def posted_version(request):
    """The posted ``version`` as an integer, or as sent: the service refuses anything else
    with a clear message (``invalid_version``)."""
    value = request.POST.get("version", "")
    return parse_int(value, value)


ENTRY_CHANGED = (
    "Someone changed this entry meanwhile (it is now at version {current}). "
    "Your text is kept: check it against the current entry and submit again."
)


def refused(request, exc: DomainError) -> int:
    """Flash why a memory write was refused; the HTTP status of its kind (never a 500)."""
    return refusals.refused(request, exc, stale=ENTRY_CHANGED, nothing_changed=False)


def _neighbour(before: bool):
    """Subquery: the message just before (or after) the evidence's message in its session."""
    rows = Message.objects.filter(
        tenant=OuterRef("tenant"),
        session_id=OuterRef("message__session_id"),
        **{"ts__lt" if before else "ts__gt": OuterRef("message__ts")},
    )
    return rows.order_by("-ts" if before else "ts")


def with_evidence(entries):
    """``entries`` with their evidence prefetched in one query: each row's message and the
    role and text of the messages around it (see :func:`evidence_view`)."""
    rows = MemoryEvidence.objects.select_related("message").order_by("created_at", "id")
    around = {}
    for name, before in (("previous", True), ("following", False)):
        for field in ("role", "content"):
            around[f"{name}_{field}"] = Subquery(_neighbour(before).values(field)[:1])
    return entries.prefetch_related(Prefetch("evidence", queryset=rows.annotate(**around)))


def evidence_view(evidence: MemoryEvidence) -> dict:
    """One evidence row as the ``_evidence.html`` partial shows it: the message text cut
    around the span [start, end) (the template escapes each part and marks the span)."""
    text = evidence.message.content
    start = min(evidence.start, len(text))
    end = min(max(evidence.end, start), len(text))
    return {
        "row": evidence,
        "message": evidence.message,
        "before": text[:start],
        "span": text[start:end],
        "after": text[end:],
        "changed": text[start:end] != evidence.quote,
        "previous": _around(evidence, "previous"),
        "following": _around(evidence, "following"),
    }


def _around(evidence, name: str) -> dict | None:
    role = getattr(evidence, f"{name}_role", None)
    if role is None:
        return None
    return {"role": role, "content": getattr(evidence, f"{name}_content")}


def evidences(entry: MemoryEntry) -> list[dict]:
    return [evidence_view(row) for row in entry.evidence.all()]


# --- the queue --------------------------------------------------------------------------


def _queue_page(request, *, status=200, drafts=None, focus="", page_number=None):
    rows = with_evidence(
        MemoryEntry.objects.filter(tenant=request.tenant, status=EntryStatus.CANDIDATE)
        .select_related("player")
        .order_by("created_at", "id")
    )
    number = page_number or numbers.page_number(request.GET.get("page"))
    page = Paginator(rows, QUEUE_PAGE_SIZE).get_page(number)
    candidates = list(page)
    drafts = drafts or {}
    items = []
    for n, entry in enumerate(candidates):
        after = candidates[n + 1] if n + 1 < len(candidates) else None
        after = after or (candidates[n - 1] if n else None)
        items.append(
            {
                "entry": entry,
                "evidence": evidences(entry),
                "draft": drafts.get(str(entry.pk), entry.content),
                "next_id": str(after.pk) if after else "",
            }
        )
    owners().name_evidence(request.tenant, [ev for item in items for ev in item["evidence"]])
    context = {"page": page, "items": items, "focus": focus}
    return render(request, "roleplay/memory/queue.html", context, status=status)


@console_view()
def memory_queue(request):
    """The candidates to review, oldest first, each with its evidence."""
    return _queue_page(request)


def _next_id(value: str) -> str:
    try:
        return str(uuid.UUID(value))
    except (TypeError, ValueError):
        return ""


@console_view()
@require_POST
def memory_queue_action(request, entry_id):
    """Accept, edit-and-accept or reject one candidate; back to the queue, focused on the
    next candidate. A refusal shows the queue again with the reason and the typed text."""
    entry = entry_or_404(request, entry_id)
    action = request.POST.get("action", "")
    page_number = numbers.page_number(request.POST.get("page"))
    if action not in QUEUE_ACTIONS:
        flash.error(request, "Unknown action: choose accept, edit and accept, or reject.")
        return _queue_page(request, status=400, focus=str(entry.pk), page_number=page_number)
    content = request.POST.get("content", "")
    version = posted_version(request)
    try:
        if action == "reject":
            entry_writes.reject(request.tenant, entry, version)
        elif action == "accept":
            entry_writes.accept(request.tenant, entry, version)
        else:
            with transaction.atomic():  # the edit is undone if the accept is refused
                edited = entry_writes.update_entry(request.tenant, entry, version, content=content)
                entry_writes.accept(request.tenant, edited, edited.version)
    except DomainError as exc:
        status = refused(request, exc)
        drafts = {str(entry.pk): content} if action == "edit_accept" else {}
        return _queue_page(
            request, status=status, drafts=drafts, focus=str(entry.pk), page_number=page_number
        )
    flash.success(request, f"{DONE[action]}: “{_short(entry.content)}”.")
    target = f"{reverse('memory_queue')}?page={page_number}"
    following = _next_id(request.POST.get("next", ""))
    return redirect(f"{target}#candidate-{following}" if following else target)


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
