"""Reads of worldbooks: books, revisions, parsed revisions (cached), bindings."""

from __future__ import annotations

import uuid
from collections import OrderedDict
from dataclasses import dataclass
from threading import Lock

from django.db import connection

from console.rows import prepared
from console.scoping import LOOKUP_MISSES, scoped
from worldbook import compiled, errors
from worldbook.engine.scopes import ScopedBook
from worldbook.engine.selection import LoadedBook
from worldbook.models import (
    Book,
    BookIndex,
    BookRevision,
    IndexStatus,
    PromptBinding,
    ScopeSettings,
)

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


def list_bindings(tenant, prompt_id: str, scope: str = "prompt") -> list[PromptBinding]:
    return list(
        PromptBinding.objects.filter(tenant=tenant, scope=scope, prompt_id=prompt_id)
        .select_related("book")
        .order_by("position", "id")
    )


def resolve_bindings(tenant, prompt_id: str) -> list[dict]:
    """Concrete ``book_id + revision`` of the enabled bindings; a broken one fails loudly."""
    out = []
    rows = (
        PromptBinding.objects.filter(
            tenant=tenant, scope="prompt", prompt_id=prompt_id, enabled=True
        )
        .order_by("position", "id")
        .values_list("book_id", "revision", "book__head_revision")
    )
    for book_id, pinned, head in rows:  # every turn reads these: no model instances
        revision = head if pinned is None else pinned
        if revision_hash(book_id, revision) is None:
            raise _broken(book_id, revision)
        out.append({"book_id": str(book_id), "revision": revision})
    return out


@dataclass(frozen=True)
class BoundRevision:
    """One enabled binding of a prompt as a turn selects with it: the exact revision, its
    content hash and the ready vector index of that revision for the embedder (if any)."""

    book_id: str
    revision: int
    content_hash: str
    index_id: int | None

    def ref(self) -> dict:
        return {"book_id": self.book_id, "revision": self.revision}

    def load(self) -> LoadedBook:
        return compiled.get(self.book_id, self.revision, self.content_hash)


# Every turn of a character with books runs this: one statement for what the ORM reads in
# 2 + 2 per book (bindings, books, revision hashes, ready indexes). Pinned to those slow
# reads (resolve_bindings, revision_hash, ready_index) by tests/fastpaths/test_worldbook_reads.py.
_BOUND_SQL = f"""
    SELECT pb.book_id, rev.number, r.content_hash, (
        SELECT i.id FROM {BookIndex._meta.db_table} i
        WHERE i.book_id = pb.book_id AND i.revision = rev.number AND i.tenant_id = pb.tenant_id
          AND i.embedding_version = %s AND i.status = '{IndexStatus.READY.value}'
    )
    FROM {PromptBinding._meta.db_table} pb
    JOIN {Book._meta.db_table} b ON b.id = pb.book_id AND b.tenant_id = pb.tenant_id
    CROSS JOIN LATERAL (SELECT COALESCE(pb.revision, b.head_revision) AS number) rev
    LEFT JOIN {BookRevision._meta.db_table} r ON r.book_id = pb.book_id AND r.revision = rev.number
    WHERE pb.tenant_id = %s AND pb.scope = %s AND pb.prompt_id = %s AND pb.enabled
    ORDER BY pb.position, pb.id
"""


def bound_revisions(
    tenant, prompt_id: str, embedding_version: str, *, scope: str = "prompt"
) -> list[BoundRevision]:
    """What :func:`resolve_bindings` resolves, with each revision's hash and ready index, in
    one round trip; a broken binding fails loudly the same way."""
    with prepared(_BOUND_SQL, [embedding_version, tenant.pk, scope, prompt_id]) as cursor:
        rows = cursor.fetchall()
    out = []
    for book_id, revision, content_hash, index_id in rows:
        if content_hash is None:
            raise _broken(book_id, revision)
        out.append(BoundRevision(str(book_id), revision, content_hash, index_id))
    return out


