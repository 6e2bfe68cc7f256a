"""Background worldbook work (thin wrappers around services), and queueing it."""

from __future__ import annotations

import logging

from celery import shared_task
from django.db import transaction
from kombu.exceptions import OperationalError
from redis.exceptions import RedisError

from worldbook import compiled, errors, indexing

log = logging.getLogger(__name__)


@shared_task(acks_late=True, name="worldbook.build_index")
def build_index(index_id: int) -> dict:
    index = indexing.run_build(index_id)
    return {"status": index.status, "chunks": index.chunks_done}


def queue_build(index_id: int) -> None:
    """Queue ``build_index`` once the transaction that marked the index ``building`` has
    committed (the worker must not read a stale row).

    A broker that cannot take the task marks the build failed, so it can be requested again
    at once instead of waiting to be presumed dead, and is a 503 ``broker_unavailable``
    rather than a 500. (Celery reports a result store it cannot reach as a RuntimeError.)
    """

    def send() -> None:
        try:
            build_index.delay(index_id)
        except (OperationalError, RedisError, RuntimeError) as exc:
            indexing.mark_failed(index_id, f"could not queue the build: {exc}")
            raise errors.Unavailable(
                "broker_unavailable", "the task queue cannot take the build now; retry later"
            ) from exc

    transaction.on_commit(send)


@shared_task(acks_late=True, name="worldbook.warm_revisions")
def warm_revisions(refs: list[list]) -> dict:
    """Prepare revisions for every process of this machine (``worldbook.compiled``)."""
    return {
        f"{book_id}:{revision}": compiled.warm(book_id, revision, h)
        for book_id, revision, h in refs
    }
