"""Revision history and the diff between two revisions."""

from __future__ import annotations

import pytest

from tests.worldbook.console.conftest import BACKGROUND, GATE
from worldbook import services
from worldbook.views.diffing import diff_books, inline_diff, line_diff

LONG = "The copper key opens only the side door of the city gate, never the main door at night."


def _book(*entries, name="Greyport"):
    return {"name": name, "description": "", "metadata": {}, "entries": list(entries)}


def test_added_removed_changed_and_unchanged():
    old = _book(BACKGROUND, GATE, {"id": "old", "content": "gone"})
    new = _book(
        {**BACKGROUND},
        {**GATE, "title": "Gate", "keys": ["gate"], "content": LONG},
        {"id": "fresh", "title": "Fresh", "content": "new"},
        name="Greyport 2",
    )
    diff = diff_books(old, new)
    assert [c.field for c in diff.book_fields] == ["name"]
    assert diff.added == [{"id": "fresh", "title": "Fresh"}]
    assert diff.removed == [{"id": "old", "title": ""}]
    assert diff.unchanged == 1 and not diff.reordered
    (gate,) = diff.changed
    fields = {c.field: c for c in gate.fields}
    assert set(fields) == {"title", "keys", "content"}
    assert (fields["title"].old, fields["title"].new) == ("City gate", "Gate")
    assert fields["keys"].old_text == '["copper key", "gate"]'
    assert fields["content"].inline is not None  # long single line: inline diff


def test_reordering_is_reported():
    diff = diff_books(_book(BACKGROUND, GATE), _book(GATE, BACKGROUND))
    assert diff.reordered and not diff.changed and not diff.empty
    assert diff_books(_book(GATE), _book(GATE)).empty


def test_line_diff_of_multiline_text():
    rows = line_diff("one\ntwo\nthree\nfour", "one\ntwo\n3\nfour")
    assert ("del", "three") in rows and ("add", "3") in rows
    assert rows[0][0] == "hunk" and ("ctx", "two") in rows


@pytest.mark.parametrize(
    ("old", "new", "deleted", "added"),
    [
        ("the side door of the gate", "the main door of the gate", "side", "main"),
        ("铜钥匙只能开启侧门。", "铜钥匙只能开启正门。", "侧", "正"),
    ],
)
def test_inline_diff_is_word_or_character_level(old, new, deleted, added):
    segments = inline_diff(old, new)
    assert ("del", deleted) in segments and ("add", added) in segments
    assert "".join(t for k, t in segments if k != "add") == old
    assert "".join(t for k, t in segments if k != "del") == new


@pytest.mark.django_db
def test_history_and_diff_pages(operator, tenant, book):
    content = {
        "name": "Greyport",
        "description": "A steam city.",
        "entries": [
            {**BACKGROUND, "content": "Greyport is a steam city.\nGas lamps light it."},
            {**GATE, "priority": 5},
            {"id": "lamp", "title": "Lamps", "content": "Gas lamps hiss."},
        ],
    }
    model = services.validate_book(content)
    services.publish_revision(tenant, book, model, 1)
    history = operator.get(f"/console/worldbooks/{book.pk}/revisions/").content.decode()
    assert 'id="rev-1"' in history and 'id="rev-2"' in history and "head" in history
    assert "?a=1&amp;b=2" in history
    html = operator.get(f"/console/worldbooks/{book.pk}/diff/?a=1&b=2").content.decode()
    assert "<strong>1</strong> added" in html and "<strong>2</strong> changed" in html
    added = html.split('id="wb-added"')[1].split("</section>")[0]
    assert "lamp" in added
    gate = html.split('id="changed-gate"')[1].split("</table>")[0]
    assert 'data-field="priority"' in gate
    assert '<span class="wb-old">20</span> → <span class="wb-new">5</span>' in gate
    background = html.split('id="changed-background"')[1].split("</table>")[0]
    assert '<pre class="diff-line add">+ Gas lamps light it.</pre>' in background
    assert "diff-line del" in background
    # Defaults: head-1 → head; the reverse direction swaps added and removed.
    assert "r1 → r2" in operator.get(f"/console/worldbooks/{book.pk}/diff/").content.decode()
    reverse = operator.get(f"/console/worldbooks/{book.pk}/diff/?a=2&b=1").content.decode()
    assert "<strong>1</strong> removed" in reverse
