"""Boundary limits of the native book contract, enforced at the API with 413/422 and no write.

Each limit is checked at its edge: the largest allowed value is accepted and one more is a 422
that names the offending field (or the entries, for whole-revision rules).
"""

from __future__ import annotations

import pytest

from tests.worldbook.api.wb_api_helpers import book, counts, create, entry, error, publish

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024


def post_book(api, payload):
    return api.post("/v1/books", payload, format="json")


def assert_rejected(api, payload, *, field: str, code: str = "validation_error") -> dict:
    before = counts()
    res = post_book(api, payload)
    assert res.status_code == 422, res.content
    err = error(res)
    assert err["code"] == code, err
    assert field in err["message"] or field in str(err["details"]), err
    assert counts() == before
    return err


@pytest.mark.parametrize(
    ("where", "payload", "field"),
    [
        ("book", {**book(), "tenant_id": "t"}, "tenant_id"),
        ("entry", book("b", entry("a", colour="red")), "entries.0.colour"),
        ("condition", book("b", entry("a", conditions=[{"path": "x", "op": "eq", "v": 1}])), "v"),
    ],
)
def test_unknown_fields_are_422_naming_the_field(api, where, payload, field):
    err = assert_rejected(api, payload, field=field)
    assert "unknown field" in err["message"]
    assert err["details"]["errors"][0]["type"] == "extra_forbidden"


def test_unknown_field_in_a_publish_is_422(api):
    book_id = create(api)["book_id"]
    res = publish(api, book_id, {**book(), "revision": 7}, 1)
    assert res.status_code == 422 and "'revision'" in error(res)["message"]


@pytest.mark.parametrize(
    ("field", "ok", "too_much"),
    [
        ("name", "n" * 300, "n" * 301),
        ("description", "d" * 10_000, "d" * 10_001),
    ],
)
def test_book_string_limits(api, field, ok, too_much):
    assert post_book(api, {**book(), field: ok}).status_code == 201
    assert_rejected(api, {**book(), field: too_much}, field=field)
    assert_rejected(api, {**book(), "name": ""}, field="name")


@pytest.mark.parametrize(
    ("field", "ok", "too_much"),
    [
        ("id", "i" * 150, "i" * 151),
        ("title", "t" * 500, "t" * 501),
        ("content", "c" * 200_000, "c" * 200_001),
        ("keys", [f"k{i}" for i in range(200)], [f"k{i}" for i in range(201)]),
        ("secondary_keys", [f"k{i}" for i in range(200)], [f"k{i}" for i in range(201)]),
        ("keys", ["k" * 500], ["k" * 501]),
        ("probability", 100, 101),
        ("scan_depth", 100, 101),
        ("priority", 1_000_000, 1_000_001),
        ("order", -1_000_000, -1_000_001),
        ("conditions", [{"path": f"p{i}", "op": "exists"} for i in range(20)], None),
        ("logic", "not_all", "nand"),
        ("position", "at_depth", "somewhere"),
    ],
)
def test_entry_field_limits(api, field, ok, too_much):
    fields = {"content": "x", "id": "e"} | {field: ok}
    assert post_book(api, book("b", fields)).status_code == 201
    if too_much is not None:
        fields[field] = too_much
        assert_rejected(api, book("b", fields), field=f"entries.0.{field}")


def test_too_many_conditions_and_requires(api):
    conditions = [{"path": f"p{i}", "op": "exists"} for i in range(21)]
    assert_rejected(api, book("b", entry("a", conditions=conditions)), field="conditions")
    others = [entry(f"r{i}") for i in range(21)]
    requires = [e["id"] for e in others]
    assert_rejected(api, book("b", entry("a", requires=requires), *others), field="requires")


def test_five_thousand_entries_and_one_more(api):
    entries = [{"id": f"e{i}", "content": "x"} for i in range(5_000)]
    res = post_book(api, book("big", *entries))
    assert res.status_code == 201 and res.json()["books"][0]["import_report"]["entry_count"] == 5000
    assert_rejected(api, book("big", *entries, {"id": "one-more", "content": "x"}), field="entries")


def test_content_is_required(api):
    assert_rejected(api, book("b", {"id": "a", "keys": ["k"]}), field="entries.0.content")


def test_duplicate_entry_ids_are_named(api):
    err = assert_rejected(
        api, book("b", entry("a"), entry("b"), entry("a")), field="a", code="duplicate_entry_id"
    )
    assert err["details"] == {"entry_ids": ["a"]}


