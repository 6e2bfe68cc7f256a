"""Console page of a conversation's Compact summaries (seed 002, Compact): the checkpoint
chain (every version with its status, reason and the version it extends), the newest summary
as the Actor reads it, and the transcript with the messages it covers marked.

Admins act on the newest version while it is active, through
``roleplay.compact.services.edits`` (which audits each action): edit the summary (the plain
text, or one textarea per structured list with one item a line), regenerate it with the
scenario's compactor, or delete it (the next turn rebuilds from the whole history). Each form
carries the version shown (``expected_version``), so a page left open over a newer turn's
checkpoint is refused, not obeyed.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from console.access import console_view
from console.models import Role
from console.owners import conversation_or_404
from memory import selectors as message_reads
from roleplay import labels
from roleplay.compact import selectors as reads
from roleplay.compact.engine.checkpoint import summary_text
from roleplay.compact.services import edits as compact_edits
from roleplay.errors import RoleplayError
from roleplay.scenarios.selectors import scenario_for

PAGE_SIZE = 20
LISTS = (
    ("canonical", "Canonical facts"),
    ("interaction", "Relationship and interaction"),
    ("open_threads", "Open threads"),
)


@console_view()
@require_safe
def conversation_summaries(request, pk):
    """The chain, the newest summary, its covered range in the transcript, and the forms."""
    conversation = conversation_or_404(request, pk)
    rows = reads.versions(conversation)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    newest = rows.first()
    covered = reads.covered_ids(conversation, newest)
    transcript = message_reads.get_full_history(request.tenant, conversation.session_id)
    summary = newest.summary if newest is not None else {}
    context = {
        "conversation": conversation,
        "conversation_title": labels.conversation_title(conversation),
        "run_mode": scenario_for(conversation) if newest is None else None,
        "page": page,
        "newest": newest,
        "summary_text": summary_text(summary) if newest is not None else "",
        "plain": summary.get("format") == "plain_text",
        "lists": [(key, label, "\n".join(summary.get(key) or [])) for key, label in LISTS],
        "can_act": newest is not None and newest.status == "active",
        "transcript": [(m, str(m.pk) in covered) for m in transcript],
        "covered_count": len(covered),
        "intact": newest is not None and reads.covered_messages(conversation, newest) is not None,
        "prepared": reads.preparation(conversation, newest),
    }
    return render(request, "roleplay/summaries/page.html", context)


@console_view(write=Role.ADMIN)
@require_POST
def conversation_summary(request, pk, version):
    """An admin's ``edit``, ``regenerate`` or ``delete`` of version ``version``; back to the
    page with what happened."""
    conversation = conversation_or_404(request, pk)
    row = reads.version(conversation, version)
    if row is None:
        raise Http404("no such checkpoint version")
    back = redirect(reverse("conversation_summaries", args=[conversation.pk]))
    action = request.POST.get("action")
    expected = reads.version_number(request.POST.get("expected_version") or "")
    if action not in compact_edits.ACTIONS or expected is None:
        flash.error(request, "Nothing changed: the form was incomplete; reload the page.")
        return back
    who = {"by": request.user.get_username(), "request": request, "user": request.user}
    try:
        if action == "edit":
            saved = compact_edits.edit(row, _posted_summary(request, row), expected, **who)
        elif action == "regenerate":
            saved = compact_edits.regenerate(row, expected, **who)
        else:
            saved = compact_edits.delete(row, expected, **who)
    except RoleplayError as exc:
        flash.error(request, f"Nothing changed on version {row.version}: {exc.message}.")
        return back
    done = {
        "edit": f"Saved your summary as version {saved.version}.",
        "regenerate": f"The compactor's new summary is version {saved.version}.",
        "delete": f"Version {saved.version} is deleted: the next turn reads the whole history.",
    }
    flash.success(request, done[action])
    return back


def _posted_summary(request, row) -> dict:
    """The summary the edit form posts, in the checkpoint's format: the text, or one item a
    line of each list."""
    if row.summary.get("format") == "plain_text":
        return {"format": "plain_text", "text": request.POST.get("text") or ""}
    summary: dict = {"format": "structured_json"}
    for key, _label in LISTS:
        lines = (request.POST.get(key) or "").splitlines()
        summary[key] = [line.strip() for line in lines if line.strip()]
    return summary
