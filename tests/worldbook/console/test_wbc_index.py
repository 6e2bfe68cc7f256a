"""Index status page: build button, busy answer, progress that htmx polls while building."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from worldbook import indexing, tasks
from worldbook.models import BookIndex

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """Index ids handed to Celery (the build itself is run by the test when it wants)."""
    calls: list[int] = []
    monkeypatch.setattr(tasks, "build_index", SimpleNamespace(delay=calls.append))
    return calls


def test_build_progress_and_busy(operator, book, queued, django_capture_on_commit_callbacks):
    base = f"/console/worldbooks/{book.pk}/index/"
    page = operator.get(base).content.decode()
    assert 'data-status="missing"' in page and "no index yet" in page
    assert 'hx-trigger="every 1s"' not in page

    with django_capture_on_commit_callbacks(execute=True):
        response = operator.post(base + "build/", {"revision": "1"}, HTTP_HX_REQUEST="true")
    html = response.content.decode()
    index = BookIndex.objects.get(book=book, revision=1)
    assert queued == [index.id] and index.status == "building"
    assert 'data-status="building"' in html and 'hx-trigger="every 1s"' in html
    assert f'hx-get="{base}status/?revision=1"' in html
    assert "queued" in html

    busy = operator.post(base + "build/", {"revision": "1"}, HTTP_HX_REQUEST="true")
    assert 'data-error-code="index_busy"' in busy.content.decode()
    assert queued == [index.id]
    plain = operator.post(base + "build/", {"revision": "1"}, follow=True)
    assert "index_busy" in plain.content.decode()

    indexing.run_build(index.id)
    status = operator.get(base + "status/?revision=1").content.decode()
    index.refresh_from_db()
    assert index.chunks_total >= 2 and index.chunks_done == index.chunks_total
    assert 'data-status="ready"' in status and "100%" in status
    assert f"{index.chunks_total} / {index.chunks_total} chunks" in status
    assert 'hx-trigger="every 1s"' not in status
    listing = operator.get("/console/worldbooks/").content.decode()
    assert '<span class="badge ready">ready</span>' in listing


def test_a_ready_index_is_reused_unless_forced(
    operator, book, queued, django_capture_on_commit_callbacks
):
    base = f"/console/worldbooks/{book.pk}/index/"
    with django_capture_on_commit_callbacks(execute=True):
        operator.post(base + "build/", {"revision": "1"})
    indexing.run_build(BookIndex.objects.get(book=book).id)
    with django_capture_on_commit_callbacks(execute=True):
        reused = operator.post(base + "build/", {"revision": "1"}, follow=True)
    assert "already ready" in reused.content.decode() and len(queued) == 1
    with django_capture_on_commit_callbacks(execute=True):
        operator.post(base + "build/", {"revision": "1", "force": "1"})
    assert len(queued) == 2


def test_progress_mid_build(operator, book):
    index = BookIndex.objects.create(
        tenant=book.tenant,
        book=book,
        revision=1,
        embedding_version=indexing.default_embedder().embedding_version,
        status="building",
        chunks_total=8,
        chunks_done=2,
        attempts=1,
    )
    html = operator.get(f"/console/worldbooks/{book.pk}/index/status/").content.decode()
    assert "2 / 8 chunks" in html and "25%" in html and 'value="25"' in html
    assert 'hx-trigger="every 1s"' in html
    assert index.pk
