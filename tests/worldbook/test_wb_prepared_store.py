"""The prepared-revision store: memory, then the shared file, then the database; a revision
prepared inline is not written by the turn (the worker writes it), a bad file is prepared
again, an unwritable directory only costs the sharing, memory is bounded."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from worldbook import compiled, services
from worldbook.engine import prepared
from worldbook.engine.revision import revision_view
from worldbook.engine.schema import BookIn
from worldbook.models import Book, PreparedRevision
from worldbook.tokenizer import CL100K

pytestmark = pytest.mark.django_db


def _book(tenant, entries: int = 3, text: str = "lore"):
    model = BookIn.model_validate(
        {
            "name": "B",
            "entries": [
                {"id": f"e{i}", "content": f"{text} {i}", "keys": [f"k{i}"]} for i in range(entries)
            ],
        }
    )
    book, revision = services.create_book(tenant, model)
    return (str(book.id), 1, revision.content_hash)


def _reads_revision(queries) -> bool:
    return any("worldbook_bookrevision" in q["sql"] for q in queries)


def test_memory_then_file_then_database(tenant):
    key = _book(tenant)
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        first = compiled.get(*key)
    assert _reads_revision(queries)
    assert not compiled.path_for(*key).exists()  # the worker's to write, not the turn's
    with CaptureQueriesContext(connection) as queries:
        assert compiled.get(*key) is first  # held in this process
    assert not queries
    assert compiled.warm(*key) == "written"  # what the worker does
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        again = compiled.get(*key)  # a process that holds nothing: the shared file
    assert not queries
    assert [e.content for e in again.entries] == [e.content for e in first.entries]
    assert again.compiled.scan_codes("k1") == first.compiled.scan_codes("k1")
    assert compiled.warm(*key) == "present"


@pytest.mark.parametrize("damage", [b"", b"not a pickle", b"\x80\x05garbage"])
def test_a_damaged_file_is_prepared_again(tenant, damage):
    key = _book(tenant)
    compiled.warm(*key)
    compiled.path_for(*key).write_bytes(damage)
    compiled.forget()
    loaded = compiled.get(*key)
    assert loaded.entries[2].content == "lore 2"
    assert compiled.warm(*key) == "written"  # the worker replaces it
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        compiled.get(*key)
    assert not queries


def test_an_unwritable_directory_costs_only_the_sharing(tenant, settings, tmp_path):
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("x")
    settings.WORLDBOOK_COMPILED_DIR = blocker
    key = _book(tenant)
    compiled.forget()
    assert compiled.get(*key).entries[0].content == "lore 0"
    assert compiled.warm(*key) == "written"  # tried, and logged; nothing raised


def test_memory_is_bounded_by_entries(tenant, settings):
    settings.WORLDBOOK_CACHE_ENTRIES = 10
    keys = [_book(tenant, entries=4, text=f"b{n}") for n in range(4)]
    compiled.forget()
    for key in keys:
        compiled.get(*key)
    assert compiled.resident() == {"revisions": 2, "entries": 8}
    settings.WORLDBOOK_CACHE_ENTRIES = 1
    big = _book(tenant, entries=6)
    compiled.get(*big)  # the newest is kept however large
    assert compiled.resident() == {"revisions": 1, "entries": 6}


def test_a_books_files_unused_for_a_week_go_when_it_is_written_again(tenant):
    import os
    import time

    key = _book(tenant)
    compiled.warm(*key)
    stale = compiled.path_for(key[0], 7, "0" * 64)
    stale.write_bytes(b"an old revision")
    recent = compiled.path_for(key[0], 8, "1" * 64)
    recent.write_bytes(b"a revision read yesterday")
    week = time.time() - compiled.PRUNE_AFTER_S - 60
    os.utime(stale, (week, week))
    compiled.path_for(*key).unlink()
    compiled.warm(*key)
    assert not stale.exists() and recent.exists() and compiled.path_for(*key).exists()


@pytest.mark.django_db(transaction=True)
def test_a_revision_prepared_inline_has_the_worker_write_its_file(celery_worker, tenant):
    """No worker got to it before the turn (here: the file is gone): the turn prepares it
    itself and asks the worker, which writes the file every process then reads."""
    key = _book(tenant, entries=5)
    compiled.forget()
    assert not compiled.path_for(*key).exists()
    assert compiled.get(*key).entries[4].content == "lore 4"
    deadline = time.monotonic() + 60
    while not compiled.path_for(*key).exists():
        assert time.monotonic() < deadline, "the worker did not write the file"
        time.sleep(0.1)
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        assert compiled.get(*key).entries[4].content == "lore 4"
    assert not queries


def _stored_form(tenant, capture, entries: int = 4):
    with capture(execute=True):  # the publish's after-commit work
        return _book(tenant, entries=entries)


def test_a_published_revision_is_read_from_its_stored_form(
    tenant, django_capture_on_commit_callbacks
):
    """No worker got to it: the first turn loads what the publish stored, on any machine,
    and reads no content."""
    key = _stored_form(tenant, django_capture_on_commit_callbacks)
    row = PreparedRevision.objects.get(book_id=key[0])
    assert (row.revision, row.content_hash, row.format) == (1, key[2], prepared.FORMAT)
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        loaded = compiled.get(*key)
    assert not _reads_revision(queries) and "worldbook_preparedrevision" in queries[0]["sql"]
    assert [e.content for e in loaded.entries] == [f"lore {i}" for i in range(4)]
    tokens = revision_view(loaded.compiled, 1).counted_block_tokens(CL100K.name)
    assert tokens == [None] * 4  # counted when a selection needs them
    assert not compiled.path_for(*key).exists()  # the worker's, once it runs


def test_a_stored_form_of_another_revision_or_format_is_not_used(
    tenant, django_capture_on_commit_callbacks
):
    key = _stored_form(tenant, django_capture_on_commit_callbacks)
    book = Book.objects.get(pk=key[0])
    model = BookIn.model_validate({"name": "B", "entries": [{"id": "n", "content": "new"}]})
    with django_capture_on_commit_callbacks(execute=True):
        second = services.publish_revision(tenant, book, model, 1)
    compiled.store(tenant, key[0], 1, key[2], [])  # a late store of the older revision
    assert PreparedRevision.objects.get(book_id=key[0]).revision == 2  # the newest stays
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        assert compiled.get(*key).entries[3].content == "lore 3"  # a pinned older revision
    assert _reads_revision(queries)
    for change in ({"format": "wb-prepared/0"}, {"format": prepared.FORMAT, "blob": b"junk"}):
        PreparedRevision.objects.filter(book_id=key[0]).update(**change)
        compiled.forget()
        with CaptureQueriesContext(connection) as queries:
            again = compiled.get(key[0], 2, second.content_hash)
        assert again.entries[0].content == "new" and _reads_revision(queries)
