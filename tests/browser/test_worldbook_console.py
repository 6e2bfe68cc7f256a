"""The worldbook console in Chromium: import wizard, playground, index polling (the editor
has its own module, ``test_worldbook_editor.py``).

These drive what only a browser runs: the multipart upload from a file input, htmx swapping
the playground result, and htmx polling the index progress.
"""

from __future__ import annotations

import json

import pytest

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account

ST_WORLD = {
    "entries": {
        "0": {
            "uid": 0,
            "key": ["copper key", "gate"],
            "comment": "City gate",
            "content": "The copper key opens only the side door of the city gate.",
            "order": 100,
            "position": 0,
        },
        "1": {
            "uid": 1,
            "key": ["spell"],
            "comment": "Spell panel",
            "content": "<% if (mana > 3) { %>The spell works.<% } %>",
            "position": 1,
        },
        "2": {
            "uid": 2,
            "comment": "World",
            "content": "Greyport is a steam city.",
            "constant": True,
        },
    }
}
GATE = {
    "id": "gate",
    "title": "City gate",
    "content": "The copper key opens only the side door of the city gate.",
    "keys": ["copper key", "gate"],
}
BACKGROUND = {"id": "background", "content": "Greyport is a steam city.", "constant": True}


@pytest.fixture
def greyport(tenant, operator_user):
    """A book made before the page opens (the ORM is unavailable while Playwright runs)."""
    from worldbook import services

    model = services.validate_book(
        {"name": "Greyport", "description": "", "entries": [BACKGROUND, GATE]}
    )
    book, _ = services.create_book(tenant, model)
    return book


def _head(book_id):
    from worldbook.models import Book, BookRevision

    book = Book.objects.get(pk=book_id)
    return BookRevision.objects.get(book=book, revision=book.head_revision)


def test_import_wizard(tenant, operator_user, browser_page, login, orm):
    page = browser_page
    login(page, USER, PASSWORD, next_path="/console/worldbooks/import/")
    page.set_input_files(
        "input[name=file]",
        files=[
            {
                "name": "greyport.json",
                "mimeType": "application/json",
                "buffer": json.dumps(ST_WORLD).encode("utf-8"),
            }
        ],
    )
    with page.expect_navigation():
        page.click("#wb-upload button[type=submit]")
    assert "/console/worldbooks/import/" in page.url
    assert page.locator("#wb-entry-count").inner_text() == "3"
    assert page.locator("#wb-blocked-count").inner_text() == "1"
    blocked = page.locator("#wb-blocked")
    assert "Spell panel" in blocked.inner_text() and "ejs" in blocked.inner_text()
    assert page.locator("table.wb-readonly-entries tbody tr").count() == 3
    assert orm(lambda: _books_of(tenant)) == []  # the preview writes nothing

    with page.expect_navigation():
        page.click("#wb-confirm button[value=confirm]")
    assert "Imported greyport.json as a new book." in page.locator(".flash").inner_text()
    (book_id,) = orm(lambda: _books_of(tenant))
    assert page.url.endswith(f"/console/worldbooks/{book_id}/")
    head = orm(_head, book_id)
    assert head.entry_count == 3 and head.import_report["runtime_blocked_count"] == 1


def _books_of(tenant):
    from worldbook.models import Book

    return [str(pk) for pk in Book.objects.filter(tenant=tenant).values_list("pk", flat=True)]


def test_bad_file_shows_its_code(tenant, operator_user, browser_page, login):
    page = browser_page
    login(page, USER, PASSWORD, next_path="/console/worldbooks/import/")
    page.set_input_files(
        "input[name=file]",
        files=[{"name": "broken.json", "mimeType": "application/json", "buffer": b"{nope"}],
    )
    with page.expect_navigation():
        page.click("#wb-upload button[type=submit]")
    assert page.locator("[data-error-code]").get_attribute("data-error-code") == "invalid_json"


def test_playground_shows_a_keyword_decision(greyport, browser_page, login):
    page = browser_page
    login(page, USER, PASSWORD, next_path=f"/console/worldbooks/playground/?book={greyport.pk}")
    assert page.locator(f"input[name=books][value='{greyport.pk}']").is_checked()
    page.fill("textarea[name=query]", "I hand the copper key to the guard.")
    page.fill("textarea[name=history]", "user: hello\nassistant: Halt!")
    url = page.url
    page.click("#wb-run")
    gate = page.locator("tr.wb-decision[data-entry='gate']")
    gate.wait_for()
    assert gate.get_attribute("data-reason") == "keyword"
    background = page.locator("tr.wb-decision[data-entry='background']")
    assert background.get_attribute("data-reason") == "constant"
    assert "copper key" in gate.locator("td.details").inner_text()
    assert page.locator("#wb-tokens").inner_text().endswith("/ 1500")
    assert page.url == url  # swapped in by htmx, not a page load
    # An invalid field comes back in the same swap, next to the field.
    page.click("details.options > summary")
    page.fill("input[name=scan_depth]", "500")
    page.click("#wb-run")
    page.locator(".field.has-error").filter(has_text="less than or equal to 100").wait_for()


def test_index_progress_polls_until_ready(greyport, browser_page, login, orm):
    from worldbook import indexing
    from worldbook.models import BookIndex

    def start():
        index, _ = indexing.request_build(greyport.tenant, greyport, 1)
        BookIndex.objects.filter(pk=index.pk).update(chunks_total=4, chunks_done=1)
        return index.pk

    index_id = orm(start)
    page = browser_page
    login(page, USER, PASSWORD, next_path=f"/console/worldbooks/{greyport.pk}/index/")
    assert page.locator("#wb-index").get_attribute("data-status") == "building"
    assert "1 / 4 chunks" in page.locator("#wb-index-progress").inner_text()
    orm(indexing.run_build, index_id)
    page.locator("#wb-index[data-status='ready']").wait_for()
    assert "100%" in page.locator("#wb-index-progress").inner_text()