# A conversation's turn: the enabled bindings of every scope it meets (``engine.scopes``),
# with each revision's hash and ready index and the tenant's scope strategy, in one round
# trip (the same reads as ``_BOUND_SQL``, for several (scope, prompt id) pairs at once).
_SCOPED_SQL = f"""
    SELECT pb.scope, pb.position, pb.book_id, rev.number, r.content_hash, (
        SELECT i.id FROM {BookIndex._meta.db_table} i
        WHERE i.book_id = pb.book_id AND i.revision = rev.number AND i.tenant_id = pb.tenant_id
          AND i.embedding_version = %s AND i.status = '{IndexStatus.READY.value}'
    ), (
        SELECT s.character_strategy FROM {ScopeSettings._meta.db_table} s
        WHERE s.tenant_id = pb.tenant_id
    )
    FROM {PromptBinding._meta.db_table} pb
    JOIN {Book._meta.db_table} b ON b.id = pb.book_id AND b.tenant_id = pb.tenant_id
    CROSS JOIN LATERAL (SELECT COALESCE(pb.revision, b.head_revision) AS number) rev
    LEFT JOIN {BookRevision._meta.db_table} r ON r.book_id = pb.book_id AND r.revision = rev.number
    WHERE pb.tenant_id = %s AND pb.enabled
      AND (pb.scope, pb.prompt_id) IN (SELECT * FROM unnest(%s::text[], %s::text[]))
    ORDER BY pb.scope, pb.position, pb.id
"""


@dataclass(frozen=True)
class ScopedRead:
    """Every scope's enabled bindings (``engine.scopes.ScopedBook``, each ``item`` its
    :class:`BoundRevision`) and the tenant's scope strategy (None: never set)."""

    books: list[ScopedBook]
    tenant_strategy: str | None


def scoped_revisions(tenant, targets: list[tuple[str, str]], embedding_version: str) -> ScopedRead:
    """The bindings of every ``(scope, prompt id)`` in ``targets`` resolved as
    :func:`bound_revisions` resolves one prompt's, in one statement; a broken binding fails
    loudly the same way."""
    scopes_, ids = [t[0] for t in targets], [t[1] for t in targets]
    with prepared(_SCOPED_SQL, [embedding_version, tenant.pk, scopes_, ids]) as cursor:
        rows = cursor.fetchall()
    books: list[ScopedBook] = []
    for scope, position, book_id, revision, content_hash, index_id, _strategy in rows:
        if content_hash is None:
            raise _broken(book_id, revision)
        bound = BoundRevision(str(book_id), revision, content_hash, index_id)
        books.append(ScopedBook(scope, position, str(book_id), bound))
    return ScopedRead(books, rows[0][6] if rows else None)


def scope_strategy(tenant) -> str | None:
    """The tenant's scope strategy, None when never set (``engine.scopes`` defaults it)."""
    return (
        ScopeSettings.objects.filter(tenant=tenant)
        .values_list("character_strategy", flat=True)
        .first()
    )


# What a caller names, read as the turn reads its bindings: each (book id, revision or None
# for the head) in order, with the revision's content hash and ready index, in one round
# trip. Pinned to the ORM reads by tests/fastpaths/test_worldbook_reads.py.
_REQUESTED_SQL = f"""
    SELECT b.id, rev.number, r.content_hash, (
        SELECT i.id FROM {BookIndex._meta.db_table} i
        WHERE i.book_id = b.id AND i.revision = rev.number AND i.tenant_id = b.tenant_id
          AND i.embedding_version = %s AND i.status = '{IndexStatus.READY.value}'
    )
    FROM unnest(%s::uuid[], %s::bigint[]) WITH ORDINALITY AS req(book_id, revision, n)
    LEFT JOIN {Book._meta.db_table} b ON b.id = req.book_id AND b.tenant_id = %s
    CROSS JOIN LATERAL (SELECT COALESCE(req.revision, b.head_revision) AS number) rev
    LEFT JOIN {BookRevision._meta.db_table} r ON r.book_id = b.id AND r.revision = rev.number
    ORDER BY req.n
"""


def requested_revisions(
    tenant, refs: list[tuple[str, int | None]], embedding_version: str
) -> list[BoundRevision]:
    """The exact revisions of ``refs`` (head when the revision is None), in order, with their
    content hashes and ready indexes for the embedder; the first book or revision the tenant
    does not have is a 404."""
    if not refs:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            _REQUESTED_SQL,
            [
                embedding_version,
                [_as_uuid(book_id) for book_id, _ in refs],
                [revision for _, revision in refs],
                tenant.pk,
            ],
        )
        rows = cursor.fetchall()
    out = []
    for (asked, _), (book_id, revision, content_hash, index_id) in zip(refs, rows, strict=True):
        if book_id is None:
            raise errors.not_found(f"book {asked} not found")
        if content_hash is None:
            raise errors.not_found(f"revision {revision} of book {asked} not found")
        out.append(BoundRevision(str(book_id), revision, content_hash, index_id))
    return out


def _broken(book_id, revision: int) -> errors.Conflict:
    return errors.Conflict(
        "binding_broken",
        f"binding to book {book_id} revision {revision} cannot be resolved",
        {"book_id": str(book_id), "revision": revision},
    )
