"""The worldbook's turn-path SQL reads equal the ORM reads they replace, and the vectorised
BM25 ranking equals a plain reference ranking.

``bound_revisions`` is pinned to ``resolve_bindings`` + ``revision_hash`` + ``ready_index``,
``requested_revisions`` to the book row + ``revision_hash`` + ``ready_index``;
``timed_state`` to the ORM row; ``LexicalIndex.rank``/``search`` to a dictionary BM25 sum with
ties in document order.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from console.search.lexical import Doc, LexicalIndex, query_terms
from worldbook import errors, indexing, retrieval, services
from worldbook.engine.schema import BookIn
from worldbook.models import Book, BookIndex, IndexStatus, PromptBinding, TimedEffectState
from worldbook.selectors import (
    bound_revisions,
    requested_revisions,
    resolve_bindings,
    revision_hash,
)

VERSION = indexing.default_embedder().embedding_version


def _book(tenant, name, content="A."):
    book, _ = services.create_book(
        tenant, BookIn.model_validate({"name": name, "entries": [{"id": "a", "content": content}]})
    )
    return book


def _publish(tenant, book, content):
    model = BookIn.model_validate({"name": book.name, "entries": [{"id": "a", "content": content}]})
    services.publish_revision(tenant, book, model, book.head_revision)


def _slow(tenant, prompt_id):
    out = []
    for ref in resolve_bindings(tenant, prompt_id):
        index = indexing.ready_index(tenant, ref["book_id"], ref["revision"])
        out.append(
            (
                ref["book_id"],
                ref["revision"],
                revision_hash(ref["book_id"], ref["revision"]),
                index.id if index else None,
            )
        )
    return out


def _rows(found):
    return [(b.book_id, b.revision, b.content_hash, b.index_id) for b in found]


def _fast(tenant, prompt_id):
    return _rows(bound_revisions(tenant, prompt_id, VERSION))


@pytest.mark.django_db
def test_bound_revisions_equal_the_orm_resolution(tenant, other_tenant):
    first, second, third, off = (_book(tenant, n) for n in ("one", "two", "three", "off"))
    _publish(tenant, second, "B.")
    _publish(tenant, third, "C.")
    foreign = _book(other_tenant, "foreign")
    services.put_bindings(
        tenant,
        "p",
        [
            {"book_id": str(third.id), "position": 0},
            {"book_id": str(second.id), "revision": 1, "position": 1},
            {"book_id": str(first.id), "position": 1},
            {"book_id": str(off.id), "enabled": False},
        ],
    )
    services.put_bindings(other_tenant, "p", [{"book_id": str(foreign.id)}])
    assert _fast(tenant, "p") == _slow(tenant, "p")
    assert [row[:2] for row in _fast(tenant, "p")][0] == (str(third.id), 2)
    assert len(_fast(tenant, "p")) == 3 and _fast(tenant, "nobody") == []
    # A ready index of the exact revision and embedder counts; others do not.
    ready = BookIndex.objects.create(
        tenant=tenant, book=third, revision=2, embedding_version=VERSION, status="ready"
    )
    for revision, version, status in ((1, VERSION, "ready"), (2, "other", "ready")):
        BookIndex.objects.create(
            tenant=tenant, book=third, revision=revision, embedding_version=version, status=status
        )
    BookIndex.objects.create(
        tenant=tenant, book=first, revision=1, embedding_version=VERSION, status="building"
    )
    assert _fast(tenant, "p") == _slow(tenant, "p")
    assert _fast(tenant, "p")[0][3] == ready.id and _fast(tenant, "p")[2][3] is None
    # A head that moves is followed; a pinned revision is not.
    _publish(tenant, second, "B2.")
    _publish(tenant, third, "C2.")
    assert _fast(tenant, "p") == _slow(tenant, "p")
    assert [row[1] for row in _fast(tenant, "p")] == [3, 1, 1]
    assert IndexStatus.READY == "ready"


@pytest.mark.django_db
def test_a_broken_binding_fails_both_ways_with_its_code(tenant):
    book = _book(tenant, "one")
    PromptBinding.objects.create(tenant=tenant, prompt_id="p", book=book, revision=9)
    for read in (lambda: resolve_bindings(tenant, "p"), lambda: _fast(tenant, "p")):
        with pytest.raises(errors.Conflict) as info:
            read()
        assert info.value.code == "binding_broken"
        assert info.value.details == {"book_id": str(book.id), "revision": 9}


def _orm_requested(tenant, refs):
    out = []
    for book_id, revision in refs:
        number = Book.objects.get(tenant=tenant, pk=book_id).head_revision
        number = number if revision is None else revision
        index = indexing.ready_index(tenant, book_id, number)
        out.append((book_id, number, revision_hash(book_id, number), index.id if index else None))
    return out


def _requested(tenant, refs):
    return _rows(requested_revisions(tenant, refs, VERSION))


@pytest.mark.django_db
def test_requested_revisions_equal_the_orm_reads(tenant, other_tenant):
    first, second = _book(tenant, "one"), _book(tenant, "two")
    _publish(tenant, second, "B.")
    ready = BookIndex.objects.create(
        tenant=tenant, book=second, revision=2, embedding_version=VERSION, status="ready"
    )
    BookIndex.objects.create(
        tenant=tenant, book=second, revision=1, embedding_version="other", status="ready"
    )
    BookIndex.objects.create(
        tenant=tenant, book=first, revision=1, embedding_version=VERSION, status="building"
    )
    refs = [(str(second.id), None), (str(first.id), 1), (str(second.id), 1), (str(first.id), None)]
    assert _requested(tenant, refs) == _orm_requested(tenant, refs)
    assert [row[1] for row in _requested(tenant, refs)] == [2, 1, 1, 1]
    assert _requested(tenant, refs)[0][3] == ready.id and _requested(tenant, refs)[3][3] is None
    assert _requested(tenant, []) == []


@pytest.mark.django_db
def test_a_book_or_revision_the_tenant_lacks_is_a_404_naming_it(tenant, other_tenant):
    mine, foreign = _book(tenant, "mine"), _book(other_tenant, "foreign")
    ok = (str(mine.id), None)
    cases = [
        ([ok, (str(foreign.id), None)], f"book {foreign.id} not found"),
        ([(str(mine.id), 9), ok], f"revision 9 of book {mine.id} not found"),
        ([(str(mine.id), 2**40)], f"revision {2**40} of book {mine.id} not found"),
        ([ok, ("not-a-uuid", 1)], "book not-a-uuid not found"),
        ([("not-a-uuid", None)], "book not-a-uuid not found"),
    ]
    for refs, message in cases:
        with pytest.raises(errors.NotFound) as info:
            requested_revisions(tenant, refs, VERSION)
        assert info.value.message == message


@pytest.mark.django_db
def test_timed_state_equals_the_orm_row(tenant, other_tenant):
    assert retrieval.timed_state(tenant, "c") == (None, {})
    TimedEffectState.objects.create(
        tenant=tenant, conversation_id="c", state={"b:a": {"sticky_until": 4}}, version=3
    )
    TimedEffectState.objects.create(tenant=other_tenant, conversation_id="c", state={}, version=9)
    row = TimedEffectState.objects.get(tenant=tenant, conversation_id="c")
    assert retrieval.timed_state(tenant, "c") == (row.version, row.state) == (3, row.state)
    assert retrieval.timed_state(tenant, "d") == (None, {})


def _reference(index_docs: list[Doc], query: str, limit: int) -> list[tuple[str, float]]:
    """Plain BM25 sums over the same postings, sorted with ties in document order."""
    built = LexicalIndex.build(index_docs)
    scores: dict[int, float] = {}
    for term in set(query_terms(query)):
        posting = built.postings(term)
        if posting is None:
            continue
        for position, weight in zip(posting[0].tolist(), posting[1].tolist(), strict=True):
            scores[position] = scores.get(position, 0.0) + weight
    ranked = sorted(scores, key=lambda p: (-scores[p], p))[: max(limit, 0)]
    return [(index_docs[p].key, round(scores[p], 6)) for p in ranked if scores[p] > 0]


WORDS = st.sampled_from(["tower", "lamp", "key", "铜钥匙", "sea", "the", "门", "fog"])


@settings(max_examples=150, deadline=None)
@given(
    texts=st.lists(st.lists(WORDS, max_size=6).map(" ".join), min_size=1, max_size=30),
    query=st.lists(WORDS, min_size=1, max_size=4).map(" ".join),
    limit=st.integers(0, 12),
)
def test_rank_equals_the_reference_ranking(texts, query, limit):
    docs = [Doc(str(i), "", text) for i, text in enumerate(texts)]
    index = LexicalIndex.build(docs)
    expected = _reference(docs, query, limit)
    assert index.rank(query, limit) == expected
    assert [(h.key, h.score) for h in index.search(query, limit)] == expected


def test_ties_at_the_limit_keep_document_order():
    docs = [Doc("strong", "", "lamp lamp tower")] + [Doc(str(i), "", "lamp") for i in range(9)]
    assert [key for key, _ in LexicalIndex.build(docs).rank("lamp tower", 4)] == [
        "strong",
        "0",
        "1",
        "2",
    ]
