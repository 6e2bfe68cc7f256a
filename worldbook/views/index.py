"""Vector index status of a revision, with a progress bar htmx polls while a build runs.

"Build index" calls ``request_build`` (the index row is the lock: a running build of the same
revision answers 409 ``index_busy``) and queues ``build_index`` only once the transaction
that marked the row ``building`` has committed, so the worker never reads a stale row.
"""

from __future__ import annotations

from django.contrib import messages as flash
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view
from console.numbers import parse_int
from worldbook import indexing, selectors
from worldbook.errors import WorldbookError
from worldbook.models import IndexStatus
from worldbook.tasks import queue_build
from worldbook.views.common import book_or_404, revision_or_404

ACTIVE = (IndexStatus.PENDING, IndexStatus.BUILDING)


def _status_context(request, book, revision: int, **extra) -> dict:
    index = selectors.latest_index(request.tenant, book, revision)
    status = indexing.index_state(book.pk, revision, index).model_dump()
    total = status.get("chunks_total") or 0
    done = status.get("chunks_done") or 0
    percent = int(done * 100 / total) if total else (100 if status["status"] == "ready" else 0)
    return {
        "book": book,
        "revision": revision,
        "index": index,
        "status": status,
        "percent": percent,
        "polling": status["status"] in ACTIVE,
        "can_edit": request.membership.can_edit(),
        **extra,
    }


@console_view()
def index_page(request, book_id):
    book = book_or_404(request, book_id)
    revision = revision_or_404(request, book, parse_int(request.GET.get("revision"), low=1))
    context = _status_context(request, book, revision.revision)
    return render(request, "worldbook/index.html", context)


@console_view()
def index_status(request, book_id):
    """The status fragment alone (htmx polls it every second while building)."""
    book = book_or_404(request, book_id)
    revision = revision_or_404(request, book, parse_int(request.GET.get("revision"), low=1))
    return render(
        request, "worldbook/_index_status.html", _status_context(request, book, revision.revision)
    )


@console_view()
@require_POST
def index_build(request, book_id):
    book = book_or_404(request, book_id)
    revision = revision_or_404(request, book, parse_int(request.POST.get("revision"), low=1))
    force = request.POST.get("force") in ("1", "on", "true")
    error = None
    notice = None
    try:
        index, started = indexing.request_build(
            request.tenant, book, revision.revision, force=force
        )
        if started:
            queue_build(index.id)
            notice = f"Index build of revision {revision.revision} queued."
        else:
            notice = "The index of this revision is already ready (tick “rebuild” to force)."
    except WorldbookError as exc:
        error = {"code": exc.code, "message": exc.message}
    if request.htmx:
        context = _status_context(
            request, book, revision.revision, build_error=error, notice=notice
        )
        return render(request, "worldbook/_index_status.html", context)
    if error:
        flash.error(request, f"{error['code']}: {error['message']}")
    elif notice:
        flash.success(request, notice)
    return redirect(f"/console/worldbooks/{book.pk}/index/?revision={revision.revision}")
