"""The import wizard: upload → preview (report, blocked entries) → confirm → the new book."""

from __future__ import annotations

import base64
import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image
from PIL.PngImagePlugin import PngInfo

from worldbook.models import Book, BookRevision, FileImport

pytestmark = pytest.mark.django_db

ST_WORLD = {
    "entries": {
        "0": {
            "uid": 0,
            "key": ["copper key", "gate"],
            "comment": "City gate",
            "content": "The copper key opens only the side door.",
            "order": 100,
            "position": 0,
            "matchPersonaDescription": True,
        },
        "1": {
            "uid": 1,
            "key": ["spell"],
            "comment": "Spell panel",
            "content": "<% if (mana > 3) { %>The spell works.<% } %>",
            "position": 1,
        },
        "2": {
            "uid": 2,
            "comment": "World",
            "content": "Greyport is a steam city.",
            "constant": True,
        },
    }
}


def st_bytes(world=ST_WORLD) -> bytes:
    return json.dumps(world).encode("utf-8")


def png_card(book: dict) -> bytes:
    card = {
        "spec": "chara_card_v2",
        "spec_version": "2.0",
        "data": {"name": "Guard", "description": "A guard.", "character_book": book},
    }
    info = PngInfo()
    info.add_text("chara", base64.b64encode(json.dumps(card).encode()).decode())
    out = io.BytesIO()
    Image.new("RGB", (2, 2)).save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def _upload(client, name: str, data: bytes):
    return client.post("/console/worldbooks/import/", {"file": SimpleUploadedFile(name, data)})


def test_wizard_upload_preview_confirm(operator, tenant, staging_dir):
    response = _upload(operator, "greyport.json", st_bytes())
    assert response.status_code == 302
    preview_url = response["Location"]
    assert preview_url.startswith("/console/worldbooks/import/")
    assert not Book.objects.filter(tenant=tenant).exists()  # nothing written yet
    staged = list(staging_dir.iterdir())
    assert len(staged) == 1 and staged[0].read_bytes() == st_bytes()

    html = operator.get(preview_url).content.decode()
    assert 'id="wb-entry-count">3<' in html and 'id="wb-blocked-count">1<' in html
    blocked = html.split('id="wb-blocked"')[1].split("</table>")[0]
    assert "Spell panel" in blocked and "ejs" in blocked
    assert "matchPersonaDescription" in html and "kept in source only" in html
    assert "The copper key opens only the side door." in html  # normalized entries
    assert "needs ejs" in html
    assert 'name="file"' not in html and "base64" not in html  # bytes stay on the server

    done = operator.post(preview_url, {"action": "confirm"})
    book = Book.objects.get(tenant=tenant)
    assert done.status_code == 302 and done["Location"] == f"/console/worldbooks/{book.pk}/"
    revision = BookRevision.objects.get(book=book)
    assert revision.entry_count == 3 and revision.import_report["runtime_blocked_count"] == 1
    assert revision.import_report["filename"] == "greyport.json"
    assert FileImport.objects.filter(tenant=tenant, book=book).exists()
    assert list(staging_dir.iterdir()) == []
    assert operator.get(preview_url).status_code == 404  # the token is spent
    editor = operator.get(done["Location"]).content.decode()
    assert "Imported greyport.json as a new book." in editor


def test_the_same_file_again_returns_the_original_book(operator, tenant):
    first = operator.post(
        _upload(operator, "a.json", st_bytes())["Location"], {"action": "confirm"}
    )
    again = operator.post(
        _upload(operator, "b.json", st_bytes())["Location"], {"action": "confirm"}
    )
    assert first["Location"] == again["Location"]
    assert Book.objects.filter(tenant=tenant).count() == 1
    assert "was imported before" in operator.get(again["Location"]).content.decode()


def test_png_card_is_previewed(operator, tenant):
    entry = {"keys": ["gate"], "content": "Shut at night.", "id": 1, "insertion_order": 10}
    book = {"entries": [{**entry, "enabled": True, "extensions": {}}]}
    response = _upload(operator, "guard.png", png_card(book))
    assert response.status_code == 302
    html = operator.get(response["Location"]).content.decode()
    assert '<dd class="wb-code">ccv2</dd>' in html and "Guard worldbook" in html
    assert "Shut at night." in html


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("broken.json", b"{not json", "invalid_json"),
        ("cat.png", b"\x89PNG\r\n\x1a\nthis is not a png", "invalid_png"),
        ("notes.json", b'{"hello": "world"}', "unsupported_format"),
    ],
)
def test_bad_files_show_the_code_and_write_nothing(operator, tenant, staging_dir, name, data, code):
    response = _upload(operator, name, data)
    html = response.content.decode()
    assert 400 <= response.status_code < 500
    assert f'data-error-code="{code}"' in html
    assert f'<code class="error-code">{code}</code>' in html
    assert not Book.objects.filter(tenant=tenant).exists()
    assert not staging_dir.exists() or list(staging_dir.iterdir()) == []


def test_an_upload_without_a_file_is_a_form_error(operator):
    missing = operator.post("/console/worldbooks/import/", {})
    assert missing.status_code == 400 and "This field is required" in missing.content.decode()


def test_cancel_discards_the_upload(operator, staging_dir):
    preview_url = _upload(operator, "greyport.json", st_bytes())["Location"]
    response = operator.post(preview_url, {"action": "cancel"})
    assert response.status_code == 302 and response["Location"] == "/console/worldbooks/import/"
    assert list(staging_dir.iterdir()) == []
    assert operator.get(preview_url).status_code == 404


def test_another_session_cannot_use_the_token(operator, tenant, outsider):
    from console.services import ensure_console_user

    preview_url = _upload(operator, "greyport.json", st_bytes())["Location"]
    assert outsider.get(preview_url).status_code == 404
    colleague, _ = ensure_console_user(tenant, "wb-colleague", None, "operator")
    other = Client()
    other.force_login(colleague)
    assert other.get(preview_url).status_code == 404
    assert other.post(preview_url, {"action": "confirm"}).status_code == 404
    assert not Book.objects.filter(tenant=tenant).exists()


def test_a_staged_file_changed_on_disk_is_refused(operator, staging_dir):
    preview_url = _upload(operator, "greyport.json", st_bytes())["Location"]
    (path,) = staging_dir.iterdir()
    path.write_bytes(st_bytes({"entries": {}}))
    assert operator.get(preview_url).status_code == 404
