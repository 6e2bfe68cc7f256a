"""Writes of editor drafts: one entry, a bulk action, the book's fields, rebase, restore,
and the publish of a draft as one new revision.

Every write locks the user's draft row (``select_for_update``) for its transaction, checks
what it changes against the draft as merged (``selectors.editor_view``), stores only entries
that differ from the draft's base, and moves ``version``. A publish goes through
``worldbook.services.publish_revision``, the one compare-and-set on the head: a stale base
is a 409 ``revision_conflict`` and the draft is left exactly as it was, so nothing typed is
lost; ``rebase_draft`` then moves the draft onto the new head, keeping its changes.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max

from worldbook import errors, services
from worldbook.editor.selectors import (
    BOOK_FIELDS,
    EditorView,
    Merged,
    editor_view,
    merge,
    revision_rows,
)
from worldbook.engine.bulk import BulkEdit, apply, duplicates
from worldbook.engine.listing import EntryQuery, select_rows
from worldbook.engine.schema import BookIn, EntryIn, check_entry
from worldbook.models import Book, BookDraft, BookRevision, DraftEntry

NEW_KEY = "new:"


@dataclass(frozen=True)
class BulkResult:
    selected: int
    changed: int  # entries the action really changed (or added, or deleted)
    revision: BookRevision


def _locked(tenant, book: Book, user, *, create: bool = True) -> BookDraft | None:
    """The user's draft of ``book``, locked for this transaction (made at the head if asked)."""
    query = BookDraft.objects.select_for_update().filter(tenant=tenant, book=book, user=user)
    draft = query.first()
    if draft is None and create:
        head = Book.objects.values_list("head_revision", flat=True).get(pk=book.pk)
        draft, _ = BookDraft.objects.select_for_update().get_or_create(
            tenant=tenant, book=book, user=user, defaults={"base_revision": head}
        )
    return draft


def _bump(draft: BookDraft, *fields: str) -> None:
    draft.version += 1
    draft.save(update_fields=["version", "updated_at", *fields])


def _new_key(taken: Iterable[str]) -> str:
    used = set(taken)
    while True:
        key = NEW_KEY + secrets.token_hex(5)
        if key not in used:
            return key


def _store(draft: BookDraft, view: EditorView, changes: dict[str, dict[str, Any] | None]) -> None:
    """Record ``changes`` (key -> entry, ``None`` deletes); an entry equal to its base entry
    is no change at all and leaves the draft."""
    same = [key for key, entry in changes.items() if entry == view.base.entry(key)]
    kept = {key: entry for key, entry in changes.items() if key not in same}
    if same:
        DraftEntry.objects.filter(draft=draft, key__in=same).delete()
    if not kept:
        return
    start = (DraftEntry.objects.filter(draft=draft).aggregate(top=Max("seq"))["top"] or 0) + 1
    DraftEntry.objects.bulk_create(
        [
            DraftEntry(draft=draft, key=key, entry=entry, seq=start + n)
            for n, (key, entry) in enumerate(kept.items())
        ],
        update_conflicts=True,
        unique_fields=["draft", "key"],
        update_fields=["entry", "updated_at"],
    )


def _drop_if_empty(draft: BookDraft) -> None:
    if not draft.book_fields and not DraftEntry.objects.filter(draft=draft).exists():
        draft.delete()


def _valid_entry(data: dict[str, Any], where: str = "entry") -> dict[str, Any]:
    """A native entry, normalized, with the publish checks that concern it alone."""
    services.check_storable(data, where)
    model = services.parse_model(EntryIn, data)
    if not model.id:
        raise errors.Invalid(
            "validation_error",
            "id: an entry needs an id",
            {"errors": [{"loc": "id", "msg": "an entry needs an id", "type": "missing"}]},
        )
    check_entry(model)
    return model.model_dump(mode="json")


def _unique_id(view: EditorView, key: str, entry_id: str) -> None:
    owner = view.ids().get(entry_id)
    if owner is not None and owner != key:
        raise errors.Invalid(
            "duplicate_entry_id",
            f"the id {entry_id!r} is used by another entry",
            {"entry_ids": [entry_id]},
        )


# --- one entry -------------------------------------------------------------------------------


def save_entry(tenant, book: Book, user, key: str, data: dict[str, Any]) -> EditorView:
    """Store the new state of the entry ``key`` in the user's draft."""
    entry = _valid_entry(data)
    with transaction.atomic():
        draft = _locked(tenant, book, user)
        view = editor_view(tenant, book, user, draft)
        view.row(key)  # a 404 for an entry this draft does not have
        _unique_id(view, key, entry["id"])
        _store(draft, view, {key: entry})
        _bump(draft)
    return editor_view(tenant, book, user)


