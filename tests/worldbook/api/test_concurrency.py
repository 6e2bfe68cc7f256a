"""Races through the real API and database: each thread has its own DB connection and the
rows are committed (``transactional_db``), so PostgreSQL's locking decides the winner."""

from __future__ import annotations

from collections import Counter

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.races import race
from tests.worldbook.api.wb_api_helpers import book, create, entry, st_entry, st_world
from worldbook.models import Book, BookIndex, BookRevision, FileImport

pytestmark = pytest.mark.django_db(transaction=True)

N = 8


@pytest.fixture
def clients(api_client_for, tenant):
    return [api_client_for(tenant) for _ in range(N)]


def test_concurrent_publishers_on_one_expected_revision(api, clients):
    book_id = create(api, book("race", entry("a", "v1")))["book_id"]

    def publish(client, i):
        payload = {**book(f"writer {i}", entry("a", f"written by {i}")), "expected_revision": 1}
        res = client.post(f"/v1/books/{book_id}/revisions", payload, format="json")
        return res.status_code, res.json()

    results = race(clients, publish)
    statuses = Counter(status for status, _ in results)
    assert statuses == {201: 1, 409: N - 1}
    for status, body in results:
        if status == 409:
            assert body["error"]["code"] == "revision_conflict"
            assert body["error"]["details"]["current_revision"] == 2
    winner = next(body for status, body in results if status == 201)
    assert winner["revision"] == 2
    assert sorted(
        BookRevision.objects.filter(book_id=book_id).values_list("revision", flat=True)
    ) == [1, 2]
    stored = Book.objects.get(pk=book_id)
    assert stored.head_revision == 2
    content = BookRevision.objects.get(book_id=book_id, revision=2).content
    assert stored.name == content["name"]  # the head and its revision moved together


def test_concurrent_index_requests_start_one_build(api, clients, monkeypatch):
    book_id = create(api, book("idx", entry("a", "lighthouse")))["book_id"]
    queued: list[int] = []
    # Keep the started build from being queued: no worker runs here, and a queued task would
    # outlive this test's database rows.
    monkeypatch.setattr("worldbook.tasks.build_index.delay", queued.append)

    def request_index(client, i):
        res = client.post(f"/v1/books/{book_id}/index", {}, format="json")
        return res.status_code, res.json()

    results = race(clients, request_index)
    statuses = Counter(status for status, _ in results)
    assert statuses == {202: 1, 409: N - 1}
    for status, body in results:
        if status == 409:
            assert body["error"]["code"] == "index_busy"
            assert body["error"]["details"] == {"book_id": book_id, "revision": 1}
    index = BookIndex.objects.get(book_id=book_id)
    assert index.status == "building" and index.attempts == 1
    assert queued == [index.id]


def test_concurrent_creates_with_one_idempotency_key(clients):
    def create_book(client, i):
        res = client.post("/v1/books", book("once"), format="json", HTTP_IDEMPOTENCY_KEY="race")
        return res.status_code, res.json()

    results = race(clients, create_book)
    assert {status for status, _ in results} == {201}
    assert Counter(body["replayed"] for _, body in results) == {False: 1, True: N - 1}
    assert len({body["books"][0]["book_id"] for _, body in results}) == 1
    assert Book.objects.count() == 1


def test_concurrent_imports_of_one_file(clients):
    data = st_world(st_entry(0, key=["gate"], content="The gate."))

    def upload(client, i):
        files = {"files": [SimpleUploadedFile(f"w{i}.json", data)]}
        res = client.post("/v1/imports/files", files, format="multipart")
        return res.status_code, res.json()

    results = race(clients, upload)
    created = [body for status, body in results if status == 201]
    assert created, results
    for status, body in results:
        assert status in (201, 409), body
        if status == 409:
            assert body["error"]["code"] == "import_in_progress"
    assert sum(not body["books"][0]["deduplicated"] for body in created) == 1
    assert Book.objects.count() == 1 and FileImport.objects.count() == 1