def test_outlet_needs_a_name(api):
    err = assert_rejected(
        api, book("b", entry("o", position="outlet")), field="o", code="outlet_name_required"
    )
    assert err["details"] == {"entry_ids": ["o"]}


def test_requires_missing_is_named(api):
    err = assert_rejected(
        api,
        book("b", entry("a", requires=["ghost"]), entry("b")),
        field="ghost",
        code="dependency_missing",
    )
    assert err["details"] == {"missing": [{"entry_id": "a", "requires": "ghost"}]}


def test_requires_self_is_named(api):
    err = assert_rejected(
        api, book("b", entry("me", requires=["me"])), field="me", code="dependency_self"
    )
    assert err["details"] == {"entry_ids": ["me"]}


def test_requires_cycle_is_named(api):
    payload = book(
        "b",
        entry("a", requires=["b"]),
        entry("b", requires=["c"]),
        entry("c", requires=["a"]),
        entry("d", requires=["a"]),
    )
    err = assert_rejected(api, payload, field="a", code="dependency_cycle")
    assert err["details"]["entry_ids"] == ["a", "b", "c"]
    assert err["details"]["cycle"][0] == err["details"]["cycle"][-1]


def test_publish_runs_the_same_whole_revision_checks(api):
    book_id = create(api)["book_id"]
    res = publish(api, book_id, book("b", entry("a", requires=["a"])), 1)
    assert res.status_code == 422 and error(res)["code"] == "dependency_self"
    assert api.get(f"/v1/books/{book_id}").json()["head_revision"] == 1


@pytest.mark.parametrize(
    "key", ["/(?<=a b/", "/a(?=b/", "/(?=a)((a{100}){100}){100}/", "/[unclosed/"]
)
def test_invalid_regex_keys_name_the_entry(api, key):
    err = assert_rejected(
        api,
        book("b", entry("ok"), entry("bad-rx", keys=["plain", key])),
        field="bad-rx",
        code="invalid_regex",
    )
    assert err["details"]["entry_id"] == "bad-rx" and err["details"]["key"] == key
    assert err["details"]["field"] == "keys"


def test_valid_regex_keys_publish(api):
    assert post_book(api, book("b", entry("rx", keys=["/gat(e|es)/i"]))).status_code == 201
    looking = book("c", entry("rx", keys=["/(?<=the )gate(?! house)/i", "/(a)\\1/"]))
    assert post_book(api, looking).status_code == 201


def test_text_postgres_cannot_store_is_422_not_500(api):
    for payload, path in (
        (book("b", entry("a", "nul\x00byte")), "entries.0.content"),
        (book("nul\x00name"), "name"),
        ({**book(), "metadata": {"k\x00": 1}}, "metadata"),
    ):
        before = counts()
        res = post_book(api, payload)
        assert res.status_code == 422 and error(res)["code"] == "invalid_text"
        assert path in error(res)["details"]["path"]
        assert counts() == before


def test_lone_surrogates_are_422_not_500(api):
    raw = '{"name": "b", "entries": [], "metadata": {"k": "\\ud800"}}'
    res = api.generic("POST", "/v1/books", raw, content_type="application/json")
    assert res.status_code == 422 and error(res)["code"] == "invalid_text"
    assert error(res)["details"]["path"] == "body.metadata.k"


def test_deeply_nested_json_is_400(api):
    res = api.generic("POST", "/v1/books", "[" * 100_000, content_type="application/json")
    assert res.status_code == 400 and error(res)["code"] == "invalid_json"


def test_non_object_and_invalid_json_bodies(api):
    assert error(api.post("/v1/books", [book()], format="json"))["code"] == "validation_error"
    bad = api.generic("POST", "/v1/books", "{", content_type="application/json")
    assert bad.status_code == 400 and error(bad)["code"] == "invalid_json"


def test_body_over_48_mib_is_413(api):
    before = counts()
    # A real body one byte over the limit: refused from its length before it is parsed.
    res = api.generic("POST", "/v1/books", b" " * (48 * MiB + 1), content_type="application/json")
    assert res.status_code == 413 and error(res)["code"] == "payload_too_large"
    # The same when only the header says so (a client streaming a huge body).
    for path in ("/v1/imports", "/v1/context/select", "/v1/search"):
        res = api.generic(
            "POST",
            path,
            b"{}",
            content_type="application/json",
            CONTENT_LENGTH=str(48 * MiB + 1),
        )
        assert res.status_code == 413, path
    assert counts() == before
