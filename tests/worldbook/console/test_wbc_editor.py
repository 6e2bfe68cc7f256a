"""The book editor: every field round-trips through the rendered page, publish is CAS."""

from __future__ import annotations

import json
import re

import pytest

from tests.worldbook.console.conftest import BACKGROUND, GATE
from tests.worldbook.console.wbc_html import form_dict, form_pairs
from worldbook.models import BookRevision

pytestmark = pytest.mark.django_db

# Every field away from its default, including the awkward ones: a key with a literal comma,
# a regex key with a comma, multi-line content, JSON fields, null-able numbers, tri-states.
FULL = {
    "id": "full",
    "title": "Storm season",
    "content": "Line one.\nLine two, with a comma.\n\n  indented line",
    "enabled": False,
    "constant": True,
    "required": False,
    "keys": ["storm", "rain, heavy", "/gale{1,3}s?/i", "风暴"],
    "secondary_keys": ["harbour"],
    "selective": True,
    "logic": "not_all",
    "case_sensitive": True,
    "match_whole_words": True,
    "probability": 55,
    "scan_depth": 7,
    "conditions": [{"path": "quest.started", "op": "eq", "value": True}],
    "requires": ["gate"],
    "priority": -5,
    "order": 300,
    "conflict_key": "weather",
    "audience": ["actor", "narrator"],
    "kind": "rule",
    "position": "outlet",
    "depth": 3,
    "role": "assistant",
    "outlet_name": "side",
    "exclude_recursion": False,
    "prevent_recursion": False,
    "runtime_requirements": ["ejs"],
    "metadata": {"note": "x", "n": [1, 2]},
    "source": {"format": "sillytavern", "uid": 3},
    "sticky": 2,
    "cooldown": 3,
    "delay": 0,
    "delay_until_recursion": 2,
    "group": "weather, mood",
    "group_override": True,
    "group_weight": 40,
    "use_group_scoring": False,
    "vectorized": True,
}


def _url(book) -> str:
    return f"/console/worldbooks/{book.pk}/"


def _open(client, book) -> dict:
    response = client.get(_url(book))
    assert response.status_code == 200
    return form_dict(response.content.decode(), "book-editor")


def _head(book) -> BookRevision:
    book.refresh_from_db()
    return BookRevision.objects.get(book=book, revision=book.head_revision)


def _entry(revision, entry_id) -> dict:
    return next(e for e in revision.content["entries"] if e["id"] == entry_id)


@pytest.fixture
def full_book(tenant, make_book):
    return make_book(tenant, [BACKGROUND, GATE, FULL])


def test_an_untouched_book_publishes_identical_content(operator, full_book):
    before = _head(full_book)
    data = _open(operator, full_book)
    assert data["expected_revision"] == ["1"]
    assert data["rows"] == ["e0", "e1", "e2"]
    response = operator.post(_url(full_book), {**data, "action": "publish"})
    assert response.status_code == 302, response.content.decode()[:2000]
    after = _head(full_book)
    assert after.revision == 2
    assert after.content == before.content
    assert after.content_hash == before.content_hash


def test_every_field_is_rendered_with_its_value(operator, full_book):
    data = _open(operator, full_book)
    assert data["e2-keys"] == ["storm\nrain\\, heavy\n/gale{1,3}s?/i\n风暴"]
    assert json.loads(data["e2-conditions"][0]) == FULL["conditions"]
    assert data["e2-delay_until_recursion"] == ["2"]
    assert data["e2-use_group_scoring"] == ["false"]
    assert data["e2-scan_depth"] == ["7"] and data["e1-scan_depth"] == [""]
    assert "e2-enabled" not in data and data["e2-constant"] == ["on"]
    assert data["e2-content"] == [FULL["content"]]


def test_edits_of_many_fields_are_published(operator, full_book):
    data = _open(operator, full_book)
    data.update(
        {
            "name": ["Greyport, revised"],
            "e1-title": ["City gate (night)"],
            "e1-keys": ["copper key, gate\n/side ?door/i"],
            "e1-content": ["Closed at night.\r\nGuards check papers."],
            "e1-scan_depth": ["2"],
            "e1-conditions": ['[{"path": "time", "op": "in", "value": ["night"]}]'],
            "e1-use_group_scoring": ["true"],
            "e2-scan_depth": [""],
            "e2-conflict_key": [""],
            "e2-source": [""],
            "e2-delay_until_recursion": ["true"],
        }
    )
    data.pop("e2-constant")
    assert operator.post(_url(full_book), data).status_code == 302
    head = _head(full_book)
    assert head.content["name"] == "Greyport, revised"
    gate = _entry(head, "gate")
    assert gate["title"] == "City gate (night)"
    assert gate["keys"] == ["copper key", "gate", "/side ?door/i"]
    assert gate["content"] == "Closed at night.\nGuards check papers."
    assert gate["scan_depth"] == 2 and gate["use_group_scoring"] is True
    assert gate["conditions"] == [{"path": "time", "op": "in", "value": ["night"]}]
    full = _entry(head, "full")
    assert full["scan_depth"] is None and full["conflict_key"] is None and full["source"] is None
    assert full["constant"] is False and full["delay_until_recursion"] is True


