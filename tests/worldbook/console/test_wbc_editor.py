"""The book editor: a paged list over the user's draft, entries edited in place (every field
round-trips through the rendered form), bulk actions, and publish by compare-and-set."""

from __future__ import annotations

import json
import re

import pytest
from django.utils.html import escape

from tests.worldbook.console.conftest import BACKGROUND, GATE
from tests.worldbook.console.wbc_html import form_dict
from worldbook.models import BookDraft, BookRevision, DraftEntry
from worldbook.views.editor import dom_id

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}

# Every field away from its default, including the awkward ones: a key with a literal comma,
# a regex key with a comma, multi-line content, JSON fields, null-able numbers, tri-states.
FULL = {
    "id": "full", "title": "Storm season",
    "content": "Line one.\nLine two, with a comma.\n\n  indented line",
    "enabled": False, "constant": True, "required": False,
    "keys": ["storm", "rain, heavy", "/gale{1,3}s?/i", "风暴"], "secondary_keys": ["harbour"],
    "selective": True, "logic": "not_all", "case_sensitive": True, "match_whole_words": True,
    "probability": 55, "scan_depth": 7,
    "conditions": [{"path": "quest.started", "op": "eq", "value": True}],
    "requires": ["gate"], "priority": -5, "order": 300, "conflict_key": "weather",
    "audience": ["actor", "narrator"], "kind": "rule", "position": "outlet", "depth": 3,
    "role": "assistant", "outlet_name": "side", "exclude_recursion": False,
    "prevent_recursion": False, "runtime_requirements": ["ejs"],
    "metadata": {"note": "x", "n": [1, 2]}, "source": {"format": "sillytavern", "uid": 3},
    "sticky": 2, "cooldown": 3, "delay": 0, "delay_until_recursion": 2,
    "group": "weather, mood", "group_override": True, "group_weight": 40,
    "use_group_scoring": False, "vectorized": True,
}  # fmt: skip


def _url(book, tail: str = "") -> str:
    return f"/console/worldbooks/{book.pk}/{tail}"


def _open(client, book, key: str) -> tuple[str, dict]:
    """The entry's row with its form open (as htmx gets it) and the form's fields."""
    res = client.get(_url(book, "entries/row/"), {"key": key, "edit": "1"}, **HX)
    assert res.status_code == 200
    html = res.content.decode()
    return html, form_dict(html, f"f-{dom_id(key)}")


def _save(client, book, data, **extra):
    return client.post(_url(book, "entries/save/"), data, **extra)


def _publish(client, book):
    return client.post(_url(book, "draft/publish/"))


def _head(book) -> BookRevision:
    book.refresh_from_db()
    return BookRevision.objects.get(book=book, revision=book.head_revision)


def _entry(book, entry_id) -> dict:
    return next(e for e in _head(book).content["entries"] if e["id"] == entry_id)


@pytest.fixture
def full_book(tenant, make_book):
    return make_book(tenant, [BACKGROUND, GATE, FULL])


def test_an_untouched_entry_round_trips_through_its_form(operator, full_book):
    _html, data = _open(operator, full_book, "full")
    assert data["key"] == ["full"]
    assert _save(operator, full_book, data, **HX).status_code == 200
    assert not DraftEntry.objects.exists()  # identical to the revision: no change at all


def test_every_field_is_rendered_with_its_value(operator, full_book):
    _html, data = _open(operator, full_book, "full")
    assert data["e-keys"] == ["storm\nrain\\, heavy\n/gale{1,3}s?/i\n风暴"]
    assert json.loads(data["e-conditions"][0]) == FULL["conditions"]
    assert data["e-delay_until_recursion"] == ["2"] and data["e-use_group_scoring"] == ["false"]
    assert data["e-scan_depth"] == ["7"] and "e-enabled" not in data
    assert data["e-constant"] == ["on"] and data["e-content"] == [FULL["content"]]


