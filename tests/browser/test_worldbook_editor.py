"""The book editor in Chromium: search and bulk-disable on a 5,000-entry book, and two editors
who publish over each other without losing an edit.

What only a browser runs is exercised here: htmx swapping the list as the search is typed
(with the query pushed to the address bar), the bulk bar of ``static/js/worldbook.js``, an
entry opened in place and saved to the draft on change, the draft bar swapped out of band,
and the conflict page after a stale publish.
"""

from __future__ import annotations

import re

import pytest

from tests.browser.conftest import TIMEOUT_MS, login_as
from tests.security.test_csp_browser import RECORD_VIOLATIONS, violations
from worldbook.views.editor import dom_id

pytestmark = pytest.mark.django_db(transaction=True)

USER, PASSWORD = "op", "pw-op-123456"  # the ``operator_user`` fixture's account
OTHER, OTHER_PASSWORD = "op2", "pw-op2-123456"
ENTRIES = 5000


def _entry(i: int) -> dict:
    keys = [f"key{i}", "harbour" if i % 4 == 0 else "inland"]
    return {"id": f"e{i}", "title": f"Entry {i}", "content": f"Lore of place {i}.", "keys": keys}


@pytest.fixture
def large_book(tenant, operator_user):
    from worldbook import services
    from worldbook.engine.schema import BookIn

    model = BookIn.model_validate({"name": "Atlas", "entries": [_entry(i) for i in range(ENTRIES)]})
    book, _ = services.create_book(tenant, model)
    return book


@pytest.fixture
def second_editor(tenant):
    from console.services import ensure_console_user

    return ensure_console_user(tenant, OTHER, OTHER_PASSWORD, "operator")[0]


def _head(book_id):
    from worldbook.models import Book, BookRevision

    book = Book.objects.get(pk=book_id)
    return BookRevision.objects.get(book=book, revision=book.head_revision)


def test_search_then_bulk_disable_on_a_large_book(large_book, browser_page, login, orm):
    page = browser_page
    page.add_init_script(RECORD_VIOLATIONS)  # the page runs under the site's CSP
    console_errors: list[str] = []
    page.on("console", lambda message: console_errors.append(message.text))
    login(page, USER, PASSWORD, next_path=f"/console/worldbooks/{large_book.pk}/")
    assert page.locator("#wb-total-entries").inner_text() == str(ENTRIES)
    assert page.locator(".wb-row").count() == 50
    page.fill("#wb-q", "harbour")
    page.locator("#wb-matched").wait_for()
    assert page.locator("#wb-matched").inner_text() == str(ENTRIES // 4)
    assert re.search(r"[?&]q=harbour", page.url)  # a reload shows the same list
    assert all("harbour" in text for text in page.locator(".wb-row .c-keys").all_inner_texts())
    page.check("#wb-scope-filter")
    page.select_option("#wb-action", "disable")
    with page.expect_navigation():
        page.click("#wb-bulk-apply")
    flash = page.locator(".flash").inner_text()
    assert f"Disable on {ENTRIES // 4} entries" in flash and "published revision 2" in flash
    assert page.locator("#wb-matched").inner_text() == str(ENTRIES // 4)  # the filter is kept
    assert page.locator(".wb-row[data-enabled='true']").count() == 0
    _edit_in_place(page, "e4", "title", "Checked under the policy")  # htmx out-of-band swaps
    assert violations(page, console_errors) == []
    head = orm(_head, large_book.pk)
    enabled = {e["id"]: e["enabled"] for e in head.content["entries"]}
    assert head.revision == 2 and len(enabled) == ENTRIES
    assert all(enabled[f"e{i}"] is (i % 4 != 0) for i in range(ENTRIES))


def _edit_in_place(page, key: str, field: str, value: str) -> None:
    """Open the entry, change one field and leave it, which saves it to the draft."""
    row = f"#{dom_id(key)}"
    page.click(f"{row} a.wb-open")
    page.locator(f"{row} form.wb-entry-form").wait_for()
    page.fill(f"{row} [name='e-{field}']", value)
    page.press(f"{row} [name='e-{field}']", "Tab")  # leaving the field fires "change"
    page.locator(f"#s-{dom_id(key)} .saved").wait_for()


def test_two_editors_conflict_and_no_edit_is_lost(
    large_book, second_editor, browser_page, login, orm, live_server_url
):
    mine = browser_page
    login(mine, USER, PASSWORD, next_path=f"/console/worldbooks/{large_book.pk}/")
    _edit_in_place(mine, "e1", "title", "My title")
    assert "1 edited" in mine.locator("#wb-draftbar").inner_text()  # swapped out of band
    mine.reload()  # the draft lives on the server
    assert "My title" in mine.locator(f"#{dom_id('e1')}").inner_text()

    context = mine.context.browser.new_context(base_url=live_server_url)
    context.set_default_timeout(TIMEOUT_MS)
    try:
        theirs = context.new_page()
        login_as(theirs, OTHER, OTHER_PASSWORD, f"/console/worldbooks/{large_book.pk}/")
        _edit_in_place(theirs, "e2", "content", "Their rewritten lore.")
        with theirs.expect_navigation():
            theirs.click("#wb-publish")
        assert "Published revision 2" in theirs.locator(".flash").inner_text()
    finally:
        context.close()

    with mine.expect_navigation():
        mine.click("#wb-publish")
    conflict = mine.locator("#wb-conflict")
    assert conflict.get_attribute("data-current-revision") == "2"
    assert "nothing was published" in conflict.inner_text()
    assert "1 edited" in mine.locator("#wb-draftbar").inner_text()
    with mine.expect_navigation():
        mine.click("#wb-rebase-now")
    assert "all your changes are kept" in mine.locator(".flash").inner_text()
    with mine.expect_navigation():
        mine.click("#wb-publish")
    assert "Published revision 3" in mine.locator(".flash").inner_text()
    entries = {e["id"]: e for e in orm(_head, large_book.pk).content["entries"]}
    assert entries["e1"]["title"] == "My title"
    assert entries["e2"]["content"] == "Their rewritten lore."
