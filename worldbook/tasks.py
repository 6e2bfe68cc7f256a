"""Background worldbook work (thin wrappers around services)."""

from __future__ import annotations

from celery import shared_task

from worldbook import indexing


@shared_task(acks_late=True, name="worldbook.build_index")
def build_index(index_id: int) -> dict:
    index = indexing.run_build(index_id)
    return {"status": index.status, "chunks": index.chunks_done}
