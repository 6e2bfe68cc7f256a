"""A turn reads every lorebook scope's bindings in one statement
(``worldbook.selectors.scoped_revisions``), equal to each scope's own read
(``bound_revisions``), with the tenant's scope strategy, and nothing of another tenant's."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from worldbook import indexing, services
from worldbook.engine.schema import BookIn
from worldbook.selectors import bound_revisions, scoped_revisions

pytestmark = pytest.mark.django_db

VERSION = indexing.default_embedder().embedding_version
TARGETS = [
    ("prompt", "mira"),
    ("global", ""),
    ("scenario", "s1"),
    ("chat", "c1"),
    ("persona", "p1"),
]


def _books(tenant, n: int) -> list[str]:
    out = []
    for i in range(n):
        book, _ = services.create_book(
            tenant,
            BookIn.model_validate({"name": f"b{i}", "entries": [{"id": "a", "content": "A."}]}),
        )
        out.append(str(book.id))
    return out


def test_one_statement_reads_every_scope(tenant, other_tenant):
    ids = _books(tenant, 6)
    for n, (scope, target) in enumerate(TARGETS):
        bindings = [{"book_id": ids[n], "position": 3}, {"book_id": ids[5], "position": 1}]
        services.put_bindings(tenant, target, bindings, scope=scope)
    services.put_bindings(tenant, "other", [{"book_id": ids[0]}], scope="chat")  # not asked for
    theirs = _books(other_tenant, 1)
    services.put_bindings(other_tenant, "", [{"book_id": theirs[0]}], scope="global")
    services.set_scope_strategy(tenant, "global_first")
    with CaptureQueriesContext(connection) as queries:
        read = scoped_revisions(tenant, TARGETS, VERSION)
    assert len(queries) == 1
    assert read.tenant_strategy == "global_first"
    by_scope: dict[str, list] = {}
    for book in read.books:
        by_scope.setdefault(book.scope, []).append(book.item)
    for scope, target in TARGETS:
        assert by_scope[scope] == bound_revisions(tenant, target, VERSION, scope=scope)
    assert len(read.books) == 10
    assert theirs[0] not in {book.book_id for book in read.books}


def test_nothing_bound_reads_nothing(tenant):
    read = scoped_revisions(tenant, TARGETS, VERSION)
    assert read.books == [] and read.tenant_strategy is None