def add_entry(tenant, book: Book, user) -> tuple[str, EditorView]:
    """A new, empty entry at the end of the draft (its key, and the view that has it)."""
    with transaction.atomic():
        draft = _locked(tenant, book, user)
        view = editor_view(tenant, book, user, draft)
        ids = view.ids()
        entry_id = "entry-" + secrets.token_hex(3)
        while entry_id in ids:
            entry_id = "entry-" + secrets.token_hex(3)
        key = _new_key([*view.merged.index, *view.base.index])
        blank = EntryIn(id=entry_id, content="").model_dump(mode="json")
        _store(draft, view, {key: blank})
        _bump(draft)
    return key, editor_view(tenant, book, user)


def revert_entry(tenant, book: Book, user, key: str) -> EditorView:
    """Drop the draft's change to ``key`` (an added entry goes away, an edit is undone)."""
    with transaction.atomic():
        draft = _locked(tenant, book, user, create=False)
        if draft is not None:
            DraftEntry.objects.filter(draft=draft, key=key).delete()
            _bump(draft)
            _drop_if_empty(draft)
    return editor_view(tenant, book, user)


def set_book_fields(tenant, book: Book, user, data: dict[str, Any]) -> EditorView:
    """The draft's name, description and metadata (only those that differ are kept)."""
    services.check_storable(data, "book")
    fields = {name: data.get(name) for name in BOOK_FIELDS}
    model = services.parse_model(BookIn, {**fields, "entries": []})
    values = model.model_dump(mode="json", include=set(BOOK_FIELDS))
    with transaction.atomic():
        draft = _locked(tenant, book, user)
        base = revision_rows(book, draft.base_revision)
        draft.book_fields = {k: v for k, v in values.items() if v != base.fields.get(k)}
        _bump(draft, "book_fields")
        _drop_if_empty(draft)
    return editor_view(tenant, book, user)


# --- bulk -------------------------------------------------------------------------------------


def _targets(view: EditorView, keys: list[str] | None, query: EntryQuery | None, expected):
    if query is not None:
        rows = select_rows(view.rows, query)
        if expected is not None and expected != len(rows):
            raise errors.Conflict(
                "selection_changed",
                f"the filter now matches {len(rows)} entries, not {expected}; "
                "review the list and apply again",
                {"matched": len(rows), "expected": expected},
            )
        return rows
    wanted = list(dict.fromkeys(keys or ()))
    return [view.row(key) for key in wanted]


def bulk_edit(
    tenant,
    book: Book,
    user,
    edit: BulkEdit,
    *,
    keys: list[str] | None = None,
    query: EntryQuery | None = None,
    expected: int | None = None,
) -> BulkResult:
    """Apply ``edit`` to the selected entries (``keys``, or everything ``query`` matches,
    ``expected`` being the count the user saw) in the draft, and publish the draft with them
    as one revision.

    The publish runs on the draft merged with the edits in memory; only when it fails (a
    conflict, a rule of the whole book) are the edits stored in the draft, so none is lost
    and a successful bulk edit does not write a thousand draft rows only to delete them.
    """
    services.check_storable(edit.model_dump(), "bulk")
    if edit.action == "add_key":
        check_entry(EntryIn(content="", keys=[edit.key or ""]))
    failure: errors.WorldbookError | None = None
    with transaction.atomic():
        draft = _locked(tenant, book, user)
        view = editor_view(tenant, book, user, draft)
        rows = _targets(view, keys, query, expected)
        if not rows:
            raise errors.invalid("select at least one entry")
        changes = _bulk_changes(view, rows, edit)
        try:
            with transaction.atomic():
                merged = merge(view.base, draft, changes)
                revision = _publish(tenant, book, draft, merged)
        except errors.WorldbookError as exc:
            _store(draft, view, changes)
            _bump(draft)
            failure = exc
    if failure is not None:
        raise failure
    return BulkResult(len(rows), len(changes), revision)


def _bulk_changes(view: EditorView, rows, edit: BulkEdit) -> dict[str, dict[str, Any] | None]:
    if edit.action == "delete":
        return {row.key: None for row in rows}
    changes: dict[str, dict[str, Any] | None] = {}
    if edit.action == "duplicate":
        used = [*view.merged.index, *view.base.index]
        for copy in duplicates([row.entry for row in rows], set(view.ids())):
            key = _new_key(used)
            used.append(key)
            changes[key] = copy
        return changes
    for row in rows:
        new = apply(row.entry, edit)
        if new is not row.entry:
            # The entry was valid and the edit's values are: check the result still is.
            services.parse_model(EntryIn, new)
            changes[row.key] = new
    return changes