def test_add_entry_without_javascript_keeps_edits(operator, book):
    data = _open(operator, book)
    data["e0-title"] = ["Edited before adding"]
    response = operator.post(_url(book), {**data, "action": "add_entry"})
    assert response.status_code == 200
    html = response.content.decode()
    again = form_dict(html, "book-editor")
    assert again["e0-title"] == ["Edited before adding"]
    assert len(again["rows"]) == 3
    new_prefix = again["rows"][2]
    assert re.fullmatch(r"entry-[0-9a-f]{6}", again[f"{new_prefix}-id"][0])
    assert _head(book).revision == 1
    again[f"{new_prefix}-content"] = ["A brand new entry."]
    again[f"{new_prefix}-keys"] = ["lamp"]
    assert operator.post(_url(book), {**again, "action": "publish"}).status_code == 302
    head = _head(book)
    assert head.revision == 2 and head.content["entries"][2]["content"] == "A brand new entry."
    assert head.content["entries"][0]["title"] == "Edited before adding"


def test_htmx_row_is_a_complete_entry_and_publishes(operator, book):
    fragment = operator.get(f"/console/worldbooks/{book.pk}/entry-row/", HTTP_HX_REQUEST="true")
    html = fragment.content.decode()
    assert html.lstrip().startswith("<tbody")
    pairs = dict(form_pairs(f'<form id="row">{html}</form>', "row"))
    prefix = pairs["rows"]
    assert pairs[f"{prefix}-probability"] == "100" and pairs[f"{prefix}-audience"] == "actor"
    data = _open(operator, book)
    data["rows"].append(prefix)
    for name, value in form_pairs(f'<form id="row">{html}</form>', "row"):
        if name != "rows":
            data[name] = [value]
    data[f"{prefix}-content"] = ["Gas lamps hiss."]
    assert operator.post(_url(book), data).status_code == 302
    entries = _head(book).content["entries"]
    assert len(entries) == 3 and entries[2]["content"] == "Gas lamps hiss."
    assert entries[2]["audience"] == ["actor"] and entries[2]["exclude_recursion"] is True


def test_remove_drops_the_entry_even_if_it_is_invalid(operator, book):
    data = _open(operator, book)
    data["e0-remove"] = ["on"]
    data["e0-probability"] = ["not a number"]
    data["e0-conditions"] = ["{broken"]
    assert operator.post(_url(book), data).status_code == 302
    assert [e["id"] for e in _head(book).content["entries"]] == ["gate"]


def test_conflict_keeps_the_edits_and_offers_reload_and_overwrite(operator, admin, book):
    mine = _open(operator, book)
    theirs = _open(admin, book)
    theirs["e1-title"] = ["Their title"]
    assert admin.post(_url(book), theirs).status_code == 302
    mine["e1-title"] = ["My title"]
    mine["e0-content"] = ["My rewritten background."]
    response = operator.post(_url(book), mine)
    assert response.status_code == 409
    html = response.content.decode()
    assert 'id="wb-conflict"' in html and 'data-current-revision="2"' in html
    assert "Someone published revision 2 while you were editing revision 1" in html
    assert f'href="/console/worldbooks/{book.pk}/"' in html  # reload
    assert f"/console/worldbooks/{book.pk}/diff/?a=1&amp;b=2" in html
    kept = form_dict(html, "book-editor")
    assert kept["e1-title"] == ["My title"]
    assert kept["e0-content"] == ["My rewritten background."]
    assert kept["expected_revision"] == ["1"]
    assert _entry(_head(book), "gate")["title"] == "Their title"
    # Publishing again at the same base conflicts again; "publish over" moves on.
    assert operator.post(_url(book), kept).status_code == 409
    response = operator.post(_url(book), {**kept, "overwrite_revision": "2"})
    assert response.status_code == 302
    head = _head(book)
    assert head.revision == 3 and _entry(head, "gate")["title"] == "My title"


