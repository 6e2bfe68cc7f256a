"""Console page of a conversation's Story (seed 002): one page with tabs (``?tab=``).

- overview: the revision and status, the current event, the turn waiting for the Actor and
  the events waiting for settlement;
- world and narrative: the envelope's two snapshots as tables (and the raw JSON);
- revisions: every revision kept, newest first, with what the Actor saw, and a line diff of
  two revisions' envelopes (``?from=&to=``);
- events: each event's evidence, linked to the transcript and marked when its message
  changed since it was captured, and its settlement attempts;
- quarantine: the events no settlement could settle. Admins retry, discard or resolve one
  (with a note) through ``story.quarantine``, which audits the decision.

Everything is read through ``story.reads``, as the REST API reads it; the conversation and
its names are the runtime's, asked through ``console.owners``.
"""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe

from console.access import console_view
from console.models import Role
from console.numbers import parse_int
from console.owners import conversation_or_404, owners
from console.textdiff import line_diff
from story import quarantine as story_quarantine
from story import reads
from story.engine.narrative import AXES
from story.errors import StoryError
from story.models import QuarantineStatus

TABS = ("overview", "world", "narrative", "revisions", "events", "quarantine")
PAGE_SIZE = 20
# A story's status as the page says it; the stored code stays in the Details fold.
STATUS_WORDS = {
    "none": "No story yet",
    "ready": "Ready for the next turn",
    "waiting_for_acceptance": "Waiting for the player's next message (it accepts the last reply)",
    "settlement_pending": "Settling the last turn in the background",
}


@console_view()
@require_safe
def conversation_story(request, pk):
    """The story page; ``tab`` picks the part shown (the overview by default)."""
    conversation = conversation_or_404(request, pk)
    head = reads.head_for(request.tenant, conversation)
    tab = request.GET.get("tab") if request.GET.get("tab") in TABS else "overview"
    envelope = reads.envelope_of(head)
    story = reads.overview(conversation, head)
    context = {
        "conversation": conversation,
        "conversation_title": owners().conversation_title(conversation),
        "head": head,
        "tab": tab,
        "tabs": TABS,
        "story": story,
        "status_words": STATUS_WORDS.get(story["status"], story["status"]),
        "run_mode": head.scenario if head is not None else owners().scenario_of(conversation),
        "open_quarantines": reads.quarantines(request.tenant, conversation, head)
        .filter(status=QuarantineStatus.OPEN)
        .count(),
    }
    if head is not None:
        context.update(_TAB_CONTEXT[tab](request, conversation, head, envelope))
    return render(request, "roleplay/story/page.html", context)


def _overview(request, conversation, head, envelope) -> dict:
    event = envelope.get("event") if isinstance(envelope.get("event"), dict) else None
    pending = reads.pending_of(envelope)
    unresolved = [e for e in envelope.get("unresolved") or [] if isinstance(e, dict)]
    lists = [(event or {}).get("evidence"), *[e.get("evidence") for e in unresolved]]
    marked = _with_text(request.tenant, reads.marked_evidence(request.tenant, conversation, lists))
    said = owners().message_snippets(
        request.tenant, [(pending or {}).get(key) for key in ("messageId", "userMessageId")]
    )
    return {
        "pending_reply": said.get(str((pending or {}).get("messageId"))),
        "pending_said": said.get(str((pending or {}).get("userMessageId"))),
        "event": event,
        "event_evidence": marked[0],
        "unresolved": list(zip(unresolved, marked[1:], strict=True)),
        "pending": pending,
        "pending_stage": _pretty((pending or {}).get("stage")),
        "accepted_turns": len(envelope.get("acceptedTurns") or []),
        "source_watermark": envelope.get("sourceWatermark"),
    }


def _world(request, conversation, head, envelope) -> dict:
    world = envelope.get("world") if isinstance(envelope.get("world"), dict) else {}
    injections = [i for i in world.get("pendingInjections") or [] if isinstance(i, dict)]
    return {
        "world": world,
        "signal_json": _compact(world.get("pendingSignalDemand")),
        "next_foreground_json": _compact(world.get("pendingNextForeground")),
        "injections": [(i, _compact(i)) for i in injections],
        "world_json": _pretty(world),
    }


