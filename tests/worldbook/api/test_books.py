"""Books and revisions: create, list, read, publish with CAS, idempotency, auth and scopes."""

from __future__ import annotations

import pytest

from tests.worldbook.api.wb_api_helpers import book, counts, create, entry, error, publish
from worldbook.models import Book, BookRevision

pytestmark = pytest.mark.django_db

MISSING = "00000000-0000-0000-0000-000000000000"


def test_create_returns_revision_1_and_the_book_reads_back(api):
    payload = book("Greyport", entry("gate", "The gate shuts at dusk.", keys=["gate"]))
    res = api.post("/v1/books", payload, format="json")
    assert res.status_code == 201
    body = res.json()
    assert body["replayed"] is False and len(body["books"]) == 1
    created = body["books"][0]
    assert created["revision"] == 1 and created["deduplicated"] is False
    assert created["import_report"] == {"format": "native", "entry_count": 1}

    detail = api.get(f"/v1/books/{created['book_id']}")
    assert detail.status_code == 200
    got = detail.json()
    assert got["name"] == "Greyport" and got["head_revision"] == 1
    head = got["head"]
    assert head["revision"] == 1 and head["entry_count"] == 1 and len(head["content_hash"]) == 64
    stored = head["book"]["entries"][0]
    # Defaults of the seed's field table are filled in.
    assert stored["audience"] == ["actor"] and stored["position"] == "before_character"
    assert stored["role"] == "system" and stored["depth"] == 0 and stored["kind"] == "lore"
    assert stored["exclude_recursion"] is True and stored["prevent_recursion"] is True
    assert stored["probability"] == 100 and stored["logic"] == "and_any"


def test_missing_entry_ids_are_filled_by_position(api):
    created = create(api, book("Ids", {"content": "a"}, {"content": "b", "id": "named"}))
    entries = api.get(f"/v1/books/{created['book_id']}").json()["head"]["book"]["entries"]
    assert [e["id"] for e in entries] == ["entry-0", "named"]


def test_list_is_scoped_and_newest_first(api):
    first = create(api, book("First"))
    second = create(api, book("Second"))
    listed = api.get("/v1/books")
    assert listed.status_code == 200
    ids = [b["book_id"] for b in listed.json()["books"]]
    assert ids == [second["book_id"], first["book_id"]]
    assert set(listed.json()["books"][0]) == {
        "book_id",
        "name",
        "description",
        "head_revision",
        "created_at",
        "updated_at",
    }
    # Publishing moves a book to the top (updated_at moves with the head).
    assert publish(api, first["book_id"], book("First v2"), 1).status_code == 201
    ids = [b["book_id"] for b in api.get("/v1/books").json()["books"]]
    assert ids == [first["book_id"], second["book_id"]]


def test_publish_moves_the_head_and_keeps_old_revisions(api):
    created = create(api, book("Lore", entry("a", "old text")))
    book_id = created["book_id"]
    res = publish(api, book_id, book("Lore v2", entry("a", "new text")), 1)
    assert res.status_code == 201
    assert res.json()["book_id"] == book_id and res.json()["revision"] == 2
    assert len(res.json()["content_hash"]) == 64

    revisions = api.get(f"/v1/books/{book_id}/revisions").json()
    assert revisions["head_revision"] == 2
    assert [r["revision"] for r in revisions["revisions"]] == [2, 1]
    assert revisions["revisions"][0]["content_hash"] == res.json()["content_hash"]
    old = api.get(f"/v1/books/{book_id}/revisions/1").json()
    new = api.get(f"/v1/books/{book_id}/revisions/2").json()
    assert old["book"]["entries"][0]["content"] == "old text"
    assert new["book"]["entries"][0]["content"] == "new text"
    assert api.get(f"/v1/books/{book_id}").json()["name"] == "Lore v2"


