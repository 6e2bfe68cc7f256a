"""A character's worldbook bindings: list, add, pin, disable, remove, errors."""

from __future__ import annotations

import pytest

from tests.worldbook.console.wbc_html import form_dict
from worldbook import selectors

pytestmark = pytest.mark.django_db


def _url(character) -> str:
    return f"/console/worldbooks/bindings/{character.pk}/"


def _open(client, character) -> dict:
    response = client.get(_url(character))
    assert response.status_code == 200
    return form_dict(response.content.decode(), "wb-bindings")


def _bound(tenant, character):
    return [
        (str(b.book_id), b.revision, b.enabled, b.position)
        for b in selectors.list_bindings(tenant, str(character.pk))
    ]


def test_add_pin_disable_and_remove(operator, tenant, character, book, make_book):
    second = make_book(tenant, [], name="Second")
    data = _open(operator, character)
    assert data["b-TOTAL_FORMS"] == ["1"] and data["b-INITIAL_FORMS"] == ["0"]
    data.update({"b-0-book": [str(book.pk)], "b-0-position": ["0"]})
    response = operator.post(_url(character), data)
    assert response.status_code == 302 and response["Location"] == _url(character)
    assert _bound(tenant, character) == [(str(book.pk), None, True, 0)]

    page = operator.get(_url(character)).content.decode()
    assert 'r1 <span class="muted">(head)</span>' in page
    data = form_dict(page, "wb-bindings")
    assert data["b-TOTAL_FORMS"] == ["2"] and data["b-0-book"] == [str(book.pk)]
    data.update({"b-0-revision": ["1"], "b-1-book": [str(second.pk)], "b-1-position": ["5"]})
    data.pop("b-0-enabled")
    assert operator.post(_url(character), data).status_code == 302
    assert _bound(tenant, character) == [
        (str(book.pk), 1, False, 0),
        (str(second.pk), None, True, 5),
    ]
    assert selectors.resolve_bindings(tenant, str(character.pk)) == [
        {"book_id": str(second.pk), "revision": 1}
    ]

    data = _open(operator, character)
    data["b-0-DELETE"] = ["on"]
    assert operator.post(_url(character), data).status_code == 302
    assert _bound(tenant, character) == [(str(second.pk), None, True, 5)]


def test_errors_are_shown_and_nothing_changes(operator, tenant, character, book):
    data = _open(operator, character)
    data.update({"b-0-book": [str(book.pk)], "b-0-revision": ["7"], "b-0-position": ["0"]})
    response = operator.post(_url(character), data)
    assert response.status_code == 422
    html = response.content.decode()
    assert 'data-error-code="binding_revision_missing"' in html and "has no revision 7" in html
    assert _bound(tenant, character) == []


def test_the_same_book_twice_is_refused(operator, tenant, character, book):
    data = _open(operator, character)
    data.update({"b-0-book": [str(book.pk)], "b-0-position": ["0"]})
    operator.post(_url(character), data)
    data = _open(operator, character)
    data.update({"b-1-book": [str(book.pk)], "b-1-position": ["1"]})
    response = operator.post(_url(character), data)
    assert response.status_code == 422 and "already bound" in response.content.decode()
    assert len(_bound(tenant, character)) == 1


def test_a_foreign_book_is_not_a_choice(operator, tenant, character, foreign_book):
    data = _open(operator, character)
    data.update({"b-0-book": [str(foreign_book.pk)], "b-0-position": ["0"]})
    response = operator.post(_url(character), data)
    assert response.status_code == 422
    assert "Select a valid choice" in response.content.decode()
    assert _bound(tenant, character) == []


def test_viewer_sees_disabled_rows(viewer, operator, tenant, character, book):
    data = _open(operator, character)
    data.update({"b-0-book": [str(book.pk)], "b-0-position": ["0"]})
    operator.post(_url(character), data)
    html = viewer.get(_url(character)).content.decode()
    assert "Read only" in html and "Save bindings" not in html
    assert 'name="b-0-book"' in html and "disabled" in html.split('name="b-0-book"')[1][:80]
    assert viewer.post(_url(character), data).status_code == 403
