"""Editor drafts: entry-level changes per user, published as one revision by compare-and-set.

Two editors never see each other's work in progress; the second to publish gets a 409 and
keeps every change, and a rebase carries them onto the new head. Token counts and "last
changed" of a published draft are derived from its base, never recounted for an entry that
did not change.
"""

from __future__ import annotations

import pytest

from console.services import ensure_console_user
from console.tokens import count_tokens
from worldbook import errors, services
from worldbook.editor import selectors
from worldbook.editor import services as drafts
from worldbook.engine.bulk import BulkEdit
from worldbook.engine.listing import EntryQuery
from worldbook.engine.schema import BookIn
from worldbook.models import BookDraft, BookRevision, DraftEntry

pytestmark = pytest.mark.django_db

ENTRIES = [
    {"id": "a", "title": "Alpha", "content": "The harbour bell rings at dawn.", "keys": ["bell"]},
    {"id": "b", "title": "Beta", "content": "Fog rolls in.", "keys": ["fog"], "group": "weather"},
    {"id": "c", "title": "Gamma", "content": "Gas lamps hiss.", "keys": ["/lamp(s)?/i"]},
]


@pytest.fixture
def book(tenant):
    model = BookIn.model_validate({"name": "Harbour", "entries": ENTRIES})
    created, _ = services.create_book(tenant, model)
    return created


@pytest.fixture
def ann(tenant):
    return ensure_console_user(tenant, "ann", None, "operator")[0]


@pytest.fixture
def bob(tenant):
    return ensure_console_user(tenant, "bob", None, "operator")[0]


def _entry(book, entry_id, revision=None):
    book.refresh_from_db()
    row = BookRevision.objects.get(book=book, revision=revision or book.head_revision)
    return next(e for e in row.content["entries"] if e["id"] == entry_id)


def _edited(book, entry_id, **changes):
    return {**_entry(book, entry_id), **changes}


def test_a_draft_is_private_until_published(tenant, book, ann, bob):
    drafts.save_entry(tenant, book, ann, "a", _edited(book, "a", content="Changed."))
    assert selectors.editor_view(tenant, book, ann).row("a").entry["content"] == "Changed."
    assert (
        selectors.editor_view(tenant, book, bob).row("a").entry["content"] == ENTRIES[0]["content"]
    )
    assert _entry(book, "a")["content"] == ENTRIES[0]["content"]
    revision = drafts.publish_draft(tenant, book, ann)
    assert revision.revision == 2 and _entry(book, "a")["content"] == "Changed."
    assert not BookDraft.objects.filter(book=book).exists()


def test_saving_an_unchanged_entry_leaves_no_change(tenant, book, ann):
    view = drafts.save_entry(tenant, book, ann, "a", _entry(book, "a"))
    assert view.merged.change_count == 0
    assert not DraftEntry.objects.exists()


def test_the_second_publisher_gets_a_conflict_and_keeps_the_draft(tenant, book, ann, bob):
    drafts.save_entry(tenant, book, ann, "a", _edited(book, "a", title="Ann's"))
    drafts.save_entry(tenant, book, bob, "b", _edited(book, "b", title="Bob's"))
    drafts.publish_draft(tenant, book, ann)
    with pytest.raises(errors.RevisionConflict) as info:
        drafts.publish_draft(tenant, book, bob)
    assert info.value.details == {"current_revision": 2, "expected_revision": 1}
    book.refresh_from_db()
    view = selectors.editor_view(tenant, book, bob)
    assert view.stale and view.row("b").entry["title"] == "Bob's"
    assert drafts.rebase_draft(tenant, book, bob) == []  # disjoint changes
    drafts.publish_draft(tenant, book, bob)
    assert _entry(book, "a")["title"] == "Ann's" and _entry(book, "b")["title"] == "Bob's"


def test_rebase_names_entries_both_sides_changed_and_keeps_mine(tenant, book, ann, bob):
    drafts.save_entry(tenant, book, ann, "a", _edited(book, "a", title="Ann's"))
    drafts.save_entry(tenant, book, bob, "a", _edited(book, "a", title="Bob's"))
    drafts.save_entry(tenant, book, bob, "c", _edited(book, "c", title="Bob's c"))
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="delete"), keys=["c"])
    assert drafts.rebase_draft(tenant, book, bob) == ["a", "c"]
    view = selectors.editor_view(tenant, book, bob)
    assert view.row("a").entry["title"] == "Bob's"
    readded = [row for row in view.rows if row.entry["id"] == "c"]
    assert len(readded) == 1 and readded[0].draft == "added"


def test_bulk_edit_changes_only_what_it_must_and_publishes_once(tenant, book, ann):
    result = drafts.bulk_edit(
        tenant, book, ann, BulkEdit(action="disable"), query=EntryQuery(q="fog"), expected=1
    )
    assert (result.selected, result.changed, result.revision.revision) == (1, 1, 2)
    assert _entry(book, "b")["enabled"] is False and _entry(book, "a")["enabled"] is True
    stats = BookRevision.objects.get(book=book, revision=2).entry_stats
    assert stats["changed"] == {"a": 1, "b": 2, "c": 1}
    assert stats["tokens"]["b"] == count_tokens("Fog rolls in.")