def test_publish_takes_the_documented_flat_body_only(api):
    """The seed's body is the book's fields beside ``expected_revision``; a ``{"book": ...}``
    wrapper is not documented, so it is refused like any unknown field."""
    book_id = create(api)["book_id"]
    res = api.post(
        f"/v1/books/{book_id}/revisions",
        {"book": book("Wrapped"), "expected_revision": 1},
        format="json",
    )
    assert res.status_code == 422
    assert "'book' is not allowed" in str(error(res)["details"]["errors"])
    assert BookRevision.objects.filter(book_id=book_id).count() == 1


def test_identical_content_hashes_equal(api):
    book_id = create(api, book("Same", entry("a", "x")))["book_id"]
    first = api.get(f"/v1/books/{book_id}/revisions/1").json()["content_hash"]
    # Explicit defaults hash like omitted fields.
    explicit = book("Same", entry("a", "x", enabled=True, priority=0, audience=["actor"]))
    assert publish(api, book_id, explicit, 1).json()["content_hash"] == first


def test_stale_publish_is_409_with_the_current_revision(api):
    book_id = create(api)["book_id"]
    assert publish(api, book_id, book("v2"), 1).status_code == 201
    assert publish(api, book_id, book("v3"), 2).status_code == 201
    before = counts()
    stale = publish(api, book_id, book("lost update"), 1)
    assert stale.status_code == 409
    err = error(stale)
    assert err["code"] == "revision_conflict"
    assert err["details"]["current_revision"] == 3 and err["details"]["expected_revision"] == 1
    assert stale.json()["current_revision"] == 3
    assert counts() == before
    assert Book.objects.get(pk=book_id).name == "v3"


@pytest.mark.parametrize("expected", [None, 0, -1, "1", True, 1.5])
def test_publish_needs_a_positive_integer_expected_revision(api, expected):
    book_id = create(api)["book_id"]
    payload = book("v2")
    if expected is not None:
        payload["expected_revision"] = expected
    res = api.post(f"/v1/books/{book_id}/revisions", payload, format="json")
    assert res.status_code == 422 and "expected_revision" in error(res)["message"]
    assert BookRevision.objects.filter(book_id=book_id).count() == 1


def test_missing_books_and_revisions_are_404(api):
    book_id = create(api)["book_id"]
    for path in (
        f"/v1/books/{MISSING}",
        "/v1/books/not-a-uuid",
        f"/v1/books/{MISSING}/revisions",
        f"/v1/books/{MISSING}/revisions/1",
        f"/v1/books/{book_id}/revisions/2",
        f"/v1/books/{book_id}/revisions/2/export",
        f"/v1/books/{MISSING}/index",
    ):
        res = api.get(path)
        assert res.status_code == 404, path
        assert error(res)["code"] == "not_found"
    res = publish(api, MISSING, book(), 1)
    assert res.status_code == 404 and error(res)["code"] == "not_found"