def test_edits_are_kept_in_the_draft_then_published(operator, full_book):
    _html, data = _open(operator, full_book, "gate")
    data.update(
        {
            "e-title": ["City gate (night)"],
            "e-keys": ["copper key, gate\n/side ?door/i"],
            "e-content": ["Closed at night.\r\nGuards check papers."],
            "e-scan_depth": ["2"],
            "e-conditions": ['[{"path": "time", "op": "in", "value": ["night"]}]'],
            "e-use_group_scoring": ["true"],
        }
    )
    status = _save(operator, full_book, data, QUERY_STRING="autosave=1", **HX)
    assert 'data-saved="true"' in status.content.decode()
    assert 'id="wb-draftbar"' in status.content.decode()  # the bar, out of band
    page = operator.get(_url(full_book)).content.decode()  # a reload still has it
    assert "City gate (night)" in page and "1 edited" in page
    assert _publish(operator, full_book).status_code == 302
    gate = _entry(full_book, "gate")
    assert gate["title"] == "City gate (night)"
    assert gate["keys"] == ["copper key", "gate", "/side ?door/i"]
    assert gate["content"] == "Closed at night.\nGuards check papers."
    assert gate["scan_depth"] == 2 and gate["use_group_scoring"] is True
    assert _entry(full_book, "full") == {**_entry(full_book, "full"), **FULL}
    assert not BookDraft.objects.exists()


def test_add_entry_opens_it_and_publishes(operator, book):
    res = operator.post(_url(book, "entries/add/"), **HX)
    html = res.content.decode()
    key = re.search(r'data-key="(new:[0-9a-f]+)"', html).group(1)
    data = form_dict(html, f"f-{dom_id(key)}")
    assert re.fullmatch(r"entry-[0-9a-f]{6}", data["e-id"][0])
    assert data["e-probability"] == ["100"] and data["e-audience"] == ["actor"]
    data.update({"e-content": ["Gas lamps hiss."], "e-keys": ["lamp"]})
    assert _save(operator, book, data).status_code == 302  # without htmx: back to the list
    assert _publish(operator, book).status_code == 302
    entries = _head(book).content["entries"]
    assert len(entries) == 3 and entries[2]["content"] == "Gas lamps hiss."


def _error_of(html: str, field: str) -> str:
    match = re.search(rf'<ul class="errorlist error" data-field="{field}">(.*?)</ul>', html, re.S)
    assert match, f"no error next to {field}"
    return match.group(1)


@pytest.mark.parametrize(
    ("edits", "field", "expected"),
    [
        ({"e-id": "background"}, "id", "used by another entry"),
        ({"e-keys": "/(?<=a b/"}, "keys", "regex"),
        ({"e-conditions": "[{oops"}, "conditions", "invalid JSON"),
        ({"e-conditions": '[{"path": "a", "op": "zz"}]'}, "conditions", "op"),
        ({"e-position": "outlet"}, "outlet_name", "needs a name"),
        ({"e-probability": "101"}, "probability", "less than or equal to 100"),
        ({"e-delay_until_recursion": "maybe"}, "delay_until_recursion", "recursion"),
    ],
)
def test_errors_are_shown_next_to_the_field(operator, book, edits, field, expected):
    _html, data = _open(operator, book, "gate")
    data.update({name: [value] for name, value in edits.items()})
    data["e-title"] = ["Typed before the error"]
    html = _save(operator, book, data, **HX).content.decode()
    assert expected in _error_of(html, field)
    assert form_dict(html, f"f-{dom_id('gate')}")["e-title"] == ["Typed before the error"]
    assert not DraftEntry.objects.exists()


def test_without_javascript_an_entry_opens_and_errors_come_back(operator, book):
    html = operator.get(_url(book), {"edit": "gate"}).content.decode()
    data = form_dict(html, f"f-{dom_id('gate')}")
    data["e-probability"] = ["500"]
    res = _save(operator, book, data)
    assert res.status_code == 422 and "less than or equal to 100" in res.content.decode()


