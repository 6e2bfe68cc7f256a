"""One entry of the editor, opened in place: its row, its form, save, add and revert.

htmx swaps a single row (``#r-…``) and, out of band, the draft bar, so the list around it is
never reloaded. The form saves itself to the user's draft on every change (``autosave=1``,
answered with a one-line status), so a reload or a closed tab loses nothing typed; "Save and
close" saves and folds the row back. Without JavaScript the same form posts and the page
comes back with the entry open. Validation is the entry's own rules (``EntryIn`` and the
publish checks that concern one entry, in ``worldbook.editor.services``), shown next to the
field they name.
"""

from __future__ import annotations

from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from console.access import console_view
from worldbook.editor import selectors, services
from worldbook.errors import WorldbookError
from worldbook.views.common import book_or_404, status_for
from worldbook.views.editor import editor_url, parse_query, render_editor, row_view
from worldbook.views.entry_form import attach_error, entry_form, form_html


def _row_response(request, view, key: str, *, form=None, messages=(), status=200):
    """The row (open when ``form`` is given) plus the draft bar, out of band."""
    row = view.row(key) if key in view.merged.index else None
    can_edit = request.membership.can_edit()
    context = {
        "book": view.book,
        "view": view,
        "draft": view.draft,
        "item": row_view(row) if row else None,
        "form_html": form_html(form, read_only=not can_edit) if form is not None else None,
        "form_messages": list(messages),
        "key": key,
        "can_edit": can_edit,
        "oob": True,
    }
    return render(request, "worldbook/_editor_row.html", context, status=status)


def _key(request) -> str:
    return (request.POST.get("key") if request.method == "POST" else request.GET.get("key")) or ""


@console_view()
def entry_row(request, book_id):
    """GET ``?key=``: the entry's row, closed; ``?edit=1``: with its form open."""
    book = book_or_404(request, book_id)
    view = selectors.editor_view(request.tenant, book, request.user)
    key = _key(request)
    if key not in view.merged.index:
        raise Http404("no such entry in this draft")
    row = view.row(key)
    form = entry_form(row.entry) if request.GET.get("edit") else None
    return _row_response(request, view, key, form=form)


@console_view()
@require_POST
def entry_save(request, book_id):
    """Save the posted form to the draft; ``?autosave=1`` answers with a status line only."""
    book = book_or_404(request, book_id)
    key = _key(request)
    autosave = request.GET.get("autosave") == "1"
    form = entry_form(data=request.POST)
    messages: list[str] = []
    view = None
    if form.is_valid():
        try:
            view = services.save_entry(request.tenant, book, request.user, key, form.entry())
        except WorldbookError as exc:
            if exc.kind == "not_found":
                raise Http404(exc.message) from exc
            messages = attach_error(form, exc)
    saved = view is not None
    if view is None:
        view = selectors.editor_view(request.tenant, book, request.user)
    if autosave:
        context = {"saved": saved, "form": form, "messages": messages, "view": view,
                   "book": book, "draft": view.draft, "oob": True, "can_edit": True}  # fmt: skip
        return render(request, "worldbook/_entry_status.html", context)
    if not request.htmx:
        if saved:
            return redirect(editor_url(book, parse_query(request.GET)))
        return render_editor(
            request, view, parse_query(request.GET), status=422,
            editing=key, editing_form=form, form_messages=messages,
        )  # fmt: skip
    if saved:
        return _row_response(request, view, key)
    return _row_response(request, view, key, form=form, messages=messages)


@console_view()
@require_POST
def entry_add(request, book_id):
    """A new empty entry in the draft, opened for editing."""
    book = book_or_404(request, book_id)
    key, view = services.add_entry(request.tenant, book, request.user)
    if not request.htmx:
        return redirect(editor_url(book) + "?edit=" + key)
    return _row_response(request, view, key, form=entry_form(view.row(key).entry))


@console_view()
@require_POST
def entry_revert(request, book_id):
    """Undo the draft's change to one entry (an added entry disappears)."""
    book = book_or_404(request, book_id)
    key = _key(request)
    try:
        view = services.revert_entry(request.tenant, book, request.user, key)
    except WorldbookError as exc:
        return HttpResponse(exc.message, status=status_for(exc), content_type="text/plain")
    if not request.htmx:
        return redirect(editor_url(book))
    return _row_response(request, view, key)
