"""Book list, new book and export; the editor itself is ``views/editor.py``."""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import redirect, render

from console.access import console_view
from console.models import Role
from worldbook import selectors, services
from worldbook.engine.exporter import export_book
from worldbook.errors import WorldbookError
from worldbook.forms import NewBookForm
from worldbook.models import BookIndex, BookRevision
from worldbook.views.common import (
    book_or_404,
    error_context,
    revision_or_404,
)


def _index_summaries(tenant, books) -> dict:
    """The latest index row of each book's head revision, in one query."""
    heads = {book.pk: book.head_revision for book in books}
    out: dict = {}
    rows = BookIndex.objects.filter(tenant=tenant, book_id__in=list(heads)).order_by(
        "book_id", "-created_at"
    )
    for index in rows:
        if index.revision == heads.get(index.book_id) and index.book_id not in out:
            out[index.book_id] = index
    return out


@console_view()
def book_list(request):
    books = list(selectors.scoped_books(request.tenant))
    counts = dict(
        BookRevision.objects.filter(
            tenant=request.tenant, book__in=books, revision=F("book__head_revision")
        ).values_list("book_id", "entry_count")
    )
    indexes = _index_summaries(request.tenant, books)
    rows = [(book, counts.get(book.pk, 0), indexes.get(book.pk)) for book in books]
    return render(request, "worldbook/list.html", {"rows": rows})


@console_view(read=Role.OPERATOR)
def book_create(request):
    form = NewBookForm(request.POST) if request.method == "POST" else NewBookForm()
    error = None
    if request.method == "POST" and form.is_valid():
        try:
            model = services.parse_book({**form.cleaned_data, "entries": []})
        except WorldbookError as exc:
            error = error_context(exc)
        else:
            book, _ = services.create_book(request.tenant, model)
            flash.success(request, f"Book “{book.name}” created at revision 1.")
            return redirect("wb_editor", book_id=book.pk)
    return render(request, "worldbook/new.html", {"form": form, "error": error})


@console_view()
def export_revision(request, book_id, revision):
    """A revision as a native or SillyTavern JSON download."""
    book = book_or_404(request, book_id)
    row = revision_or_404(request, book, revision)
    fmt = request.GET.get("format", "native")
    if fmt not in ("native", "sillytavern"):
        return HttpResponse("format must be native or sillytavern", status=400)
    body = json.dumps(export_book(row.content, fmt), ensure_ascii=False, indent=2)
    response = HttpResponse(body, content_type="application/json; charset=utf-8")
    filename = f"worldbook-{book.pk}-r{row.revision}-{fmt}.json"
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response
