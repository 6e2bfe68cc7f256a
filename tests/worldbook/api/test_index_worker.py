"""Vector index builds requested through the API and executed by a real Celery worker.

Covers the seed's index lifecycle: ``POST /v1/books/{id}/index`` answers 202 and queues the
build, the worker chunks (1,200 chars every 1,000) and embeds, progress is readable from
``GET``; afterwards ``vector``/``hybrid`` search work and hybrid selection is not degraded; a
failed build is recorded ``failed`` and can be retried; a ready index is reused.
"""

from __future__ import annotations

import time

import pytest

from console.embedding import minilm
from tests.worldbook.api.wb_api_helpers import book, create, entry, error, select_body
from worldbook.engine.chunking import chunk_text
from worldbook.models import BookRevision

pytestmark = pytest.mark.django_db(transaction=True)

BUILD_TIMEOUT = 60  # seconds; guards against a hang, asserts nothing about speed

LONG = "".join(f"Harbour log line {i}: the tide rose and the fog bell rang. " for i in range(45))
LIBRARY = book(
    "Harbour library",
    entry("lighthouse", "The lighthouse keeper climbs 212 steps at dusk.", keys=["lighthouse"]),
    entry("tides", LONG, title="Tide tables"),
    entry("copper", "铜钥匙只能开启灰港城门的侧门。", title="铜钥匙", keys=["铜钥匙"]),
)


def wait_for_build(api, book_id: str, revision: int) -> dict:
    deadline = time.monotonic() + BUILD_TIMEOUT
    while True:
        res = api.get(f"/v1/books/{book_id}/index?revision={revision}")
        assert res.status_code == 200, res.content
        body = res.json()
        if body["status"] in ("ready", "failed"):
            return body
        assert time.monotonic() < deadline, f"index build did not finish: {body}"
        time.sleep(0.2)


def expected_chunks(payload: dict) -> int:
    return sum(
        len(chunk_text("\n".join(p for p in (e.get("title"), e["content"]) if p)))
        for e in payload["entries"]
    )


def test_build_through_worker_then_vector_and_hybrid(api, wb_celery_worker):
    created = create(api, LIBRARY)
    book_id = created["book_id"]
    missing = api.get(f"/v1/books/{book_id}/index").json()
    assert (missing["status"], missing["revision"], missing["chunks_total"]) == ("missing", 1, 0)

    started = api.post(f"/v1/books/{book_id}/index", {}, format="json")
    assert started.status_code == 202, started.content
    assert started.json()["reused"] is False
    assert started.json()["status"] == "building" and started.json()["revision"] == 1

    done = wait_for_build(api, book_id, 1)
    assert done["status"] == "ready", done
    total = expected_chunks(LIBRARY)
    assert total == 5  # 1 + 3 (2,7xx chars: windows at 0, 1000, 2000) + 1
    assert done["chunks_total"] == total and done["chunks_done"] == total
    # The worker embeds with the sentence model memory's recall runs.
    assert done["embedding_version"] == minilm.EMBEDDING_VERSION
    assert done["error"] is None and done["attempts"] == 1 and done["finished_at"]

    vector = api.post(
        "/v1/search",
        {"query": "lighthouse keeper steps", "books": [{"book_id": book_id}], "mode": "vector"},
        format="json",
    )
    assert vector.status_code == 200, vector.content
    hits = vector.json()["results"]
    assert hits[0]["entry_id"] == "lighthouse" and 0 < hits[0]["score"] <= 1
    assert vector.json()["degraded"] == []

    hybrid = api.post(
        "/v1/search",
        {"query": "铜钥匙", "books": [{"book_id": book_id}], "mode": "hybrid"},
        format="json",
    )
    assert hybrid.status_code == 200 and hybrid.json()["degraded"] == []
    assert hybrid.json()["results"][0]["entry_id"] == "copper"
    assert all(len(hit["excerpt"]) <= 600 for hit in hybrid.json()["results"])

    selected = api.post(
        "/v1/context/select",
        select_body(book_id, "tell me about the lighthouse", strategy="hybrid"),
        format="json",
    )
    assert selected.status_code == 200, selected.content
    assert selected.json()["degraded"] == []
    assert "lighthouse" in {b["entry_id"] for b in selected.json()["blocks"]}

    again = api.post(f"/v1/books/{book_id}/index", {"revision": 1}, format="json")
    assert again.status_code == 200 and again.json()["reused"] is True
    assert again.json()["status"] == "ready" and again.json()["attempts"] == 1


def test_new_revision_needs_its_own_index(api, wb_celery_worker):
    book_id = create(api, LIBRARY)["book_id"]
    assert api.post(f"/v1/books/{book_id}/index", {}, format="json").status_code == 202
    assert wait_for_build(api, book_id, 1)["status"] == "ready"
    res = api.post(
        f"/v1/books/{book_id}/revisions", {**LIBRARY, "expected_revision": 1}, format="json"
    )
    assert res.status_code == 201
    body = {"query": "lighthouse", "books": [{"book_id": book_id}], "mode": "vector"}
    stale = api.post("/v1/search", body, format="json")
    assert stale.status_code == 409 and error(stale)["code"] == "index_not_ready"
    assert error(stale)["details"] == {"book_id": book_id, "revision": 2}
    pinned = {**body, "books": [{"book_id": book_id, "revision": 1}]}
    assert api.post("/v1/search", pinned, format="json").status_code == 200
    assert api.get(f"/v1/books/{book_id}/index").json()["status"] == "missing"


def test_failed_build_is_recorded_and_retryable(api, wb_celery_worker):
    book_id = create(api, LIBRARY)["book_id"]
    row = BookRevision.objects.get(book_id=book_id, revision=1)
    good = row.content
    # Damage the stored revision (an entry without an id) so the worker's build raises.
    BookRevision.objects.filter(pk=row.pk).update(content={"entries": [{"content": "x"}]})

    assert api.post(f"/v1/books/{book_id}/index", {}, format="json").status_code == 202
    failed = wait_for_build(api, book_id, 1)
    assert failed["status"] == "failed"
    assert failed["error"].startswith("KeyError") and failed["attempts"] == 1

    BookRevision.objects.filter(pk=row.pk).update(content=good)
    vector = api.post(
        "/v1/search",
        {"query": "lighthouse", "books": [{"book_id": book_id}], "mode": "vector"},
        format="json",
    )
    assert vector.status_code == 409 and error(vector)["code"] == "index_not_ready"

    retry = api.post(f"/v1/books/{book_id}/index", {}, format="json")
    assert retry.status_code == 202 and retry.json()["attempts"] == 2
    assert retry.json()["error"] is None
    done = wait_for_build(api, book_id, 1)
    assert done["status"] == "ready" and done["attempts"] == 2
    assert done["chunks_done"] == done["chunks_total"] == expected_chunks(LIBRARY)