def _error_of(html: str, prefix: str, field: str) -> str:
    """The error list rendered right after ``prefix-field`` in the row of ``prefix``."""
    row = html.split(f'id="entry-{prefix}"')[1].split("</tbody>")[0]
    match = re.search(rf'<ul class="errorlist error" data-field="{field}">(.*?)</ul>', row, re.S)
    assert match, f"no error next to {prefix}-{field}"
    return match.group(1)


@pytest.mark.parametrize(
    ("edits", "prefix", "field", "expected"),
    [
        ({"e1-id": "background"}, "e1", "id", "used by more than one entry"),
        ({"e1-requires": "nowhere"}, "e1", "requires", "nowhere"),
        ({"e1-requires": "gate"}, "e1", "requires", "cannot require itself"),
        ({"e1-keys": "/(?<=a)b/"}, "e1", "keys", "regex"),
        ({"e1-conditions": "[{oops"}, "e1", "conditions", "invalid JSON"),
        ({"e1-conditions": '{"path": "a"}'}, "e1", "conditions", "must be a list"),
        ({"e1-conditions": '[{"path": "a", "op": "zz"}]'}, "e1", "conditions", "conditions.0.op"),
        ({"e1-position": "outlet"}, "e1", "outlet_name", "needs a name"),
        ({"e0-probability": "101"}, "e0", "probability", "less than or equal to 100"),
        ({"e0-delay_until_recursion": "maybe"}, "e0", "delay_until_recursion", "recursion"),
    ],
)
def test_errors_are_shown_next_to_the_field(operator, book, edits, prefix, field, expected):
    data = _open(operator, book)
    data.update({name: [value] for name, value in edits.items()})
    data["e0-title"] = ["Typed before the error"]
    response = operator.post(_url(book), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert 'id="wb-errors"' in html
    assert expected in _error_of(html, prefix, field)
    assert form_dict(html, "book-editor")["e0-title"] == ["Typed before the error"]
    assert _head(book).revision == 1


def test_dependency_cycle_marks_every_entry_in_it(operator, book):
    data = _open(operator, book)
    data["e0-requires"] = ["gate"]
    data["e1-requires"] = ["background"]
    html = operator.post(_url(book), data).content.decode()
    assert "dependency_cycle" in html
    assert "dependency cycle" in _error_of(html, "e0", "requires")
    assert "dependency cycle" in _error_of(html, "e1", "requires")


def test_book_name_error_is_shown_on_the_book_form(operator, book):
    data = _open(operator, book)
    data["name"] = [""]
    data["metadata"] = ["[1, 2]"]
    response = operator.post(_url(book), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert "This field is required" in html and "must be an object" in html


def test_packed_submission_of_a_book_larger_than_the_field_limit(operator, tenant, make_book):
    """60 entries × 40 inputs is over Django's 1,000-field limit: the JS packs them."""
    entries = [{"id": f"e-{i}", "content": f"Entry {i}.", "keys": [f"k{i}"]} for i in range(60)]
    big = make_book(tenant, entries, name="Big")
    html = operator.get(_url(big)).content.decode()
    pairs = form_pairs(html, "book-editor")
    assert len(pairs) > 1000
    pairs = [(n, v) for n, v in pairs if n != "csrfmiddlewaretoken"]
    pairs = [(n, "Renamed 59" if n == "e59-title" else v) for n, v in pairs]
    pairs.append(("action", "publish"))
    response = operator.post(_url(big), {"packed": json.dumps(pairs)})
    assert response.status_code == 302
    head = _head(big)
    assert head.revision == 2 and head.content["entries"][59]["title"] == "Renamed 59"
    bad = operator.post(_url(big), {"packed": '{"not": "pairs"}'})
    assert bad.status_code == 400 and _head(big).revision == 2


def test_restore_an_old_revision_in_the_editor(operator, book):
    data = _open(operator, book)
    data["e1-title"] = ["Changed"]
    operator.post(_url(book), data)
    response = operator.get(_url(book) + "?from=1")
    html = response.content.decode()
    restored = form_dict(html, "book-editor")
    assert restored["e1-title"] == ["City gate"] and restored["expected_revision"] == ["2"]
    assert operator.post(_url(book), restored).status_code == 302
    assert _entry(_head(book), "gate")["title"] == "City gate" and _head(book).revision == 3
