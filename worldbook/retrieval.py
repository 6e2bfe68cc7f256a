"""Per-turn selection and search over stored books: wires the pure engine to the database.

Selection loads the exact revisions (parsed once per process), adds hybrid recall scores
(lexical BM25 blended with pgvector cosine when the revision's index is ready, lexical only
with a ``degraded`` note otherwise) and keeps timed-effect state per conversation by
compare-and-set on its version (the row lock only after repeated lost races), so two turns
of one conversation never lose each other's sticky/cooldown updates.
"""

from __future__ import annotations

import json

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from pgvector.django import CosineDistance

from console.embedding.openai_embedder import EmbeddingUnavailable
from console.search.lexical import index_for, query_terms
from worldbook import errors, indexing
from worldbook.engine.gc_pause import paused_gc
from worldbook.engine.prepared import lexical_docs
from worldbook.engine.schema import SelectRequest
from worldbook.engine.selection import LoadedBook, SelectionResult, select
from worldbook.engine.tokens import Tokenizer
from worldbook.models import IndexChunk, TimedEffectState
from worldbook.selectors import BoundRevision, canonical_book_id, requested_revisions
from worldbook.tokenizer import CL100K

LEXICAL_WEIGHT = 0.5
VECTOR_WEIGHT = 0.5
RECALL_K = 50


def _lexical(book: LoadedBook):
    if book.lexical is not None:  # prepared with the revision
        return book.lexical
    return index_for(
        lambda: lexical_docs(book.entries), content_hash=f"{book.book_id}:{book.content_hash}"
    )


def lexical_scores(
    book: LoadedBook, query: str | set[str], limit: int = RECALL_K
) -> dict[str, float]:
    """Normalised BM25 scores of the book's best entries for ``query`` (a text or its terms)."""
    ranked = _lexical(book).rank(query, limit)
    if not ranked:
        return {}
    top = ranked[0][1] or 1.0
    return {key: score / top for key, score in ranked}


def vector_scores(
    index_id: int, query_vector, limit: int = RECALL_K
) -> dict[str, tuple[float, str]]:
    rows = (
        IndexChunk.objects.filter(index_id=index_id)
        .annotate(distance=CosineDistance("embedding", query_vector))
        .order_by("distance")
        .values_list("entry_id", "distance", "text")[:limit]
    )
    best: dict[str, tuple[float, str]] = {}
    for entry_id, distance, text in rows:
        similarity = max(0.0, 1.0 - float(distance))
        if entry_id not in best or similarity > best[entry_id][0]:
            best[entry_id] = (similarity, text)
    return best


def blend(lexical: float, vector: float) -> float:
    """The hybrid score of an entry from its normalised lexical score and vector similarity."""
    return LEXICAL_WEIGHT * lexical + VECTOR_WEIGHT * vector


def _index_not_ready(book: LoadedBook, message: str) -> dict:
    return {
        "code": "vector_index_not_ready",
        "book_id": book.book_id,
        "revision": book.revision,
        "message": message,
    }


class _QueryVector:
    """The query's vector, embedded once for every book; None (and one ``degraded`` note)
    when the embedder cannot serve: an endpoint that failed costs the vector side, never
    the request."""

    def __init__(self, query: str) -> None:
        self.query = query
        self.failure: EmbeddingUnavailable | None = None
        self._vector: list[float] | None = None

    def get(self) -> list[float] | None:
        if self._vector is None and self.failure is None:
            try:
                self._vector = indexing.default_embedder().embed_query([self.query])[0]
            except EmbeddingUnavailable as exc:
                self.failure = exc
        return self._vector

    def note(self) -> dict:
        code = self.failure.code if self.failure is not None else "unknown"
        return {"code": "vector_unavailable", "message": f"the embedder failed ({code})"}


def hybrid_scores(books: list[LoadedBook], query: str, index_ids: dict):
    """(scores keyed by (book_id, entry_id), degraded notes); ``index_ids`` is each book's
    ready vector index (book id -> index id, or None)."""
    scores: dict[tuple[str, str], float] = {}
    degraded: list[dict] = []
    query_vector = _QueryVector(query)
    terms = set(query_terms(query))  # once, not once per book
    for book in books:
        lexical = lexical_scores(book, terms)
        index_id = index_ids.get(book.book_id)
        vector_of_query = query_vector.get() if index_id is not None else None
        if vector_of_query is None:
            if index_id is None:
                note = "no ready vector index for this exact revision; lexical only"
                degraded.append(_index_not_ready(book, note))
            for entry_id, value in lexical.items():
                scores[(book.book_id, entry_id)] = value
            continue
        vector = vector_scores(index_id, vector_of_query)
        for entry_id in set(lexical) | set(vector):
            scores[(book.book_id, entry_id)] = blend(
                lexical.get(entry_id, 0.0), vector.get(entry_id, (0.0, ""))[0]
            )
    if query_vector.failure is not None:
        degraded.append(query_vector.note())
    return scores, degraded