def _narrative(request, conversation, head, envelope) -> dict:
    narrative = envelope.get("narrative") if isinstance(envelope.get("narrative"), dict) else {}
    emotion = narrative.get("emotion") if isinstance(narrative.get("emotion"), dict) else {}
    target, observed = emotion.get("target") or {}, emotion.get("observed") or {}
    return {
        "narrative": narrative,
        "lines": [(name, narrative.get(name) or {}) for name in ("main", "sub")],
        "emotion_rows": [(axis, target.get(axis), observed.get(axis)) for axis in AXES],
        "deal_json": _compact(narrative.get("deal")),
        "narrative_json": _pretty(narrative),
    }


def _revisions(request, conversation, head, envelope) -> dict:
    rows = reads.revisions(request.tenant, conversation, head)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    numbers = (parse_int(request.GET.get("from")), parse_int(request.GET.get("to")))
    diff, diff_error = None, ""
    if request.GET.get("from") or request.GET.get("to"):
        old, new = (reads.revision(request.tenant, conversation, head, n) for n in numbers)
        if old is None or new is None:
            diff_error = "Pick two revisions this story has to compare them."
        else:
            diff = line_diff(_pretty(old.envelope), _pretty(new.envelope))
    return {
        "page": page,
        "seen": [(row, _pretty(row.stage)) for row in page],
        "diff_from": numbers[0],
        "diff_to": numbers[1],
        "diff": diff,
        "diff_error": diff_error,
    }


def _events(request, conversation, head, envelope) -> dict:
    rows = reads.events(request.tenant, conversation, head)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    events = reads.with_changes(request.tenant, conversation, page)
    _with_text(request.tenant, [e["evidence"] for e in events])
    return {"page": page, "events": events}


def _quarantine(request, conversation, head, envelope) -> dict:
    rows = reads.quarantines(request.tenant, conversation, head)
    page = Paginator(rows, PAGE_SIZE).get_page(request.GET.get("page"))
    records = list(page)
    lists = [(r.record or {}).get("evidence") for r in records]
    marked = _with_text(request.tenant, reads.marked_evidence(request.tenant, conversation, lists))
    return {"page": page, "records": list(zip(records, marked, strict=True))}


def _with_text(tenant, lists: list[list[dict]]) -> list[list[dict]]:
    """Each evidence piece with ``text``, the first words of its message (one query), so the
    page quotes what was said rather than a message id."""
    said = owners().message_snippets(tenant, [p["message_id"] for items in lists for p in items])
    for items in lists:
        for piece in items:
            piece["text"] = said.get(piece["message_id"], "")
    return lists


_TAB_CONTEXT = {
    "overview": _overview,
    "world": _world,
    "narrative": _narrative,
    "revisions": _revisions,
    "events": _events,
    "quarantine": _quarantine,
}


@console_view(write=Role.ADMIN)
@require_POST
def conversation_story_quarantine(request, pk, quarantine_id):
    """An admin's decision (``retry``, ``discard`` or ``resolve`` with a ``note``) on one
    quarantine record; back to the quarantine tab with what happened."""
    conversation = conversation_or_404(request, pk)
    record = reads.quarantine(request.tenant, conversation, quarantine_id)
    if record is None:
        raise Http404("no such quarantine record")
    back = redirect(reverse("conversation_story", args=[conversation.pk]) + "?tab=quarantine")
    decision = request.POST.get("decision")
    if decision not in story_quarantine.DECISIONS:
        flash.error(request, "Nothing decided: choose retry, discard or resolve.")
        return back
    try:
        story_quarantine.decide(
            record,
            decision,
            note=request.POST.get("note") or "",
            by=request.user.get_username(),
            request=request,
            user=request.user,
        )
    except StoryError as exc:
        flash.error(request, f"Nothing decided on event {record.event_id}: {exc.message}.")
        return back
    done = {"retry": "back in the settlement queue", "discard": "discarded", "resolve": "resolved"}
    flash.success(request, f"Event {record.event_id} is {done[decision]}.")
    return back


def _compact(value) -> str:
    return "" if value is None else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _pretty(value) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)
