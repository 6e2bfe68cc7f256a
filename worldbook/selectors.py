"""Reads of worldbooks: books, revisions, parsed revisions (cached), bindings."""

from __future__ import annotations

import uuid
from collections import OrderedDict
from threading import Lock

from console.scoping import LOOKUP_MISSES, scoped
from worldbook import errors
from worldbook.engine.schema import BookIn, EntryIn
from worldbook.engine.selection import LoadedBook
from worldbook.models import Book, BookIndex, BookRevision, PromptBinding

# Revisions are immutable, so a parsed revision can be cached forever by (id, rev, hash).
_CACHE_SIZE = 64
_cache: OrderedDict[tuple[str, int, str], LoadedBook] = OrderedDict()
_cache_lock = Lock()
# (book id, revision) -> content hash: a revision never changes once written (and goes only
# with its book), so a turn need not ask the database again.
_HASHES_SIZE = 4096
_hashes: OrderedDict[tuple[str, int], str] = OrderedDict()


def revision_hash(book_id, revision: int) -> str | None:
    """The content hash of the book's revision, or None when there is no such revision."""
    key = (str(book_id), revision)
    with _cache_lock:
        known = _hashes.get(key)
    if known is not None:
        return known
    found = (
        BookRevision.objects.filter(book_id=book_id, revision=revision)
        .values_list("content_hash", flat=True)
        .first()
    )
    if found is not None:
        with _cache_lock:
            _hashes[key] = found
            while len(_hashes) > _HASHES_SIZE:
                _hashes.popitem(last=False)
    return found


def get_book(tenant, book_id) -> Book:
    try:
        return scoped(Book, tenant).get(pk=book_id)
    except LOOKUP_MISSES as exc:
        raise errors.not_found(f"book {book_id} not found") from exc


def get_revision(tenant, book: Book, revision: int | None) -> BookRevision:
    number = book.head_revision if revision is None else revision
    row = BookRevision.objects.filter(tenant=tenant, book=book, revision=number).first()
    if row is None:
        raise errors.not_found(f"revision {number} of book {book.id} not found")
    return row


def _parse(row_content: dict) -> list[EntryIn]:
    return BookIn.model_validate(row_content).entries


def load_books(tenant, refs: list[tuple[str, int | None]]) -> list[LoadedBook]:
    """Exact revisions for selection/search; content is fetched only on a cache miss."""
    ids = [book_id for book_id, _ in refs]
    books = {}
    valid = [u for u in map(_as_uuid, ids) if u is not None]
    for book in Book.objects.filter(tenant=tenant, pk__in=valid):
        books[str(book.id)] = book
    out: list[LoadedBook] = []
    for book_id, revision in refs:
        book = books.get(canonical_book_id(book_id))
        if book is None:
            raise errors.not_found(f"book {book_id} not found")
        number = book.head_revision if revision is None else revision
        meta = revision_hash(book.id, number)
        if meta is None:
            raise errors.not_found(f"revision {number} of book {book_id} not found")
        key = (str(book.id), number, meta)
        with _cache_lock:
            hit = _cache.get(key)
            if hit is not None:
                _cache.move_to_end(key)
        if hit is None:
            content = BookRevision.objects.values_list("content", flat=True).get(
                book=book, revision=number
            )
            hit = LoadedBook(str(book.id), number, meta, _parse(content))
            with _cache_lock:
                _cache[key] = hit
                while len(_cache) > _CACHE_SIZE:
                    _cache.popitem(last=False)
        out.append(hit)
    return out


def canonical_book_id(book_id) -> str:
    """``str(uuid)`` of a book id however it is spelled (upper case, no hyphens), or the
    input unchanged when it is not a UUID (it then matches no book)."""
    parsed = _as_uuid(book_id)
    return str(parsed) if parsed is not None else str(book_id)


def _as_uuid(value) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value))
    except ValueError:
        return None


def scoped_books(tenant):
    return Book.objects.filter(tenant=tenant).order_by("-updated_at")


def latest_index(tenant, book: Book, revision: int) -> BookIndex | None:
    return (
        BookIndex.objects.filter(tenant=tenant, book=book, revision=revision)
        .order_by("-created_at")
        .first()
    )


def list_bindings(tenant, prompt_id: str) -> list[PromptBinding]:
    return list(
        PromptBinding.objects.filter(tenant=tenant, prompt_id=prompt_id)
        .select_related("book")
        .order_by("position", "id")
    )


def resolve_bindings(tenant, prompt_id: str) -> list[dict]:
    """Concrete ``book_id + revision`` of the enabled bindings; a broken one fails loudly."""
    out = []
    rows = (
        PromptBinding.objects.filter(tenant=tenant, prompt_id=prompt_id, enabled=True)
        .order_by("position", "id")
        .values_list("book_id", "revision", "book__head_revision")
    )
    for book_id, pinned, head in rows:  # every turn reads these: no model instances
        revision = head if pinned is None else pinned
        if revision_hash(book_id, revision) is None:
            raise errors.Conflict(
                "binding_broken",
                f"binding to book {book_id} revision {revision} cannot be resolved",
                {"book_id": str(book_id), "revision": revision},
            )
        out.append({"book_id": str(book_id), "revision": revision})
    return out
