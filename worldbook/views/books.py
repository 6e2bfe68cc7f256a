"""Book list, new book, and the book editor with publish-by-compare-and-set.

The editor is opened at the head revision N and posts ``expected_revision=N`` with the whole
book; ``publish_revision`` moves the head only if it is still N. When someone published in
between, the page answers 409 with the posted forms as they were (nothing typed is lost), the
current revision, a diff link, a reload link, and a button to publish over the new head.
"""

from __future__ import annotations

import json

from django.contrib import messages as flash
from django.db.models import F
from django.http import HttpResponse
from django.shortcuts import redirect, render

from console.models import Role
from console.views import console_view
from worldbook import selectors, services
from worldbook.engine.exporter import export_book
from worldbook.errors import WorldbookError
from worldbook.forms import NewBookForm
from worldbook.models import BookIndex, BookRevision
from worldbook.views.common import (
    book_or_404,
    error_context,
    int_param,
    revision_or_404,
    status_for,
)
from worldbook.views.editing import BookEditor, PackedDataError, blank_row, editor_data


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


def _render_editor(request, book, editor, base, *, status=200, **extra):
    can_edit = request.membership.can_edit()
    if not can_edit:
        editor.disable()
    context = {
        "book": book,
        "editor": editor,
        "base_revision": base,
        "can_edit": can_edit,
        **extra,
    }
    return render(request, "worldbook/editor.html", context, status=status)


@console_view()
def book_editor(request, book_id):
    """GET: the head revision (or ``?from=n``, an older one to restore) in the editor.
    POST: ``action=add_entry`` re-renders with one more row (no JavaScript needed);
    otherwise publishes."""
    book = book_or_404(request, book_id)
    if request.method != "POST":
        source = revision_or_404(request, book, int_param(request.GET.get("from")))
        editor = BookEditor.from_content(source.content)
        return _render_editor(
            request, book, editor, book.head_revision, restored_from=source.revision
        )
    try:
        data = editor_data(request.POST)
    except PackedDataError as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain")
    expected = int_param(data.get("expected_revision"))
    if expected is None:
        return HttpResponse("expected_revision is required", status=400, content_type="text/plain")
    editor = BookEditor.from_post(data)
    if data.get("action") == "add_entry":
        editor.add_blank_row()
        return _render_editor(request, book, editor, expected)
    if not editor.is_valid():
        return _render_editor(request, book, editor, expected, status=422)
    target = int_param(data.get("overwrite_revision"), expected)
    try:
        model = services.parse_book(editor.payload())
        revision = services.publish_revision(request.tenant, book, model, target)
    except WorldbookError as exc:
        if exc.code == "revision_conflict":
            current = exc.details.get("current_revision")
            return _render_editor(
                request, book, editor, expected, status=409, conflict={"current": current}
            )
        editor.apply_error(exc)
        return _render_editor(request, book, editor, expected, status=status_for(exc))
    flash.success(
        request, f"Published revision {revision.revision} ({revision.entry_count} entries)."
    )
    return redirect("wb_editor", book_id=book.pk)


@console_view(read=Role.OPERATOR)
def entry_row(request, book_id):
    """One blank entry row, appended to the editor's table by htmx."""
    book = book_or_404(request, book_id)
    return render(
        request,
        "worldbook/_entry_row.html",
        {"row": blank_row(), "book": book, "can_edit": True, "open": True},
    )


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
