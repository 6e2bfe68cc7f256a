"""Prompt bindings: PUT replaces atomically, limits, and ``resolve`` to concrete revisions."""

from __future__ import annotations

import pytest

from tests.worldbook.api.wb_api_helpers import book, counts, create, error, publish
from worldbook.models import PromptBinding

pytestmark = pytest.mark.django_db

URL = "/v1/prompt-bindings?prompt_id=mira"
RESOLVE = "/v1/prompt-bindings/resolve?prompt_id=mira"


def put(api, bindings, url: str = URL):
    return api.put(url, {"bindings": bindings}, format="json")


def test_put_get_resolve_pinned_and_head_following(api, tenant):
    pinned = create(api, book("pinned"))["book_id"]
    follows = create(api, book("follows"))["book_id"]
    res = put(
        api,
        [{"book_id": pinned, "revision": 1}, {"book_id": follows, "revision": None}],
    )
    assert res.status_code == 200
    assert res.json() == {
        "tenant_id": str(tenant.id),
        "prompt_id": "mira",
        "bindings": [
            {"book_id": pinned, "revision": 1, "position": 0, "enabled": True},
            {"book_id": follows, "revision": None, "position": 1, "enabled": True},
        ],
    }
    assert api.get(URL).json() == res.json()
    assert api.get(RESOLVE).json()["books"] == [
        {"book_id": pinned, "revision": 1},
        {"book_id": follows, "revision": 1},
    ]
    assert publish(api, pinned, book("pinned v2"), 1).status_code == 201
    assert publish(api, follows, book("follows v2"), 1).status_code == 201
    resolved = api.get(RESOLVE).json()
    assert resolved["tenant_id"] == str(tenant.id) and resolved["prompt_id"] == "mira"
    assert resolved["books"] == [
        {"book_id": pinned, "revision": 1},
        {"book_id": follows, "revision": 2},
    ]


def test_put_replaces_every_binding(api):
    a, b, c = (create(api, book(n))["book_id"] for n in "abc")
    assert put(api, [{"book_id": a}, {"book_id": b}]).status_code == 200
    res = put(api, [{"book_id": c, "position": 5}])
    assert [x["book_id"] for x in res.json()["bindings"]] == [c]
    assert PromptBinding.objects.filter(prompt_id="mira").count() == 1


def test_empty_list_clears(api):
    a = create(api)["book_id"]
    assert put(api, [{"book_id": a}]).status_code == 200
    cleared = put(api, [])
    assert cleared.status_code == 200 and cleared.json()["bindings"] == []
    assert api.get(RESOLVE).json()["books"] == []


def test_order_follows_position_and_disabled_are_not_resolved(api):
    a, b, c = (create(api, book(n))["book_id"] for n in "abc")
    put(
        api,
        [
            {"book_id": a, "position": 3},
            {"book_id": b, "position": 1},
            {"book_id": c, "position": 2, "enabled": False},
        ],
    )
    assert [x["book_id"] for x in api.get(URL).json()["bindings"]] == [b, c, a]
    assert [x["book_id"] for x in api.get(RESOLVE).json()["books"]] == [b, a]


def test_prompts_are_independent(api):
    a, b = (create(api, book(n))["book_id"] for n in "ab")
    put(api, [{"book_id": a}])
    put(api, [{"book_id": b}], "/v1/prompt-bindings?prompt_id=other")
    assert [x["book_id"] for x in api.get(RESOLVE).json()["books"]] == [a]


def test_at_most_twenty_books(api):
    ids = [create(api, book(f"b{i}"))["book_id"] for i in range(21)]
    assert put(api, [{"book_id": i} for i in ids[:20]]).status_code == 200
    before = counts()
    res = put(api, [{"book_id": i} for i in ids])
    assert res.status_code == 422 and "20" in error(res)["message"]
    assert counts() == before
    assert len(api.get(URL).json()["bindings"]) == 20


def _assert_rejected_atomically(api, bindings, code: str, detail: dict | None = None):
    keep = create(api, book("kept"))["book_id"]
    assert put(api, [{"book_id": keep}]).status_code == 200
    res = put(api, [{"book_id": keep}, *bindings])
    assert res.status_code == 422, res.content
    err = error(res)
    assert err["code"] == code
    if detail is not None:
        assert err["details"] == detail
    # The previous bindings are untouched.
    assert [x["book_id"] for x in api.get(URL).json()["bindings"]] == [keep]
    return err