def test_idempotent_create_replays_and_conflicts(api):
    payload = book("Once")
    first = api.post("/v1/books", payload, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == 201 and first.json()["replayed"] is False
    before = counts()
    replay = api.post("/v1/books", payload, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert replay.status_code == 201
    assert replay.json() == {**first.json(), "replayed": True}
    other = api.post("/v1/books", book("Twice"), format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert other.status_code == 409 and error(other)["code"] == "idempotency_conflict"
    assert counts() == before
    # A new key is a new book; no key is always a new book.
    assert (
        api.post("/v1/books", payload, format="json", HTTP_IDEMPOTENCY_KEY="k-2").json()["books"][
            0
        ]["book_id"]
        != first.json()["books"][0]["book_id"]
    )
    assert Book.objects.filter(name="Once").count() == 2


def test_failed_create_does_not_burn_the_key(api):
    bad = api.post("/v1/books", book("x" * 301), format="json", HTTP_IDEMPOTENCY_KEY="k-bad")
    assert bad.status_code == 422
    good = api.post("/v1/books", book("ok"), format="json", HTTP_IDEMPOTENCY_KEY="k-bad")
    assert good.status_code == 201 and good.json()["replayed"] is False


def test_idempotency_keys_are_per_tenant(api, other_api):
    mine = api.post("/v1/books", book("A"), format="json", HTTP_IDEMPOTENCY_KEY="shared")
    theirs = other_api.post("/v1/books", book("B"), format="json", HTTP_IDEMPOTENCY_KEY="shared")
    assert mine.status_code == theirs.status_code == 201
    assert theirs.json()["replayed"] is False


def test_overlong_idempotency_key_is_rejected(api):
    res = api.post("/v1/books", book(), format="json", HTTP_IDEMPOTENCY_KEY="k" * 201)
    assert res.status_code == 400 and error(res)["code"] == "invalid_idempotency_key"
    assert Book.objects.count() == 0


def test_no_token_is_401_on_every_route(client):
    paths = [
        ("get", "/v1/books"),
        ("post", "/v1/books"),
        ("get", f"/v1/books/{MISSING}"),
        ("get", f"/v1/books/{MISSING}/revisions"),
        ("post", f"/v1/books/{MISSING}/revisions"),
        ("get", f"/v1/books/{MISSING}/revisions/1"),
        ("get", f"/v1/books/{MISSING}/revisions/1/export"),
        ("get", f"/v1/books/{MISSING}/index"),
        ("post", f"/v1/books/{MISSING}/index"),
        ("post", "/v1/imports"),
        ("post", "/v1/imports/preview"),
        ("post", "/v1/imports/files"),
        ("post", "/v1/context/select"),
        ("post", "/v1/search"),
        ("get", "/v1/prompt-bindings?prompt_id=p"),
        ("put", "/v1/prompt-bindings?prompt_id=p"),
        ("get", "/v1/prompt-bindings/resolve?prompt_id=p"),
    ]
    for method, path in paths:
        res = getattr(client, method)(path, {}, content_type="application/json")
        assert res.status_code == 401, (method, path)
        assert error(res)["code"] == "unauthenticated"
    bad = client.get("/v1/books", HTTP_AUTHORIZATION="Bearer not-a-token")
    assert bad.status_code == 401 and error(bad)["code"] == "unauthenticated"


def test_wrong_tenant_id_query_param_is_403(api, tenant, other_tenant):
    for path in ("/v1/books", "/v1/prompt-bindings?prompt_id=p"):
        sep = "&" if "?" in path else "?"
        res = api.get(f"{path}{sep}tenant_id={other_tenant.id}")
        assert res.status_code == 403 and error(res)["code"] == "tenant_mismatch"
    res = api.post(f"/v1/books?tenant_id={other_tenant.id}", book(), format="json")
    assert res.status_code == 403 and error(res)["code"] == "tenant_mismatch"
    assert Book.objects.count() == 0
    assert api.get(f"/v1/books?tenant_id={tenant.id}").status_code == 200


def test_play_scope_reads_and_selects_but_cannot_write(api_client_for, tenant, api):
    book_id = create(api)["book_id"]
    play = api_client_for(tenant, ["play"])
    assert play.get("/v1/books").status_code == 200
    assert play.get(f"/v1/books/{book_id}").status_code == 200
    body = {"books": [{"book_id": book_id}], "query": "lighthouse"}
    assert play.post("/v1/context/select", body, format="json").status_code == 200
    assert play.post("/v1/search", body, format="json").status_code == 200
    before = counts()
    for res in (
        play.post("/v1/books", book(), format="json"),
        play.post(f"/v1/books/{book_id}/revisions", {**book(), "expected_revision": 1}),
        play.post(f"/v1/books/{book_id}/index", {}, format="json"),
        play.post("/v1/imports", {"books": [book()]}, format="json"),
        play.put("/v1/prompt-bindings?prompt_id=p", {"bindings": []}, format="json"),
    ):
        assert res.status_code == 403 and error(res)["code"] == "forbidden"
    assert counts() == before


def test_content_scope_token_can_write(api_client_for, tenant):
    content = api_client_for(tenant, ["content"])
    assert content.post("/v1/books", book(), format="json").status_code == 201