def test_a_publish_error_names_its_code(operator, book):
    for key, requires in (("background", "gate"), ("gate", "background")):
        _html, data = _open(operator, book, key)
        _save(operator, book, {**data, "e-requires": [requires]}, **HX)
    res = _publish(operator, book)
    assert res.status_code == 422 and 'data-error-code="dependency_cycle"' in res.content.decode()
    assert DraftEntry.objects.count() == 2 and _head(book).revision == 1


def test_two_editors_conflict_and_no_edit_is_lost(operator, admin, book):
    _html, mine = _open(operator, book, "gate")
    _save(operator, book, {**mine, "e-title": ["My title"]}, **HX)
    _html, theirs = _open(admin, book, "background")
    _save(admin, book, {**theirs, "e-content": ["Their background."]}, **HX)
    assert _publish(admin, book).status_code == 302
    res = _publish(operator, book)
    assert res.status_code == 409
    html = res.content.decode()
    assert 'id="wb-conflict"' in html and 'data-current-revision="2"' in html
    assert "Every change you made is still in your draft" in html
    assert f"/console/worldbooks/{book.pk}/diff/?a=1&amp;b=2" in html
    assert operator.post(_url(book, "draft/rebase/")).status_code == 302
    assert _publish(operator, book).status_code == 302
    assert _head(book).revision == 3
    assert _entry(book, "gate")["title"] == "My title"
    assert _entry(book, "background")["content"] == "Their background."


def test_restore_an_old_revision(operator, book):
    _html, data = _open(operator, book, "gate")
    _save(operator, book, {**data, "e-title": ["Changed"]}, **HX)
    _publish(operator, book)
    assert operator.post(_url(book, "draft/restore/"), {"revision": "1"}).status_code == 302
    assert "draft on r2" in operator.get(_url(book)).content.decode()
    _publish(operator, book)
    assert _entry(book, "gate")["title"] == "City gate" and _head(book).revision == 3


def test_book_fields_go_to_the_draft(operator, book):
    fields = {"name": "Renamed", "description": "d", "metadata": '{"a": 1}'}
    assert operator.post(_url(book, "draft/book/"), fields).status_code == 302
    assert "book fields changed" in operator.get(_url(book)).content.decode()
    _publish(operator, book)
    head = _head(book)
    assert (head.content["name"], head.content["metadata"]) == ("Renamed", {"a": 1})
    bad = operator.post(_url(book, "draft/book/"), {"name": "", "metadata": "[1]"}, follow=True)
    assert "Book fields not saved" in bad.content.decode()


@pytest.fixture
def big(tenant, make_book):
    entries = [
        {"id": f"e{i}", "title": f"Entry {i}", "content": f"Lore {i} " + "word " * (i % 7),
         "keys": [f"k{i}"], "enabled": i % 3 != 0}
        for i in range(120)
    ]  # fmt: skip
    return make_book(tenant, entries, name="Big")


def _number(html: str, element_id: str) -> int:
    return int(re.search(rf'id="{element_id}">(\d+)<', html).group(1))


def test_pages_totals_and_search(operator, big):
    html = operator.get(_url(big)).content.decode()
    assert html.count('class="wb-row') == 50 and _number(html, "wb-total-entries") == 120
    total = _number(html, "wb-total-tokens")
    last = operator.get(_url(big), {"page": "3"}).content.decode()
    assert last.count('class="wb-row') == 20
    found = operator.get(_url(big), {"q": "k17"}, HTTP_HX_TARGET="wb-list", **HX)
    fragment = found.content.decode()
    assert fragment.lstrip().startswith('<section id="wb-list"') and "<html" not in fragment
    assert _number(fragment, "wb-matched") == 1 and 'data-entry="e17"' in fragment
    assert _number(fragment, "wb-total-tokens") == total
    off = operator.get(_url(big), {"enabled": "no", "sort": "tokens", "dir": "desc"})
    assert _number(off.content.decode(), "wb-matched") == 40
    assert operator.get(_url(big), {"sort": "nonsense"}).status_code == 400


