"""Reads of the editor: a revision as list rows, and a user's draft merged over it.

A 5,000-entry revision is about 5 MB of JSON; parsing it and building its rows takes a few
hundred milliseconds, so the rows of a revision are kept per process (revisions never
change), and so is the merge of a draft over them, keyed by the draft's ``version`` (which
every draft write moves). A page view then filters and slices rows in memory
(``worldbook.engine.listing``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from console.lru import Lru
from worldbook import errors
from worldbook.editor.stats import content_tokens, stats_of
from worldbook.engine.listing import Row, make_row
from worldbook.models import Book, BookDraft, BookRevision, DraftEntry

BOOK_FIELDS = ("name", "description", "metadata")


_revisions = Lru(4)  # a parsed 5,000-entry revision is tens of MB of Python objects
_drafts = Lru(32)


@dataclass(frozen=True)
class RevisionRows:
    """One stored revision as rows, in book order; ``fields`` are its book-level fields."""

    revision: int
    content_hash: str
    fields: dict[str, Any]
    rows: list[Row]
    index: dict[str, int]  # entry id -> position in ``rows``

    def entry(self, key: str) -> dict[str, Any] | None:
        position = self.index.get(key)
        return None if position is None else self.rows[position].entry


def revision_rows(book: Book, number: int) -> RevisionRows:
    """The rows of revision ``number`` of ``book`` (a missing revision is a 404)."""
    meta = (
        BookRevision.objects.filter(book=book, revision=number)
        .values_list("pk", "content_hash")
        .first()
    )
    if meta is None:
        raise errors.not_found(f"revision {number} of book {book.pk} not found")
    key = (meta[0], meta[1])
    cached = _revisions.get(key)
    if cached is not None:
        return cached
    row = BookRevision.objects.get(pk=meta[0])
    stats = stats_of(row)
    tokens, changed = stats["tokens"], stats["changed"]
    rows = []
    for entry in row.content.get("entries") or []:
        entry_id = entry["id"]
        rows.append(make_row(entry_id, entry, tokens[entry_id], changed.get(entry_id)))
    built = RevisionRows(
        revision=number,
        content_hash=row.content_hash,
        fields={name: row.content.get(name) for name in BOOK_FIELDS},
        rows=rows,
        index={r.key: i for i, r in enumerate(rows)},
    )
    _revisions.put(key, built)
    return built


@dataclass(frozen=True)
class Merged:
    """A draft's rows (deleted entries left out) and what it changed."""

    rows: list[Row]
    index: dict[str, int]  # key -> position in ``rows``
    edited: int
    added: int
    deleted: list[str]  # keys
    fields: dict[str, Any]
    changed_fields: list[str] = field(default_factory=list)

    @property
    def change_count(self) -> int:
        return self.edited + self.added + len(self.deleted) + len(self.changed_fields)


def merge(
    base: RevisionRows,
    draft: BookDraft | None,
    pending: dict[str, dict[str, Any] | None] | None = None,
) -> Merged:
    """``base`` with the draft's stored changes, then ``pending`` ones (key -> entry, ``None``
    deletes) that a caller has not stored (a bulk edit publishes without storing them)."""
    if draft is None and not pending:
        return Merged(base.rows, base.index, 0, 0, [], base.fields)
    changes: list[tuple[str, dict[str, Any] | None]] = []
    if draft is not None:
        changes = list(
            DraftEntry.objects.filter(draft=draft).order_by("seq", "pk").values_list("key", "entry")
        )
    if pending:
        stored = dict(changes)
        stored.update(pending)
        changes = list(stored.items())
    rows = list(base.rows)
    deleted: set[str] = set()
    added: list[Row] = []
    edited = 0
    for key, entry in changes:
        position = base.index.get(key)
        if position is None:
            if entry is not None:
                added.append(make_row(key, entry, content_tokens(entry["content"]), None, "added"))
            continue
        old = base.rows[position]
        if entry is None:
            deleted.add(key)
        elif entry != old.entry:
            tokens = old.tokens if entry["content"] == old.entry["content"] else None
            if tokens is None:
                tokens = content_tokens(entry["content"])
            rows[position] = make_row(key, entry, tokens, None, "edited")
            edited += 1
    kept = [row for row in rows if row.key not in deleted] + added
    fields = {**base.fields, **(draft.book_fields if draft else {})}
    changed_fields = [name for name in BOOK_FIELDS if fields.get(name) != base.fields.get(name)]
    return Merged(
        rows=kept,
        index={row.key: i for i, row in enumerate(kept)},
        edited=edited,
        added=len(added),
        deleted=sorted(deleted),
        fields=fields,
        changed_fields=changed_fields,
    )


@dataclass(frozen=True)
class EditorView:
    """What one user's editor shows: their draft (if any) over its base revision."""

    book: Book
    draft: BookDraft | None
    base: RevisionRows
    merged: Merged

    @property
    def rows(self) -> list[Row]:
        return self.merged.rows

    @property
    def stale(self) -> bool:
        """The head moved past the draft's base: publishing it would be a conflict."""
        return self.draft is not None and self.base.revision != self.book.head_revision

    def row(self, key: str) -> Row:
        position = self.merged.index.get(key)
        if position is None:
            raise errors.not_found(f"entry {key!r} is not in this draft")
        return self.merged.rows[position]

    def ids(self) -> dict[str, str]:
        """Entry id -> key of every entry of the draft."""
        return {row.entry["id"]: row.key for row in self.merged.rows}

    def content(self) -> dict[str, Any]:
        """The draft as a native book body (what a publish would store)."""
        return {**self.merged.fields, "entries": [row.entry for row in self.merged.rows]}


def get_draft(tenant, book: Book, user) -> BookDraft | None:
    return BookDraft.objects.filter(tenant=tenant, book=book, user=user).first()


def editor_view(tenant, book: Book, user, draft: BookDraft | None = None) -> EditorView:
    """``user``'s view of ``book``: their draft merged over its base, or the head revision.

    Pass ``draft`` when it was just read (locked) by the caller; else it is looked up.
    """
    if draft is None:
        draft = get_draft(tenant, book, user)
    base = revision_rows(book, draft.base_revision if draft else book.head_revision)
    if draft is None:
        return EditorView(book, None, base, merge(base, None))
    key = (draft.pk, draft.version, base.revision, base.content_hash)
    merged = _drafts.get(key)
    if merged is None:
        merged = merge(base, draft)
        _drafts.put(key, merged)
    return EditorView(book, draft, base, merged)
