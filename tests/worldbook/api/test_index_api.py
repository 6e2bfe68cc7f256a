"""The index routes' state machine without a worker: request, busy, reuse, force, stale and
failed builds. (The worker-executed build is in ``test_index_worker.py``.)

These tests run inside one transaction, so the view's ``on_commit`` dispatch never fires;
builds are run in-process with :func:`worldbook.indexing.run_build` where a test needs one.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.worldbook.api.wb_api_helpers import book, counts, create, entry, error, publish
from worldbook import indexing
from worldbook.models import BookIndex

pytestmark = pytest.mark.django_db

LORE = book("Lore", entry("a", "The lighthouse keeper."), entry("b", "The harbour fog."))


def request_index(api, book_id, body=None):
    return api.post(f"/v1/books/{book_id}/index", body or {}, format="json")


def test_request_then_busy(api):
    book_id = create(api, LORE)["book_id"]
    res = request_index(api, book_id)
    assert res.status_code == 202
    body = res.json()
    assert body["status"] == "building" and body["revision"] == 1 and body["attempts"] == 1
    assert body["reused"] is False and body["chunks_done"] == 0
    busy = request_index(api, book_id, {"revision": 1})
    assert busy.status_code == 409 and error(busy)["code"] == "index_busy"
    assert error(busy)["details"] == {"book_id": book_id, "revision": 1}
    status = api.get(f"/v1/books/{book_id}/index?revision=1").json()
    assert status["status"] == "building"


def test_ready_index_is_reused_unless_forced(api):
    book_id = create(api, LORE)["book_id"]
    started = request_index(api, book_id).json()
    row = BookIndex.objects.get(book_id=book_id)
    indexing.run_build(row.pk)
    ready = api.get(f"/v1/books/{book_id}/index").json()
    assert ready["status"] == "ready" and ready["chunks_done"] == ready["chunks_total"] == 2
    assert ready["attempts"] == started["attempts"] == 1

    reused = request_index(api, book_id)
    assert reused.status_code == 200 and reused.json()["reused"] is True
    forced = request_index(api, book_id, {"force": True})
    assert forced.status_code == 202 and forced.json()["attempts"] == 2
    assert forced.json()["status"] == "building" and forced.json()["chunks_done"] == 0
    assert BookIndex.objects.filter(book_id=book_id).count() == 1


def test_each_revision_has_its_own_index(api):
    book_id = create(api, LORE)["book_id"]
    assert publish(api, book_id, LORE, 1).status_code == 201
    assert request_index(api, book_id, {"revision": 1}).status_code == 202
    assert request_index(api, book_id).status_code == 202  # head = 2, not busy
    assert sorted(BookIndex.objects.values_list("revision", flat=True)) == [1, 2]
    assert api.get(f"/v1/books/{book_id}/index?revision=2").json()["revision"] == 2


def test_a_stale_build_can_be_restarted(api):
    book_id = create(api, LORE)["book_id"]
    request_index(api, book_id)
    # The worker died: no progress for longer than STALE_AFTER.
    long_ago = timezone.now() - indexing.STALE_AFTER - timedelta(seconds=1)
    BookIndex.objects.filter(book_id=book_id).update(started_at=long_ago)
    res = request_index(api, book_id)
    assert res.status_code == 202 and res.json()["attempts"] == 2


class BrokenEmbedder:
    embedding_version = indexing.default_embedder().embedding_version

    def embed(self, texts):
        raise RuntimeError("embedding service unavailable")


def test_a_failed_build_is_recorded_and_retryable(api):
    book_id = create(api, LORE)["book_id"]
    request_index(api, book_id)
    row = BookIndex.objects.get(book_id=book_id)
    with pytest.raises(RuntimeError):
        indexing.run_build(row.pk, embedder=BrokenEmbedder())
    failed = api.get(f"/v1/books/{book_id}/index").json()
    assert failed["status"] == "failed"
    assert failed["error"] == "RuntimeError: embedding service unavailable"
    assert failed["finished_at"] is not None
    retry = request_index(api, book_id)
    assert retry.status_code == 202 and retry.json()["attempts"] == 2
    indexing.run_build(row.pk)
    assert api.get(f"/v1/books/{book_id}/index").json()["status"] == "ready"


@pytest.mark.parametrize(
    "body",
    [{"revision": "1"}, {"revision": True}, {"force": "yes"}, {"rebuild": True}],
)
def test_bad_index_requests_are_422(api, body):
    book_id = create(api, LORE)["book_id"]
    before = counts()
    res = request_index(api, book_id, body)
    assert res.status_code == 422 and error(res)["code"] == "validation_error"
    assert counts() == before


def test_index_of_a_missing_revision_is_404(api):
    book_id = create(api, LORE)["book_id"]
    res = request_index(api, book_id, {"revision": 2})
    assert res.status_code == 404 and error(res)["code"] == "not_found"
    assert api.get(f"/v1/books/{book_id}/index?revision=2").status_code == 404
    bad = api.get(f"/v1/books/{book_id}/index?revision=two")
    assert bad.status_code == 422 and "revision" in error(bad)["message"]
    assert not BookIndex.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_queue_that_cannot_take_the_build_is_a_503_and_the_build_can_be_retried(api, monkeypatch):
    """The broker is unreachable (a task queue outage): no 500, and no build left
    ``building`` until it is presumed dead."""
    from kombu.exceptions import OperationalError

    from worldbook import tasks

    def refuse(*args, **kwargs):
        raise OperationalError("broker down")

    book_id = create(api, LORE)["book_id"]
    with monkeypatch.context() as patch:
        patch.setattr(tasks.build_index, "delay", refuse)
        res = request_index(api, book_id)
    assert res.status_code == 503 and error(res)["code"] == "broker_unavailable"
    index = BookIndex.objects.get(book_id=book_id)
    assert index.status == "failed" and "could not queue" in index.error
    sent = []
    monkeypatch.setattr(tasks.build_index, "delay", lambda index_id: sent.append(index_id))
    again = request_index(api, book_id)
    assert again.status_code == 202 and sent == [index.pk]