def _canonical_refs(request: SelectRequest) -> SelectRequest:
    """The request with book ids spelled as stored, so the engine matches them to the loaded
    books (an upper-case UUID names the same book); one book listed twice is a 422."""
    refs = [
        ref.model_copy(update={"book_id": canonical_book_id(ref.book_id)}) for ref in request.books
    ]
    seen: set[str] = set()
    for ref in refs:
        if ref.book_id in seen:
            raise errors.invalid(f"book {ref.book_id} is listed twice", book_id=ref.book_id)
        seen.add(ref.book_id)
    return request.model_copy(update={"books": refs})


def select_context(tenant, request: SelectRequest, *, record: bool = True) -> dict:
    """The selection response of the seed, plus timed-effect state kept per conversation.

    ``record=False`` (a read-only caller) selects against the stored timed-effect state
    without advancing it: a viewer may look, not change what the next turn sees.

    The selection's working objects die before the collector runs again, so it never has to
    walk them (see engine.gc_pause)."""
    with paused_gc():
        return select_result(tenant, request, record=record).response()


def replay(
    tenant, recorded: dict, *, decisions: str = "all", tokenizer: Tokenizer = CL100K
) -> SelectionResult:
    """The selection a turn made, made again from what its trace recorded (``recording``):
    the same request over the same exact revisions, from the same timed-effect state,
    without recording anything. Selection is deterministic for a seed, so its decisions are
    the ones the turn's selection had; the caller compares ``selection_fingerprint``."""
    request = SelectRequest.model_validate({**recorded["request"], "decisions": decisions})
    request, books, options = _inputs(tenant, request, None, tokenizer)
    return select(request, books, timed_state=recorded.get("timed_state") or {}, **options)


def recording(request: SelectRequest, result: SelectionResult) -> dict:
    """What a turn's trace keeps to :func:`replay` its selection: the request (exact
    revisions, no decisions asked for) and the timed-effect state it started from."""
    return {
        "request": request.model_dump(mode="json", exclude_defaults=True, exclude={"decisions"}),
        "timed_state": result.timed_input,
    }


# Compare-and-set tries of the timed-effect state before a selection waits for its lock.
CAS_ATTEMPTS = 3


def select_result(
    tenant,
    request: SelectRequest,
    *,
    record: bool = True,
    bound: list[BoundRevision] | None = None,
    tokenizer: Tokenizer = CL100K,
) -> SelectionResult:
    """The selection itself (:func:`select_context`'s, before it is rendered as the response):
    a chat turn reads its blocks and only the decisions worth tracing. A turn passes the
    ``bound`` revisions it resolved (``request.books`` are their refs), so nothing about the
    books is read again, and the ``tokenizer`` its model config counts with (the budget is
    in its tokens; the seed's cl100k otherwise)."""
    request, books, options = _inputs(tenant, request, bound, tokenizer)
    timed = request.conversation_id is not None and request.message_index is not None
    # A SelectionError (a required entry that cannot be honoured) is a 422 of its own.
    if not timed:
        return select(request, books, **options)
    if not record:
        _, state = timed_state(tenant, request.conversation_id)
        return select(request, books, timed_state=state, **options)
    for _ in range(CAS_ATTEMPTS):
        result = _select_and_set(tenant, request, books, options)
        if result is not None:
            return result
    with transaction.atomic():  # still contended: wait for the row's lock instead
        row, _ = TimedEffectState.objects.select_for_update().get_or_create(
            tenant=tenant, conversation_id=request.conversation_id
        )
        result = select(request, books, timed_state=row.state, **options)
        if result.timed_state != row.state:
            row.state = result.timed_state
            row.version += 1
            row.save(update_fields=["state", "version", "updated_at"])
        return result


def _inputs(
    tenant, request: SelectRequest, bound: list[BoundRevision] | None, tokenizer: Tokenizer
):
    """(request, its books, the engine's options): the exact revisions loaded (``bound``:
    already resolved by the caller) and, for hybrid selection, their recall scores."""
    if bound is None:
        request = _canonical_refs(request)
        refs = [(ref.book_id, ref.revision) for ref in request.books]
        version = indexing.embedding_version()
        bound = requested_revisions(tenant, refs, version)
    books = [b.load() for b in bound]
    scores, degraded = (None, [])
    if request.strategy == "hybrid":
        index_ids = {b.book_id: b.index_id for b in bound}
        scores, degraded = hybrid_scores(books, request.query, index_ids)
    return request, books, {"hybrid_scores": scores, "degraded": degraded, "tokenizer": tokenizer}