def test_bulk_edit_of_a_changed_selection_is_refused(tenant, book, ann):
    with pytest.raises(errors.Conflict) as info:
        drafts.bulk_edit(
            tenant, book, ann, BulkEdit(action="disable"), query=EntryQuery(), expected=2
        )
    assert info.value.code == "selection_changed"
    assert not DraftEntry.objects.exists() and book.revisions.count() == 1


def test_a_conflicting_bulk_edit_stays_in_the_draft(tenant, book, ann, bob):
    drafts.save_entry(tenant, book, ann, "c", _edited(book, "c", title="mine"))
    drafts.save_entry(tenant, book, bob, "a", _edited(book, "a", order=5))
    drafts.publish_draft(tenant, book, bob)
    with pytest.raises(errors.RevisionConflict):
        drafts.bulk_edit(tenant, book, ann, BulkEdit(action="set_order", order=9), keys=["b"])
    view = selectors.editor_view(tenant, book, ann)
    assert view.row("b").entry["order"] == 9 and view.row("c").entry["title"] == "mine"
    assert book.revisions.count() == 2


def test_duplicate_and_delete(tenant, book, ann):
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="duplicate"), keys=["a", "b"])
    ids = [e["id"] for e in BookRevision.objects.get(book=book, revision=2).content["entries"]]
    assert ids == ["a", "b", "c", "a-copy", "b-copy"]
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="delete"), keys=["a-copy"])
    book.refresh_from_db()
    assert [e["id"] for e in _revision(book).content["entries"]] == ["a", "b", "c", "b-copy"]


def _revision(book):
    return BookRevision.objects.get(book=book, revision=book.head_revision)


def test_add_key_and_group_actions(tenant, book, ann):
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="add_key", key="dawn"), keys=["a", "b"])
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="set_group", group="sea"), keys=["a"])
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="clear_group"), keys=["b"])
    assert _entry(book, "a")["keys"] == ["bell", "dawn"] and _entry(book, "a")["group"] == "sea"
    assert _entry(book, "b")["group"] == "" and _entry(book, "b")["keys"] == ["fog", "dawn"]
    with pytest.raises(errors.Invalid) as info:
        drafts.bulk_edit(tenant, book, ann, BulkEdit(action="add_key", key="/[/"), keys=["a"])
    assert info.value.code == "invalid_regex"


def test_entry_rules_are_checked_on_save(tenant, book, ann):
    with pytest.raises(errors.Invalid) as info:
        drafts.save_entry(tenant, book, ann, "a", _edited(book, "a", id="b"))
    assert info.value.code == "duplicate_entry_id"
    with pytest.raises(errors.Invalid) as info:
        drafts.save_entry(tenant, book, ann, "a", _edited(book, "a", probability=101))
    assert info.value.details["errors"][0]["loc"] == "probability"
    with pytest.raises(errors.NotFound):
        drafts.save_entry(tenant, book, ann, "nope", _edited(book, "a"))
    assert not DraftEntry.objects.exists()


def test_add_then_revert_removes_the_new_entry(tenant, book, ann):
    key, view = drafts.add_entry(tenant, book, ann)
    assert view.row(key).draft == "added" and len(view.rows) == 4
    view = drafts.revert_entry(tenant, book, ann, key)
    assert len(view.rows) == 3 and view.draft is None


def test_restore_makes_the_head_equal_an_old_revision(tenant, book, ann):
    drafts.bulk_edit(tenant, book, ann, BulkEdit(action="delete"), keys=["b"])
    drafts.save_entry(tenant, book, ann, "a", _edited(book, "a", title="new title"))
    drafts.set_book_fields(
        tenant, book, ann, {"name": "Renamed", "description": "", "metadata": {}}
    )
    drafts.publish_draft(tenant, book, ann)
    drafts.restore_revision(tenant, book, ann, 1)
    revision = drafts.publish_draft(tenant, book, ann)
    one = BookRevision.objects.get(book=book, revision=1)
    assert revision.content["name"] == "Harbour"
    assert sorted(e["id"] for e in revision.content["entries"]) == ["a", "b", "c"]
    by_id = {e["id"]: e for e in revision.content["entries"]}
    assert all(by_id[e["id"]] == e for e in one.content["entries"])


def test_stats_of_a_revision_made_elsewhere_are_derived_once(tenant, book, ann):
    body = BookIn.model_validate(
        {"name": "Harbour", "entries": [ENTRIES[0], {**ENTRIES[1], "content": "Thick fog."}]}
    )
    services.publish_revision(tenant, book, body, 1)
    row = BookRevision.objects.get(book=book, revision=2)
    assert row.entry_stats is None
    view = selectors.editor_view(tenant, book, ann)
    assert [r.changed for r in view.rows] == [1, 2]
    assert [r.tokens for r in view.rows] == [count_tokens(e.content) for e in body.entries]
    row.refresh_from_db()
    assert row.entry_stats == {
        "tokens": {"a": view.rows[0].tokens, "b": view.rows[1].tokens},
        "changed": {"a": 1, "b": 2},
    }
