"""Console page of the tenant's learn and forget jobs (``memory.jobs``): newest first,
filtered by status, each with its attempts, last error and result; an operator retries a
failed or cancelled job and cancels a queued or failed one. Every write goes through
``memory.jobs``; a refused one is a flash message with its 4xx status. Below them, the
newest background consolidation runs (the runtime's, ``memory.runtime``) with
their batch, outcome, refusal reason and model calls; and how far the recall index has moved
to the current embedder (the minute's ``memory.rebuild_recall``)."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import messages as flash
from django.core.paginator import Paginator
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from console.access import console_view
from console.failures import DomainError
from console.numbers import page_number
from console.owners import owners
from console.scoping import get_scoped_or_404
from memory import jobs
from memory.models import ConsolidationRun, JobStatus, MemoryJob
from memory.recall import indexing
from memory.views.queue import refused

PAGE_SIZE = 50
RUNS_SHOWN = 20
ACTIONS = {"retry": jobs.retry, "cancel": jobs.cancel}


@console_view()
def memory_jobs(request, *, status=200):
    """The jobs, newest first (``?status=`` one of the job statuses)."""
    wanted = request.GET.get("status", "")
    rows = MemoryJob.objects.filter(tenant=request.tenant).select_related("player")
    if wanted in JobStatus.values:
        rows = rows.filter(status=wanted)
    page = Paginator(rows.order_by("-created_at", "id"), PAGE_SIZE).get_page(
        page_number(request.GET.get("page"))
    )
    context = {
        "page": page,
        "statuses": JobStatus.values,
        "wanted": wanted if wanted in JobStatus.values else "",
        "query": urlencode({"status": wanted}) if wanted in JobStatus.values else "",
        "max_attempts": jobs.MAX_ATTEMPTS,
        "runs": _titled(
            request.tenant,
            ConsolidationRun.objects.filter(tenant=request.tenant)
            .select_related("player")
            .order_by("-created_at")[:RUNS_SHOWN],
        ),
        "recall_index": indexing.progress(request.tenant),
    }
    return render(request, "roleplay/memory/jobs.html", context, status=status)


def _titled(tenant, runs) -> list:
    """``runs`` with ``conversation_label``, their conversation's title (None when gone)."""
    runs = list(runs)
    found = owners().conversation_labels(tenant, [run.conversation_id for run in runs])
    for run in runs:
        run.conversation_label = found.get(str(run.conversation_id))
    return runs


@console_view()
@require_POST
def memory_job_action(request, job_id):
    """Retry or cancel one job; back to the list."""
    job = get_scoped_or_404(MemoryJob.objects.all(), request.tenant, pk=job_id)
    action = request.POST.get("action", "")
    if action not in ACTIONS:
        flash.error(request, "Unknown action: choose retry or cancel.")
        return memory_jobs(request, status=400)
    try:
        ACTIONS[action](request.tenant, job)
    except DomainError as exc:
        return memory_jobs(request, status=refused(request, exc))
    flash.success(
        request, f"Job {str(job.pk)[:8]}: {'queued again' if action == 'retry' else 'cancelled'}."
    )
    return redirect(reverse("memory_jobs"))
