"""Every worldbook console page renders; login, roles and tenancy decide who sees what."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client

pytestmark = pytest.mark.django_db


def _book_pages(book) -> list[str]:
    base = f"/console/worldbooks/{book.pk}"
    return [
        f"{base}/",
        f"{base}/revisions/",
        f"{base}/revisions/1/",
        f"{base}/revisions/1/export/?format=native",
        f"{base}/revisions/1/export/?format=sillytavern",
        f"{base}/diff/?a=1&b=1",
        f"{base}/index/",
        f"{base}/index/status/",
        f"{base}/entries/row/?key=gate",
        f"{base}/entries/row/?key=gate&edit=1",
        f"{base}/draft/changes/",
        f"{base}/?q=gate&sort=tokens&edit=gate",
    ]


def _pages(book, character) -> list[str]:
    return [
        "/console/worldbooks/",
        "/console/worldbooks/new/",
        "/console/worldbooks/import/",
        "/console/worldbooks/playground/",
        f"/console/worldbooks/bindings/{character.pk}/",
        *_book_pages(book),
    ]


def test_every_page_requires_login(book, character):
    client = Client()
    for url in _pages(book, character):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/console/login/?next="), url


def test_every_page_renders_for_an_operator(operator, book, character):
    for url in _pages(book, character):
        response = operator.get(url)
        assert response.status_code == 200, url


def test_book_list_shows_head_revision_entries_and_index(operator, book, make_book, tenant):
    make_book(tenant, [], name="Empty book")
    html = operator.get("/console/worldbooks/").content.decode()
    row = html.split(f'id="book-{book.pk}"')[1].split("</tr>")[0]
    assert "Greyport" in row and "r1" in row
    assert '<td class="num">2</td>' in row
    assert "no index" in row
    assert "Empty book" in html
    assert (
        'href="/console/worldbooks/new/"' in html and 'href="/console/worldbooks/import/"' in html
    )


def test_new_book_creates_revision_one(operator, tenant):
    from worldbook.models import Book

    response = operator.post(
        "/console/worldbooks/new/", {"name": "Lighthouse", "description": "Lore."}
    )
    book = Book.objects.get(tenant=tenant, name="Lighthouse")
    assert response.status_code == 302 and response["Location"] == f"/console/worldbooks/{book.pk}/"
    assert book.head_revision == 1 and book.revisions.get().content["entries"] == []
    blank = operator.post("/console/worldbooks/new/", {"name": ""})
    assert blank.status_code == 200 and "This field is required" in blank.content.decode()


def test_export_downloads_the_revision(operator, book):
    native = operator.get(f"/console/worldbooks/{book.pk}/revisions/1/export/?format=native")
    assert native["Content-Disposition"].startswith("attachment;")
    assert [e["id"] for e in native.json()["entries"]] == ["background", "gate"]
    st = operator.get(f"/console/worldbooks/{book.pk}/revisions/1/export/?format=sillytavern")
    assert "entries" in st.json()
    bad = operator.get(f"/console/worldbooks/{book.pk}/revisions/1/export/?format=xml")
    assert bad.status_code == 400


def test_viewer_reads_but_cannot_write(viewer, operator, book, character):
    for url in _pages(book, character):
        if url.endswith(("/new/", "/import/")):
            assert viewer.get(url).status_code == 403, url
        else:
            assert viewer.get(url).status_code == 200, url
    editor = viewer.get(f"/console/worldbooks/{book.pk}/").content.decode()
    assert 'id="wb-publish"' not in editor and "Read only" in editor
    row = f"/console/worldbooks/{book.pk}/entries/row/?key=gate&edit=1"
    form = viewer.get(row).content.decode()
    assert 'name="e-title"' in form and "disabled" in form.split('name="e-title"')[1][:200]
    # Entry forms share their field objects: a viewer's read-only form must not leak.
    assert "disabled" not in operator.get(row).content.decode()
    base = f"/console/worldbooks/{book.pk}"
    posts = [
        (f"{base}/entries/save/", {"key": "gate", "e-content": "x"}),
        (f"{base}/entries/add/", {}),
        (f"{base}/entries/revert/", {"key": "gate"}),
        (f"{base}/bulk/", {"action": "disable", "keys": ["gate"]}),
        (f"{base}/draft/publish/", {}),
        (f"{base}/draft/discard/", {}),
        (f"{base}/draft/rebase/", {}),
        (f"{base}/draft/restore/", {"revision": "1"}),
        (f"{base}/draft/book/", {"name": "x"}),
        ("/console/worldbooks/new/", {"name": "x"}),
        ("/console/worldbooks/import/", {}),
        (f"/console/worldbooks/{book.pk}/index/build/", {"revision": "1"}),
        (f"/console/worldbooks/bindings/{character.pk}/", {}),
    ]
    for url, data in posts:
        assert viewer.post(url, data).status_code == 403, url
    book.refresh_from_db()
    assert book.head_revision == 1


def test_foreign_tenant_ids_are_404(outsider, book, character):
    for url in _book_pages(book) + [f"/console/worldbooks/bindings/{character.pk}/"]:
        assert outsider.get(url).status_code == 404, url
    base = f"/console/worldbooks/{book.pk}"
    for tail, data in [
        ("entries/save/", {"key": "gate", "e-content": "stolen"}),
        ("entries/add/", {}),
        ("bulk/", {"action": "disable", "keys": ["gate"]}),
        ("draft/publish/", {}),
        ("draft/restore/", {"revision": "1"}),
    ]:
        assert outsider.post(f"{base}/{tail}", data).status_code == 404, tail
    assert outsider.post(f"/console/worldbooks/{book.pk}/index/build/").status_code == 404
    assert outsider.post(f"/console/worldbooks/bindings/{character.pk}/").status_code == 404
    listing = outsider.get("/console/worldbooks/").content.decode()
    assert str(book.pk) not in listing and "Greyport" not in listing


def test_missing_ids_and_revisions_are_404(operator, book):
    assert operator.get(f"/console/worldbooks/{uuid.uuid4()}/").status_code == 404
    assert operator.get(f"/console/worldbooks/{book.pk}/revisions/9/").status_code == 404
    assert operator.get(f"/console/worldbooks/{book.pk}/diff/?a=1&b=9").status_code == 404
    assert operator.get(f"/console/worldbooks/{book.pk}/index/?revision=9").status_code == 404
    assert operator.get("/console/worldbooks/import/not-a-real-token-xyz/").status_code == 404
    assert operator.get(f"/console/worldbooks/{book.pk}/entries/row/?key=nope").status_code == 404
    assert operator.get(f"/console/worldbooks/{book.pk}/entries/row/").status_code == 404


def test_playground_lists_only_the_tenants_books(operator, book, foreign_book):
    html = operator.get("/console/worldbooks/playground/").content.decode()
    assert str(book.pk) in html and str(foreign_book.pk) not in html