def test_bulk_disable_everything_a_search_matches(operator, big):
    shown = operator.get(_url(big), {"q": "k1"}).content.decode()
    assert _number(shown, "wb-matched") == 31  # k1, k10–k19, k100–k119
    body = {"action": "disable", "scope": "filter", "f_q": "k1", "expected": "31"}
    res = operator.post(_url(big, "bulk/"), body, follow=True)
    assert "Disable on 31 entries: 22 changed; published revision 2." in res.content.decode()
    entries = {e["id"]: e for e in _head(big).content["entries"]}
    matched = {f"e{i}" for i in range(120) if f"k{i}".startswith("k1")}
    assert all(entries[i]["enabled"] is False for i in matched)
    assert all(entries[i]["enabled"] == (int(i[1:]) % 3 != 0) for i in set(entries) - matched)
    stale = operator.post(_url(big, "bulk/"), {**body, "action": "enable", "expected": "30"})
    assert stale.status_code == 409 and "selection_changed" in stale.content.decode()


def test_bulk_on_ticked_entries(operator, big):
    body = {"action": "set_position", "position": "at_depth", "depth": "2", "keys": ["e1", "e5"]}
    assert operator.post(_url(big, "bulk/"), body).status_code == 302
    entries = {e["id"]: e for e in _head(big).content["entries"]}
    assert (entries["e5"]["position"], entries["e5"]["depth"]) == ("at_depth", 2)
    assert entries["e2"]["position"] == "before_character"
    missing = operator.post(_url(big, "bulk/"), {"action": "set_order", "keys": ["e1"]})
    assert missing.status_code == 422 and "order" in missing.content.decode()


def test_viewers_read_but_cannot_write(viewer, book):
    html = viewer.get(_url(book)).content.decode()
    assert 'id="wb-bulk"' not in html and "Read only" in html
    row = viewer.get(_url(book, "entries/row/"), {"key": "gate", "edit": "1"}, **HX)
    assert row.status_code == 200 and "disabled" in row.content.decode()
    for tail, data in (("entries/save/", {"key": "gate"}), ("bulk/", {"action": "disable"}),
                       ("draft/publish/", {}), ("entries/add/", {})):  # fmt: skip
        assert viewer.post(_url(book, tail), data).status_code == 403


def test_the_entry_form_speaks_plainly_common_fields_first(operator, full_book):
    """People read labels and a hint, not field names; the everyday fields come first and
    the rest sit under "Advanced", which opens by itself when one of them has an error."""
    from worldbook.forms import EntryForm
    from worldbook.views.entry_labels import COMMON, LABELS

    assert set(LABELS) == set(EntryForm.base_fields) - {"remove"}
    html, _data = _open(operator, full_book, "full")
    form = html[html.index(f'id="f-{dom_id("full")}"') :]
    advanced = form.index('<details class="wb-advanced"><summary>Advanced</summary>')
    for name in COMMON:
        assert form.index(f'name="e-{name}"') < advanced, name
    for name in ("delay_until_recursion", "conflict_key", "runtime_requirements"):
        assert form.index(f'name="e-{name}"') > advanced, name
        label, hint = LABELS[name]
        block = form[form.rindex('<div class="field', 0, form.index(f'name="e-{name}"')) :]
        block = block[: block.index("</div>")]
        assert f">{label}</label>" in block or f"> {label}</label>" in block, name
        assert escape(hint) in block and f">{name}<" not in block, name

    _html, data = _open(operator, full_book, "gate")
    data["e-delay_until_recursion"] = ["maybe"]
    html = _save(operator, full_book, data, **HX).content.decode()
    assert '<details class="wb-advanced" open>' in html