# --- publish and friends ---------------------------------------------------------------------


def _publish(tenant, book: Book, draft: BookDraft, merged: Merged) -> BookRevision:
    """Publish ``merged`` (a draft's rows) as the revision after the draft's base."""
    model = services.parse_model(
        BookIn, {**merged.fields, "entries": [r.entry for r in merged.rows]}
    )
    number = draft.base_revision + 1
    stats = {
        "tokens": {row.entry["id"]: row.tokens for row in merged.rows},
        "changed": {
            row.entry["id"]: number if row.changed is None else row.changed for row in merged.rows
        },
    }
    revision = services.publish_revision(tenant, book, model, draft.base_revision, stats=stats)
    draft.delete()
    return revision


def publish_draft(tenant, book: Book, user) -> BookRevision:
    """Publish the user's draft as the revision after its base (409 if the head moved)."""
    with transaction.atomic():
        draft = _locked(tenant, book, user, create=False)
        if draft is None:
            raise errors.Invalid("nothing_to_publish", "there are no unpublished changes")
        view = editor_view(tenant, book, user, draft)
        return _publish(tenant, book, draft, view.merged)


def discard_draft(tenant, book: Book, user) -> None:
    BookDraft.objects.filter(tenant=tenant, book=book, user=user).delete()


def rebase_draft(tenant, book: Book, user) -> list[str]:
    """Move the draft onto the current head, keeping every change it has; returns the ids of
    the entries (and names of book fields) that the head changed too, where the draft's
    version now wins, so the user can review them."""
    with transaction.atomic():
        draft = _locked(tenant, book, user, create=False)
        head = Book.objects.values_list("head_revision", flat=True).get(pk=book.pk)
        if draft is None or draft.base_revision == head:
            return []
        old, new = revision_rows(book, draft.base_revision), revision_rows(book, head)
        both: list[str] = []
        used = [*old.index, *new.index]
        top = DraftEntry.objects.filter(draft=draft).aggregate(top=Max("seq"))["top"] or 0
        for change in DraftEntry.objects.filter(draft=draft).order_by("seq", "pk"):
            label = str((change.entry or old.entry(change.key) or {}).get("id", change.key))
            if change.key in new.index:
                if old.entry(change.key) != new.entry(change.key):
                    both.append(label)
                if change.entry == new.entry(change.key):
                    change.delete()  # the head made the same change
            elif change.key in old.index:  # the head deleted (or renamed) it
                if change.entry is None:
                    change.delete()
                else:
                    top += 1
                    change.key = _new_key(used)
                    change.seq = top
                    used.append(change.key)
                    change.save(update_fields=["key", "seq", "updated_at"])
                    both.append(label)
        for name in draft.book_fields:
            if old.fields.get(name) != new.fields.get(name):
                both.append(name)
        draft.base_revision = head
        _bump(draft, "base_revision")
        _drop_if_empty(draft)
    return both


def restore_revision(tenant, book: Book, user, number: int) -> EditorView:
    """Replace the user's draft with the changes that turn the head back into revision
    ``number`` (publishing it then makes a new revision with that content)."""
    target = revision_rows(book, number)
    with transaction.atomic():
        draft = _locked(tenant, book, user)
        DraftEntry.objects.filter(draft=draft).delete()
        head = Book.objects.values_list("head_revision", flat=True).get(pk=book.pk)
        draft.base_revision = head
        draft.book_fields = {}
        draft.save(update_fields=["base_revision", "book_fields", "updated_at"])
        view = editor_view(tenant, book, user, draft)
        changes: dict[str, dict[str, Any] | None] = {}
        for row in view.base.rows:
            wanted = target.entry(row.key)
            if wanted != row.entry:
                changes[row.key] = wanted
        used = [*view.base.index, *target.index]
        for row in target.rows:
            if row.key not in view.base.index:
                key = _new_key(used)
                used.append(key)
                changes[key] = row.entry
        _store(draft, view, changes)
        draft.book_fields = {
            name: target.fields[name]
            for name in BOOK_FIELDS
            if target.fields.get(name) != view.base.fields.get(name)
        }
        _bump(draft, "book_fields")
        _drop_if_empty(draft)
    return editor_view(tenant, book, user)
