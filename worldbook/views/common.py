"""Helpers every worldbook console page shares: scoped lookups and error rendering."""

from __future__ import annotations

from django.http import Http404

from console.failures import HTTP_STATUS
from console.scoping import get_scoped_or_404
from worldbook.errors import WorldbookError
from worldbook.models import Book, BookRevision


def book_or_404(request, book_id) -> Book:
    """The user's tenant's book; another tenant's id is a 404 like a missing one."""
    return get_scoped_or_404(Book, request.tenant, pk=book_id)


def revision_or_404(request, book: Book, number: int | None) -> BookRevision:
    number = book.head_revision if number is None else number
    row = BookRevision.objects.filter(tenant=request.tenant, book=book, revision=number).first()
    if row is None:
        raise Http404("no such revision")
    return row


def error_context(exc: WorldbookError) -> dict:
    """The template shape of an error: ``{"code", "message", "details"}``."""
    return exc.to_dict()


def status_for(exc: WorldbookError) -> int:
    """Console pages answer with the API's 4xx status (the page itself still renders)."""
    status = HTTP_STATUS[exc.kind]
    return status if 400 <= status < 500 else 400
