"""Tenant isolation on every worldbook route: another tenant's ids are 404 (never 403, which
would confirm they exist), their bindings, timed state and file hashes are invisible."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.worldbook.api.wb_api_helpers import (
    book,
    counts,
    create,
    entry,
    error,
    select_body,
    st_entry,
    st_world,
)
from worldbook.models import Book, BookIndex, PromptBinding

pytestmark = pytest.mark.django_db

THEIR_BOOK = book("Theirs", entry("secret", "Their secret lore.", keys=["secret"]))


@pytest.fixture
def theirs(other_api):
    book_id = create(other_api, THEIR_BOOK)["book_id"]
    res = other_api.put(
        "/v1/prompt-bindings?prompt_id=mira", {"bindings": [{"book_id": book_id}]}, format="json"
    )
    assert res.status_code == 200
    return book_id


def foreign_calls(book_id: str):
    """(label, method, path, body) of every route that takes a book id."""
    return [
        ("detail", "get", f"/v1/books/{book_id}", None),
        ("revisions", "get", f"/v1/books/{book_id}/revisions", None),
        ("publish", "post", f"/v1/books/{book_id}/revisions", {**book(), "expected_revision": 1}),
        ("revision", "get", f"/v1/books/{book_id}/revisions/1", None),
        ("export", "get", f"/v1/books/{book_id}/revisions/1/export?format=native", None),
        ("index status", "get", f"/v1/books/{book_id}/index", None),
        ("index build", "post", f"/v1/books/{book_id}/index", {}),
        ("select", "post", "/v1/context/select", select_body(book_id, "secret")),
        ("search", "post", "/v1/search", {"query": "secret", "books": [{"book_id": book_id}]}),
    ]


def test_foreign_book_ids_are_404_everywhere_and_nothing_changes(api, theirs):
    before = counts()
    for label, method, path, body in foreign_calls(theirs):
        kwargs = {"format": "json"} if body is not None else {}
        res = getattr(api, method)(path, body, **kwargs) if body is not None else api.get(path)
        assert res.status_code == 404, (label, res.content)
        assert error(res)["code"] == "not_found", label
        assert "Their secret" not in res.content.decode(), label
    assert counts() == before
    assert Book.objects.get(pk=theirs).head_revision == 1
    assert not BookIndex.objects.exists()


def test_list_shows_only_my_books(api, other_api, theirs):
    mine = create(api, book("Mine"))["book_id"]
    assert [b["book_id"] for b in api.get("/v1/books").json()["books"]] == [mine]
    assert [b["book_id"] for b in other_api.get("/v1/books").json()["books"]] == [theirs]


def test_their_bindings_are_invisible_and_unbindable(api, other_api, theirs):
    assert api.get("/v1/prompt-bindings?prompt_id=mira").json()["bindings"] == []
    assert api.get("/v1/prompt-bindings/resolve?prompt_id=mira").json()["books"] == []
    res = api.put(
        "/v1/prompt-bindings?prompt_id=mira", {"bindings": [{"book_id": theirs}]}, format="json"
    )
    assert res.status_code == 422 and error(res)["code"] == "binding_book_missing"
    # My own binding of the same prompt id leaves theirs in place.
    mine = create(api, book("Mine"))["book_id"]
    res = api.put(
        "/v1/prompt-bindings?prompt_id=mira", {"bindings": [{"book_id": mine}]}, format="json"
    )
    assert res.status_code == 200
    cleared = api.put("/v1/prompt-bindings?prompt_id=mira", {"bindings": []}, format="json")
    assert cleared.status_code == 200
    resolved = other_api.get("/v1/prompt-bindings/resolve?prompt_id=mira").json()["books"]
    assert resolved == [{"book_id": theirs, "revision": 1}]
    assert PromptBinding.objects.filter(prompt_id="mira").count() == 1


def test_mixing_my_book_with_theirs_is_404(api, theirs):
    mine = create(api, book("Mine", entry("a", "mine", keys=["secret"])))["book_id"]
    body = {"books": [{"book_id": mine}, {"book_id": theirs}], "query": "secret"}
    for path in ("/v1/context/select", "/v1/search"):
        res = api.post(path, body, format="json")
        assert res.status_code == 404 and theirs in error(res)["message"], path


def test_native_and_file_imports_land_in_my_tenant_only(api, other_api, theirs):
    assert api.post("/v1/imports", {"books": [book("Batch")]}, format="json").status_code == 201
    data = st_world(st_entry(0, content="x"))
    files = {"files": [SimpleUploadedFile("w.json", data)]}
    assert other_api.post("/v1/imports/files", files, format="multipart").status_code == 201
    files = {"files": [SimpleUploadedFile("w.json", data)]}
    mine = api.post("/v1/imports/files", files, format="multipart").json()["books"][0]
    assert mine["deduplicated"] is False
    names = {b["name"] for b in api.get("/v1/books").json()["books"]}
    assert names == {"Batch", "w"}
    assert {b["name"] for b in other_api.get("/v1/books").json()["books"]} == {"Theirs", "w"}


def test_tenant_id_of_another_tenant_is_403_on_every_route(api, other_tenant, theirs):
    mine = create(api)["book_id"]
    routes = [
        ("get", "/v1/books"),
        ("post", "/v1/books"),
        ("get", f"/v1/books/{mine}"),
        ("get", f"/v1/books/{mine}/revisions"),
        ("post", f"/v1/books/{mine}/revisions"),
        ("get", f"/v1/books/{mine}/revisions/1"),
        ("get", f"/v1/books/{mine}/revisions/1/export"),
        ("get", f"/v1/books/{mine}/index"),
        ("post", f"/v1/books/{mine}/index"),
        ("post", "/v1/imports"),
        ("post", "/v1/imports/preview"),
        ("post", "/v1/imports/files"),
        ("post", "/v1/context/select"),
        ("post", "/v1/search"),
        ("get", "/v1/prompt-bindings?prompt_id=p"),
        ("put", "/v1/prompt-bindings?prompt_id=p"),
        ("get", "/v1/prompt-bindings/resolve?prompt_id=p"),
    ]
    before = counts()
    for method, path in routes:
        sep = "&" if "?" in path else "?"
        res = getattr(api, method)(f"{path}{sep}tenant_id={other_tenant.id}", {}, format="json")
        assert res.status_code == 403, (method, path, res.content)
        assert error(res)["code"] == "tenant_mismatch"
    assert counts() == before


def test_timed_state_is_per_tenant(api, other_api, theirs):
    sticky = book("Sticky", entry("bell", "Bell.", keys=["bell"], sticky=3))
    mine = create(api, sticky)["book_id"]
    body = select_body(mine, "bell", conversation_id="c-1", message_index=1)
    assert api.post("/v1/context/select", body, format="json").status_code == 200
    their_sticky = create(other_api, sticky)["book_id"]
    body = select_body(their_sticky, "quiet", conversation_id="c-1", message_index=2)
    out = other_api.post("/v1/context/select", body, format="json").json()
    assert {d["entry_id"]: d["reason"] for d in out["decisions"]} == {"bell": "not_triggered"}
