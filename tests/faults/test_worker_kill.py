"""A Celery worker killed with SIGKILL in the middle of a worldbook index build: the task
is handed to another worker (acks_late + the broker's visibility timeout), and the build
completes once, with every chunk stored exactly once."""

from __future__ import annotations

import time

import pytest

from tests.background.processes import route_task, start_worker
from tests.worldbook.api.wb_api_helpers import book, create, entry
from worldbook.models import BookIndex, IndexChunk

pytestmark = pytest.mark.django_db(transaction=True)

TASK = "worldbook.build_index"
VISIBILITY_S = 3
LONG = "".join(f"Harbour log line {i}: the tide rose and the fog bell rang. " for i in range(45))
HUGE = book("Harbour archive", *(entry(f"log-{n}", f"{n}. {LONG}") for n in range(2000)))


def wait(predicate, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def test_a_build_survives_its_worker_being_killed(api, tmp_path, settings):
    # What is tested is the hand-over, not the embeddings: the quick embedder keeps the
    # build short enough for a solo worker to answer the readiness ping after it.
    settings.WORLDBOOK_EMBEDDER = "hashing"
    env = {"CELERY_VISIBILITY_TIMEOUT": str(VISIBILITY_S), "WORLDBOOK_EMBEDDER": "hashing"}
    first = start_worker(tmp_path, env=env)
    route_task(TASK, first.queue)
    try:
        book_id = create(api, HUGE)["book_id"]
        started = api.post(f"/v1/books/{book_id}/index", {}, format="json")
        assert started.status_code == 202, started.content
        index = BookIndex.objects.get(book_id=book_id)

        def half_built():
            row = BookIndex.objects.get(pk=index.pk)
            return 0 < row.chunks_done < row.chunks_total

        wait(half_built, 60, "the build to be under way")
        first.process.kill()  # SIGKILL: no warm shutdown, the task is never acknowledged
        first.process.wait()
        killed_at = time.monotonic()
        assert BookIndex.objects.get(pk=index.pk).status == "building"

        time.sleep(max(VISIBILITY_S + 1 - (time.monotonic() - killed_at), 0))
        second = start_worker(tmp_path, queue=first.queue, env=env)
        try:
            done = wait(
                lambda: BookIndex.objects.filter(pk=index.pk, status="ready").first(),
                120,
                "the redelivered build to finish",
            )
        finally:
            second.stop()
    finally:
        route_task(TASK, None)
        first.stop()

    chunks = IndexChunk.objects.filter(index=done)
    keys = list(chunks.values_list("entry_id", "chunk_no"))
    assert len(keys) == len(set(keys)) == done.chunks_total == done.chunks_done
    assert {entry_id for entry_id, _ in keys} == {f"log-{n}" for n in range(2000)}
    assert BookIndex.objects.filter(book_id=book_id).count() == 1