def test_duplicates_are_rejected(api):
    a = create(api)["book_id"]
    err = _assert_rejected_atomically(
        api, [{"book_id": a}, {"book_id": a, "revision": 1}], "validation_error"
    )
    assert "twice" in err["message"] and a in err["message"]


@pytest.mark.parametrize(
    "spelling", [str.upper, lambda i: i.replace("-", ""), lambda i: "{" + i + "}"]
)
def test_the_same_book_spelled_twice_is_a_duplicate_binding(api, spelling):
    """Two spellings of one book id pass the list's own check and name one book: a 422
    naming it, not the unique constraint's 500."""
    a = create(api)["book_id"]
    err = _assert_rejected_atomically(
        api, [{"book_id": a}, {"book_id": spelling(a)}], "duplicate_binding", {"book_id": a}
    )
    assert a in err["message"]


def test_missing_book_fails_loudly(api):
    ghost = "00000000-0000-0000-0000-000000000000"
    _assert_rejected_atomically(
        api, [{"book_id": ghost}], "binding_book_missing", {"book_id": ghost}
    )
    _assert_rejected_atomically(
        api, [{"book_id": "not-a-uuid"}], "binding_book_missing", {"book_id": "not-a-uuid"}
    )


def test_missing_revision_fails_loudly(api):
    a = create(api)["book_id"]
    _assert_rejected_atomically(
        api,
        [{"book_id": a, "revision": 2}],
        "binding_revision_missing",
        {"book_id": a, "revision": 2},
    )


@pytest.mark.parametrize(
    "item",
    [
        {"book_id": 7},
        {"book_id": "B", "revision": 0},
        {"book_id": "B", "revision": "1"},
        {"book_id": "B", "revision": True},
        {"book_id": "B", "enabled": "yes"},
        {"book_id": "B", "position": 1.5},
        {"book_id": "B", "position": 2_000_000},
        {"book_id": "B", "weight": 3},
        "B",
    ],
)
def test_malformed_items_are_422(api, item):
    b = create(api, book("B"))["book_id"]
    if isinstance(item, dict):
        item = {k: (b if v == "B" else v) for k, v in item.items()}
    else:
        item = b
    err = _assert_rejected_atomically(api, [item], "validation_error")
    if isinstance(item, dict) and "weight" in item:
        assert "weight" in err["message"]


@pytest.mark.parametrize(
    "body", [{}, {"bindings": {}}, {"bindings": [], "extra": 1}, {"binding": []}]
)
def test_malformed_bodies_are_422(api, body):
    res = api.put(URL, body, format="json")
    assert res.status_code == 422 and error(res)["code"] == "validation_error"


@pytest.mark.parametrize("query", ["", "?prompt_id=", "?prompt_id=" + "p" * 201])
def test_prompt_id_is_required(api, query):
    for method, path in (
        ("get", "/v1/prompt-bindings"),
        ("put", "/v1/prompt-bindings"),
        ("get", "/v1/prompt-bindings/resolve"),
    ):
        res = getattr(api, method)(path + query, {"bindings": []}, format="json")
        assert res.status_code == 422 and "prompt_id" in error(res)["message"], (method, path)


def test_prompt_id_of_200_characters_works(api):
    long_id = "p" * 200
    a = create(api)["book_id"]
    res = put(api, [{"book_id": a}], f"/v1/prompt-bindings?prompt_id={long_id}")
    assert res.status_code == 200 and res.json()["prompt_id"] == long_id


def test_binding_to_a_revision_that_disappears_fails_loudly_on_resolve(api):
    from worldbook.models import BookRevision

    a = create(api)["book_id"]
    put(api, [{"book_id": a, "revision": 1}])
    # Revisions are immutable; a broken database (restored partially) must not pass silently.
    BookRevision.objects.filter(book_id=a).delete()
    res = api.get(RESOLVE)
    assert res.status_code == 409 and error(res)["code"] == "binding_broken"
    assert error(res)["details"] == {"book_id": a, "revision": 1}
