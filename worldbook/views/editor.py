"""The book editor: a paged, searchable entry list over the user's draft, bulk actions, and
the draft's publish / discard / rebase / restore.

The page never renders the whole book: it shows one page of rows (``engine.listing``) with
the book's and the filter's token totals. Filtering, sorting and paging swap only the list
(htmx, with the query pushed to the address bar so a reload shows the same list); without
JavaScript the same links and forms load the page. An entry opens in place
(``views/entries.py``). Every write goes to the user's draft through
``worldbook.editor.services``; a bulk action is published at once as one revision.
A publish against a head that moved answers 409 with the draft intact and a way forward:
update the draft to the new head (keeping every change), see what changed, or discard.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from urllib.parse import urlencode

from django.contrib import messages as flash
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from pydantic import ValidationError

from console.access import console_view
from console.numbers import parse_int
from worldbook import errors
from worldbook.editor import selectors, services
from worldbook.engine.bulk import BulkEdit
from worldbook.engine.listing import PAGE_SIZES, EntryQuery, Row, groups_of, page_of
from worldbook.engine.schema import KINDS, POSITIONS
from worldbook.errors import WorldbookError
from worldbook.forms import BookForm
from worldbook.services import parse_model
from worldbook.views.common import book_or_404, error_context, status_for
from worldbook.views.diffing import diff_books
from worldbook.views.entry_form import entry_form, form_html

FILTER_PREFIX = "f_"
SORTS = (("book", "book order"), ("order", "order"), ("title", "title"),
         ("tokens", "tokens"), ("updated", "updated"))  # fmt: skip


def dom_id(key: str) -> str:
    """A stable element id for an entry key (keys may hold any character)."""
    return "r-" + hashlib.sha1(key.encode("utf-8")).hexdigest()[:12]


@dataclass(frozen=True)
class RowView:
    """A list row as the templates use it."""

    row: Row
    dom: str

    @property
    def entry(self) -> dict:
        return self.row.entry


def row_view(row: Row) -> RowView:
    return RowView(row, dom_id(row.key))


def parse_query(data, prefix: str = "") -> EntryQuery:
    """The list query from a query string (or the bulk form's ``f_`` fields); a bad value is
    a 400 naming it."""
    raw = {}
    for name in EntryQuery.model_fields:
        value = data.get(prefix + name)
        if value not in (None, ""):
            raw[name] = int(value) if name in ("page", "per") and value.isdigit() else value
    try:
        return EntryQuery.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise errors.BadRequest("invalid_filter", f"{where}: {first['msg']}") from exc


def editor_url(book, query: EntryQuery | None = None, **changes) -> str:
    params = query.params(**changes) if query is not None else {}
    base = reverse("wb_editor", args=[book.pk])
    return f"{base}?{urlencode(params)}" if params else base


def _context(request, view: selectors.EditorView, query: EntryQuery, **extra) -> dict:
    page = page_of(view.rows, query)
    can_edit = request.membership.can_edit()
    editing = extra.pop("editing", None)
    form = extra.pop("editing_form", None)
    if editing and editing in view.merged.index:
        row = view.row(editing)
        form = form or entry_form(row.entry)
        extra["editing"] = editing
        extra["editing_item"] = row_view(row)
        extra["editing_html"] = form_html(form, read_only=not can_edit)
        extra["editing_on_page"] = any(r.key == editing for r in page.rows)
    return {
        "book": view.book,
        "view": view,
        "draft": view.draft,
        "query": query,
        "page": page,
        "rows": [row_view(row) for row in page.rows],
        "can_edit": can_edit,
        "positions": POSITIONS,
        "kinds": KINDS,
        "groups": groups_of(view.rows),
        "sorts": SORTS,
        "page_sizes": PAGE_SIZES,
        "query_fields": [(FILTER_PREFIX + k, v) for k, v in query.params(page=1).items()],
        "page_links": _page_links(view.book, query, page.number, page.pages),
        "list_url": editor_url(view.book),
        "metadata_json": json.dumps(view.merged.fields.get("metadata") or {}, ensure_ascii=False),
        **extra,
    }


def _page_links(book, query: EntryQuery, number: int, pages: int) -> list[tuple[str, str]]:
    shown = sorted({1, pages, *range(max(1, number - 2), min(pages, number + 2) + 1)})
    links, last = [], 0
    for n in shown:
        if n - last > 1:
            links.append(("…", ""))
        links.append((str(n), "" if n == number else editor_url(book, query, page=n)))
        last = n
    return links


def render_editor(request, view, query, *, status: int = 200, **extra) -> HttpResponse:
    """The whole editor page, or only its list when htmx asked for the list."""
    context = _context(request, view, query, **extra)
    if request.htmx and request.htmx.target == "wb-list":
        return render(request, "worldbook/_editor_list.html", context)
    return render(request, "worldbook/editor.html", context, status=status)


@console_view()
def book_editor(request, book_id):
    """GET: the list (``?q=``, filters, ``sort``, ``dir``, ``page``, ``per``; ``edit=KEY``
    opens that entry, for browsers without JavaScript)."""
    book = book_or_404(request, book_id)
    try:
        query = parse_query(request.GET)
    except WorldbookError as exc:
        return HttpResponse(exc.message, status=400, content_type="text/plain")
    view = selectors.editor_view(request.tenant, book, request.user)
    return render_editor(request, view, query, editing=request.GET.get("edit"))


def _back(request, book, query: EntryQuery | None = None):
    return redirect(editor_url(book, query))


def _conflict_page(request, book, exc: WorldbookError, query: EntryQuery | None = None):
    """The editor again, answering the failed publish: 409 with the conflict, or the error."""
    view = selectors.editor_view(request.tenant, book, request.user)
    extra: dict = {}
    if exc.code == "revision_conflict":
        extra["conflict"] = {"current": exc.details.get("current_revision")}
    else:
        extra["error"] = error_context(exc)
    return render_editor(request, view, query or EntryQuery(), status=status_for(exc), **extra)


@console_view()
@require_POST
def bulk_action(request, book_id):
    """Apply one action to the ticked entries (``keys``) or to everything the filter matches
    (``scope=filter``, with the filter in ``f_`` fields and the count the user saw in
    ``expected``), then publish the draft as one revision."""
    book = book_or_404(request, book_id)
    query = EntryQuery()
    try:
        query = parse_query(request.POST, FILTER_PREFIX)
        data = {name: request.POST.get(name) for name in BulkEdit.model_fields}
        edit = parse_model(BulkEdit, {k: v for k, v in data.items() if v not in (None, "")})
        scope = request.POST.get("scope", "selection")
        result = services.bulk_edit(
            request.tenant,
            book,
            request.user,
            edit,
            keys=request.POST.getlist("keys") if scope != "filter" else None,
            query=query if scope == "filter" else None,
            expected=parse_int(request.POST.get("expected"), low=1) if scope == "filter" else None,
        )
    except WorldbookError as exc:
        return _conflict_page(request, book, exc, query)
    flash.success(
        request,
        f"{edit.describe().capitalize()} on {result.selected} entries: {result.changed} "
        f"changed; published revision {result.revision.revision}.",
    )
    return _back(request, book, query)


@console_view()
@require_POST
def draft_publish(request, book_id):
    book = book_or_404(request, book_id)
    try:
        revision = services.publish_draft(request.tenant, book, request.user)
    except WorldbookError as exc:
        return _conflict_page(request, book, exc)
    flash.success(
        request, f"Published revision {revision.revision} ({revision.entry_count} entries)."
    )
    return _back(request, book)


@console_view()
@require_POST
def draft_discard(request, book_id):
    book = book_or_404(request, book_id)
    services.discard_draft(request.tenant, book, request.user)
    flash.info(request, "Your unpublished changes were discarded.")
    return _back(request, book)


@console_view()
@require_POST
def draft_rebase(request, book_id):
    book = book_or_404(request, book_id)
    both = services.rebase_draft(request.tenant, book, request.user)
    book.refresh_from_db(fields=["head_revision"])
    message = (
        f"Your draft now starts from revision {book.head_revision}; all your changes are kept."
    )
    if not both:
        flash.success(request, message)
    else:
        shown = ", ".join(both[:10]) + (" …" if len(both) > 10 else "")
        flash.warning(
            request, f"{message} Also changed there, now with your version: {shown}. Review them."
        )
    return _back(request, book)


@console_view()
@require_POST
def draft_restore(request, book_id):
    book = book_or_404(request, book_id)
    number = parse_int(request.POST.get("revision"), low=1)
    if number is None:
        return HttpResponse("revision is required", status=400, content_type="text/plain")
    try:
        services.restore_revision(request.tenant, book, request.user, number)
    except WorldbookError as exc:
        return HttpResponse(exc.message, status=status_for(exc), content_type="text/plain")
    flash.info(
        request,
        f"Revision {number} is loaded into your draft; publishing it makes a new revision.",
    )
    return _back(request, book)


@console_view()
@require_POST
def draft_book_fields(request, book_id):
    book = book_or_404(request, book_id)
    form = BookForm(request.POST)
    if not form.is_valid():
        flash.error(request, "Book fields not saved: " + form.errors.as_text())
        return _back(request, book)
    try:
        services.set_book_fields(request.tenant, book, request.user, form.cleaned_data)
    except WorldbookError as exc:
        flash.error(request, f"Book fields not saved: {exc.message}")
    return _back(request, book)


@console_view()
def draft_changes(request, book_id):
    """What publishing the draft would change, against its base revision."""
    book = book_or_404(request, book_id)
    view = selectors.editor_view(request.tenant, book, request.user)
    old = {**view.base.fields, "entries": [row.entry for row in view.base.rows]}
    return render(
        request,
        "worldbook/draft_changes.html",
        {
            "book": book,
            "view": view,
            "diff": diff_books(old, view.content()),
            "old_label": f"r{view.base.revision}",
            "new_label": "your draft",
        },
    )
