"""A publish and a binding change have the worker prepare the bound revisions, and a process
that holds nothing serves its first selection from the file the worker wrote."""

from __future__ import annotations

import time

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from worldbook import compiled, services
from worldbook.engine.schema import BookIn
from worldbook.selectors import bound_revisions

pytestmark = pytest.mark.django_db(transaction=True)


def _model(text: str) -> BookIn:
    return BookIn.model_validate(
        {"name": "Harbor", "entries": [{"id": "e1", "content": text, "keys": ["harbor"]}]}
    )


def _appears(path, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        time.sleep(0.1)
    return False


def test_binding_and_publish_warm_the_shared_form(celery_worker, tenant):
    book, first = services.create_book(tenant, _model("The harbor at dawn."))
    first_path = compiled.path_for(str(book.id), 1, first.content_hash)
    assert not first_path.exists()  # an unbound book is not prepared
    services.put_bindings(tenant, "mira", [{"book_id": str(book.id)}])
    assert _appears(first_path)
    second = services.publish_revision(tenant, book, _model("The harbor at dusk."), 1)
    second_path = compiled.path_for(str(book.id), 2, second.content_hash)
    assert _appears(second_path)
    assert "worldbook.warm_revisions" in celery_worker.log.read_text()

    # A process that holds nothing: the revision comes from the worker's file, not from the
    # revision's content in the database.
    compiled.forget()
    with CaptureQueriesContext(connection) as queries:
        [bound] = bound_revisions(tenant, "mira", "any")
        loaded = bound.load()
    assert (loaded.revision, loaded.entries[0].content) == (2, "The harbor at dusk.")
    assert len(queries) == 1 and "bookrevision" not in queries[0]["sql"].split("LEFT JOIN")[0]
    assert compiled.resident()["revisions"] == 1


CHILD = """
import sys
import django
django.setup()
from worldbook import compiled
book = compiled.get(sys.argv[1], int(sys.argv[2]), sys.argv[3])
print(book.entries[0].content, compiled.resident()["revisions"])
"""


def test_another_process_serves_from_the_workers_file(celery_worker, tenant):
    """A new process reads the revision the worker prepared: it could not prepare it itself,
    as its database connection is not the test database's."""
    import os
    import subprocess
    import sys

    book, _ = services.create_book(tenant, _model("The harbor in fog."))
    services.put_bindings(tenant, "mira", [{"book_id": str(book.id)}])
    [bound] = bound_revisions(tenant, "mira", "any")
    assert _appears(compiled.path_for(bound.book_id, bound.revision, bound.content_hash))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "tests.settings"}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, bound.book_id, str(bound.revision), bound.content_hash],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split("\n")[-2] == "The harbor in fog. 1"