# Read by every turn of a character with books; pinned to the ORM read by
# tests/fastpaths/test_worldbook_reads.py.
_TIMED_SQL = f"""
    SELECT version, state FROM {TimedEffectState._meta.db_table}
    WHERE tenant_id = %s AND conversation_id = %s
"""


def timed_state(tenant, conversation_id: str) -> tuple[int | None, dict]:
    """(version, state) of the conversation's timed effects; (None, {}) before the first."""
    with connection.cursor() as cursor:
        cursor.execute(_TIMED_SQL, [tenant.pk, conversation_id])
        row = cursor.fetchone()
    if row is None:
        return None, {}
    version, state = row
    return version, json.loads(state) if isinstance(state, str) else state


def _select_and_set(tenant, request, books, options) -> SelectionResult | None:
    """Select against the conversation's timed-effect state and record what it became by
    compare-and-set on ``version``: one read, and a write only when the state changed (most
    turns change nothing). None when another writer got there first."""
    key = {"tenant": tenant, "conversation_id": request.conversation_id}
    version, state = timed_state(tenant, request.conversation_id)
    result = select(request, books, timed_state=state, **options)
    if result.timed_state == state:
        return result
    if version is None:
        try:
            with transaction.atomic():
                TimedEffectState.objects.create(**key, state=result.timed_state, version=1)
        except IntegrityError:
            return None
        return result
    changed = TimedEffectState.objects.filter(**key, version=version).update(
        state=result.timed_state, version=version + 1, updated_at=timezone.now()
    )
    return result if changed else None


def search(tenant, *, query: str, refs, mode: str, limit: int) -> dict:
    """Ranked entries of the given exact revisions (``mode``: lexical, vector or hybrid)."""
    refs = [(canonical_book_id(book_id), revision) for book_id, revision in refs]
    if len({book_id for book_id, _ in refs}) != len(refs):
        raise errors.invalid("a book is listed twice")
    found = requested_revisions(tenant, refs, indexing.embedding_version())
    results = []
    degraded: list[dict] = []
    query_vector = _QueryVector(query)
    for revision in found:
        book = revision.load()
        titles = {e.id: e.title for e in book.entries}
        lexical_hits = (
            {h.key: h for h in _lexical(book).search(query, limit)} if mode != "vector" else {}
        )
        vector = {}
        if mode in ("vector", "hybrid"):
            if revision.index_id is None:
                if mode == "vector":
                    raise errors.Conflict(
                        "index_not_ready",
                        f"book {book.book_id} revision {book.revision} has no ready vector index",
                        {"book_id": book.book_id, "revision": book.revision},
                    )
                degraded.append(_index_not_ready(book, "hybrid search fell back to lexical"))
            elif (vector_of_query := query_vector.get()) is not None:
                vector = vector_scores(revision.index_id, vector_of_query, limit)
            elif mode == "vector":
                raise errors.Unavailable(
                    "vector_unavailable",
                    query_vector.note()["message"],
                    {"book_id": book.book_id, "revision": book.revision},
                )
        top = max((h.score for h in lexical_hits.values()), default=0.0) or 1.0
        for entry_id in set(lexical_hits) | set(vector):
            lex = lexical_hits.get(entry_id)
            vec = vector.get(entry_id)
            if mode == "lexical" or (mode == "hybrid" and not vector):
                score = lex.score if mode == "lexical" else lex.score / top
            elif mode == "vector":
                score = vec[0]
            else:
                score = blend(lex.score / top if lex else 0.0, vec[0] if vec else 0.0)
            # Every id here came from one of the two hit sets.
            excerpt = lex.excerpt if lex else vec[1]
            results.append(
                {
                    "book_id": book.book_id,
                    "revision": book.revision,
                    "entry_id": entry_id,
                    "title": titles.get(entry_id, ""),
                    "score": round(score, 6),
                    "excerpt": excerpt[:600],
                }
            )
    if query_vector.failure is not None:
        degraded.append(query_vector.note())
    results.sort(key=lambda r: (-r["score"], r["book_id"], r["entry_id"]))
    return {"query": query, "mode": mode, "results": results[:limit], "degraded": degraded}
