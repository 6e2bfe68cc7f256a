"""Revision history of a book: the list, one revision read-only, and a diff of any two."""

from __future__ import annotations

from django.shortcuts import render

from console.access import console_view
from console.numbers import parse_int
from worldbook.views.common import book_or_404, revision_or_404
from worldbook.views.diffing import diff_books


@console_view()
def revision_list(request, book_id):
    book = book_or_404(request, book_id)
    revisions = list(
        book.revisions.filter(tenant=request.tenant)
        .order_by("-revision")
        .only("revision", "content_hash", "entry_count", "import_report", "created_at")
    )
    return render(
        request,
        "worldbook/history.html",
        {
            "book": book,
            "revisions": revisions,
            "default_a": max(book.head_revision - 1, 1),
            "default_b": book.head_revision,
        },
    )


@console_view()
def revision_detail(request, book_id, revision):
    book = book_or_404(request, book_id)
    row = revision_or_404(request, book, revision)
    return render(
        request,
        "worldbook/revision.html",
        {
            "book": book,
            "revision": row,
            "entries": row.content.get("entries") or [],
            "report": row.import_report if row.import_report.get("format") != "native" else None,
        },
    )


@console_view()
def revision_diff(request, book_id):
    """``?a=`` (older) and ``?b=`` (newer) revision numbers; defaults: head-1 → head."""
    book = book_or_404(request, book_id)
    b = parse_int(request.GET.get("b"), book.head_revision, low=1)
    a = parse_int(request.GET.get("a"), max(b - 1, 1), low=1)
    old = revision_or_404(request, book, a)
    new = revision_or_404(request, book, b)
    numbers = list(
        book.revisions.filter(tenant=request.tenant)
        .order_by("-revision")
        .values_list("revision", flat=True)
    )
    return render(
        request,
        "worldbook/diff.html",
        {
            "book": book,
            "old": old,
            "new": new,
            "diff": diff_books(old.content, new.content),
            "old_label": f"r{old.revision}",
            "new_label": f"r{new.revision}",
            "numbers": numbers,
        },
    )
