"""Vector index builds per exact revision: start (CAS on the index row), run, report progress.

A build is requested through the API and runs in Celery. The index row is the lock: a build
already running for the same revision and embedding version answers 409 ``index_busy``; a
ready index with the same embedding version is reused unless ``force``; a failed build is
recorded as ``failed`` and can be retried.
"""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import transaction
from django.utils import timezone

from console.embedding import choose
from console.embedding.protocol import Embedder
from worldbook import errors
from worldbook.contracts import IndexState
from worldbook.engine.chunking import chunk_text
from worldbook.models import EMBEDDING_DIMENSIONS, BookIndex, BookRevision, IndexChunk, IndexStatus

BATCH = 64
# A build that has not progressed for this long is presumed dead (its worker crashed).
STALE_AFTER = timedelta(minutes=10)

_choices: dict[str, str | dict] = {}


def default_embedder() -> Embedder:
    """The deployment's worldbook embedder, ``WORLDBOOK_EMBEDDER``: the same sentence model
    memory's recall runs (``minilm`` or ``e5``; unset, the kernel's default; the hashing
    embedder when no model is installed), ``hashing``, or an OpenAI-compatible endpoint given
    as the JSON of its settings (``console.embedding.choose``). The index holds vectors of
    384 dimensions, so an endpoint is asked for that many."""
    return choose.embedder_for(_choice(getattr(settings, "WORLDBOOK_EMBEDDER", None)))


def embedding_version() -> str:
    """The version of :func:`default_embedder`'s vectors, known without loading a model:
    every turn of a character asks it, to find its books' ready indexes."""
    return choose.version_for(_choice(getattr(settings, "WORLDBOOK_EMBEDDER", None)))


def _choice(raw) -> str | dict:
    key = raw if isinstance(raw, str) or raw is None else repr(sorted(raw.items()))
    found = _choices.get(key)
    if found is None:
        try:
            found = choose.parse_choice(raw)
        except ValueError as exc:
            raise ImproperlyConfigured(f"WORLDBOOK_EMBEDDER: {exc}") from None
        if isinstance(found, dict):
            if found.get("dimensions") not in (None, EMBEDDING_DIMENSIONS):
                raise ImproperlyConfigured(
                    f"WORLDBOOK_EMBEDDER: dimensions must be {EMBEDDING_DIMENSIONS}, the index's"
                )
            found = {**found, "dimensions": EMBEDDING_DIMENSIONS}
        _choices[key] = found
    return found


def index_state(book_id, revision: int, index: BookIndex | None, embedder=None) -> IndexState:
    """The documented state of one revision's index (``missing`` when there is none)."""
    if index is None:
        return IndexState(
            book_id=str(book_id),
            revision=revision,
            status="missing",
            embedding_version=embedder.embedding_version if embedder else embedding_version(),
            chunks_total=0,
            chunks_done=0,
            chunk_count=0,
            error=None,
            attempts=0,
            started_at=None,
            finished_at=None,
        )
    return IndexState(
        book_id=str(index.book_id),
        revision=index.revision,
        status=index.status,
        embedding_version=index.embedding_version,
        chunks_total=index.chunks_total,
        chunks_done=index.chunks_done,
        chunk_count=index.chunks_done,
        error=index.error or None,
        attempts=index.attempts,
        started_at=index.started_at,
        finished_at=index.finished_at,
    )


def request_build(tenant, book, revision: int, *, force: bool = False, embedder=None):
    """(index, started): marks the index building, or returns the reusable ready one."""
    version = embedder.embedding_version if embedder else embedding_version()
    with transaction.atomic():
        index, _ = BookIndex.objects.select_for_update().get_or_create(
            tenant=tenant,
            book=book,
            revision=revision,
            embedding_version=version,
            defaults={"status": IndexStatus.PENDING},
        )
        now = timezone.now()
        if index.status in (IndexStatus.BUILDING, IndexStatus.PENDING) and index.attempts:
            fresh = index.started_at and now - index.started_at < STALE_AFTER
            if fresh:
                raise errors.IndexBusy(
                    message=f"revision {revision} is already being indexed",
                    details={"book_id": str(book.id), "revision": revision},
                )
        if index.status == IndexStatus.READY and not force:
            return index, False
        index.status = IndexStatus.BUILDING
        index.attempts += 1
        index.started_at = now
        index.finished_at = None
        index.error = ""
        index.chunks_done = 0
        index.chunks_total = 0
        index.save()
    return index, True


def run_build(index_id: int, *, embedder=None) -> BookIndex:
    """Chunk, embed and store one revision; idempotent (it starts from a clean slate)."""
    embedder = embedder or default_embedder()
    index = BookIndex.objects.get(pk=index_id)
    if embedder.embedding_version != index.embedding_version:  # a model that did not load
        mark_failed(index.pk, f"the embedder is {embedder.embedding_version}, not the index's")
        index.refresh_from_db()
        return index
    try:
        content = BookRevision.objects.values_list("content", flat=True).get(
            book_id=index.book_id, revision=index.revision
        )
        pieces = []
        for entry in content.get("entries", []):
            text = "\n".join(part for part in (entry.get("title"), entry.get("content")) if part)
            for chunk in chunk_text(text):
                pieces.append((entry["id"], chunk))
        IndexChunk.objects.filter(index=index).delete()
        BookIndex.objects.filter(pk=index.pk).update(chunks_total=len(pieces), chunks_done=0)
        for start in range(0, len(pieces), BATCH):
            batch = pieces[start : start + BATCH]
            vectors = embedder.embed([chunk.text for _, chunk in batch])
            IndexChunk.objects.bulk_create(
                IndexChunk(
                    index=index,
                    entry_id=entry_id,
                    chunk_no=chunk.index,
                    start=chunk.start,
                    end=chunk.end,
                    text=chunk.text,
                    embedding=vector,
                )
                for (entry_id, chunk), vector in zip(batch, vectors, strict=True)
            )
            BookIndex.objects.filter(pk=index.pk).update(
                chunks_done=start + len(batch), started_at=timezone.now()
            )
        BookIndex.objects.filter(pk=index.pk).update(
            status=IndexStatus.READY, finished_at=timezone.now()
        )
    except Exception as exc:
        mark_failed(index.pk, f"{type(exc).__name__}: {exc}")
        raise
    index.refresh_from_db()
    return index


def mark_failed(index_id: int, error: str) -> None:
    """Record a build that will not finish, so it can be requested again at once."""
    BookIndex.objects.filter(pk=index_id).update(
        status=IndexStatus.FAILED, error=error[:2000], finished_at=timezone.now()
    )


def ready_index(tenant, book_id: str, revision: int, embedder=None) -> BookIndex | None:
    return BookIndex.objects.filter(
        tenant=tenant,
        book_id=book_id,
        revision=revision,
        embedding_version=embedder.embedding_version if embedder else embedding_version(),
        status=IndexStatus.READY,
    ).first()
