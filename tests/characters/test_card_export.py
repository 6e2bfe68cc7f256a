"""Card export and round trips: import, export in each format, import again gives the same
character fields and the same book entries; an exported file is read back by the worldbook
importer (its API) and by our own reader."""

from __future__ import annotations

import io
import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from roleplay.characters.cards.read import read_card_file
from roleplay.characters.services.characters import CHARACTER_FIELDS
from roleplay.models import Character
from tests.api.helpers import assert_error
from tests.characters.cardfiles import BOOK, as_json, charx, image_bytes, png_card, v2_card, v3_card
from worldbook import services as worldbooks
from worldbook.engine.importers.png import iter_chunks
from worldbook.engine.schema import BookIn
from worldbook.models import PromptBinding
from worldbook.selectors import get_revision

pytestmark = pytest.mark.django_db

COMPARED = [name for name in CHARACTER_FIELDS if name != "model_config"]


def import_file(api, data: bytes, name: str, **extra) -> dict:
    upload = SimpleUploadedFile(name, data)
    response = api.post("/api/v1/characters/import", {"file": upload, **extra}, format="multipart")
    assert response.status_code == 201, response.content[:800]
    return response.json()


def export(api, character_id: str, fmt: str):
    return api.get(f"/api/v1/characters/{character_id}/export?format={fmt}")


def fields_of(character_id: str) -> dict:
    character = Character.objects.get(pk=character_id)
    return {name: getattr(character, name) for name in COMPARED}


def entries_of(tenant, character_id: str) -> list[dict]:
    binding = PromptBinding.objects.get(tenant=tenant, prompt_id=str(character_id))
    content = get_revision(tenant, binding.book, None).content
    model = BookIn.model_validate(content)
    return [{**e.model_dump(mode="json"), "source": None} for e in model.entries]


SOURCES = {
    "ccv2_json": (lambda: as_json(v2_card(book=BOOK)), "m.json"),
    "ccv3_png": (lambda: png_card(v3_card(book=BOOK, future_field=[1])), "m.png"),
    "ccv3_charx": (lambda: charx(v3_card(book=BOOK), icon=image_bytes()), "m.charx"),
}


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("fmt", ["ccv3_png", "ccv3_json", "ccv2_json"])
def test_import_export_import_gives_the_same_character_and_book(api, tenant, source, fmt):
    make, name = SOURCES[source]
    first = import_file(api, make(), name)["character"]["id"]
    response = export(api, first, fmt)
    assert response.status_code == 200
    suffix = "png" if fmt == "ccv3_png" else "json"
    second = import_file(api, response.content, f"again.{suffix}")["character"]["id"]
    assert fields_of(second) == fields_of(first)
    assert entries_of(tenant, second) == entries_of(tenant, first)


def test_the_png_export_is_the_avatar_with_st_chunks(api):
    character = import_file(api, png_card(v3_card(book=BOOK), size=(30, 45)), "m.png")
    response = export(api, character["character"]["id"], "ccv3_png")
    assert response["Content-Type"] == "image/png"
    assert response["Content-Disposition"] == 'attachment; filename="Mira.png"'
    assert Image.open(io.BytesIO(response.content)).size == (30, 45)
    keywords = [
        body.partition(b"\x00")[0]
        for kind, body in iter_chunks(response.content)
        if kind == b"tEXt"
    ]
    assert keywords == [b"chara", b"ccv3"]
    card = read_card_file("x.png", response.content)
    assert card.spec == "ccv3" and card.card["data"]["character_book"]["name"] == "Greyport lore"


def test_without_an_avatar_the_png_is_a_plain_image(api, character):
    response = export(api, character.pk, "ccv3_png")
    assert Image.open(io.BytesIO(response.content)).size == (400, 600)
    assert read_card_file("x.png", response.content).card["data"]["name"] == "Mira"


@pytest.mark.parametrize(
    ("fmt", "spec"), [("ccv3_json", "chara_card_v3"), ("ccv2_json", "chara_card_v2")]
)
def test_json_exports(api, character, fmt, spec):
    response = export(api, character.pk, fmt)
    assert response["Content-Type"] == "application/json"
    card = json.loads(response.content)
    assert card["spec"] == spec and card["data"]["first_mes"] == "Welcome."
    assert "character_book" not in card["data"]


def test_the_worldbook_importer_reads_an_exported_card(api, content_api):
    first = import_file(api, as_json(v3_card(book=BOOK)), "m.json")["character"]["id"]
    for fmt, name in (("ccv3_png", "m.png"), ("ccv2_json", "m.json")):
        data = export(api, first, fmt).content
        upload = SimpleUploadedFile(name, data)
        preview = content_api.post("/v1/imports/preview", {"file": upload}, format="multipart")
        assert preview.status_code == 200, preview.content[:500]
        book = preview.json()["book"]
        assert [e["content"] for e in book["entries"]] == [e["content"] for e in BOOK["entries"]]


def test_several_bound_books_are_embedded_as_one(api, tenant, character):
    ids = []
    for label in ("A", "B"):
        book, _ = worldbooks.create_book(
            tenant,
            BookIn.model_validate({"name": label, "entries": [{"id": label, "content": label}]}),
        )
        ids.append({"book_id": str(book.id)})
    worldbooks.put_bindings(tenant, str(character.pk), ids)
    card = json.loads(export(api, character.pk, "ccv3_json").content)
    book = card["data"]["character_book"]
    assert [e["content"] for e in book["entries"]] == ["A", "B"]
    assert book["name"] == "Mira worldbook"


def test_a_disabled_binding_is_not_exported(api, tenant, character):
    book, _ = worldbooks.create_book(
        tenant, BookIn.model_validate({"name": "Off", "entries": [{"content": "x"}]})
    )
    worldbooks.put_bindings(
        tenant, str(character.pk), [{"book_id": str(book.id), "enabled": False}]
    )
    card = json.loads(export(api, character.pk, "ccv3_json").content)
    assert "character_book" not in card["data"]


def test_an_unknown_format_is_refused(api, character):
    assert_error(export(api, character.pk, "ccv9"), 400, "validation_error")
    response = api.get(f"/api/v1/characters/{character.pk}/export?format=ccv2_json&x=1")
    assert_error(response, 400, "validation_error")


def test_another_tenants_character_cannot_be_exported(other_api, character):
    assert_error(export(other_api, character.pk, "ccv3_json"), 404, "not_found")


def test_a_play_token_can_export(play_api, character):
    assert export(play_api, character.pk, "ccv3_json").status_code == 200


def test_the_console_downloads_each_format(operator_client, character):
    page = operator_client.get(f"/console/characters/{character.pk}/").content.decode()
    for fmt in ("ccv3_png", "ccv3_json", "ccv2_json"):
        assert f"/console/characters/{character.pk}/export/?format={fmt}" in page
        response = operator_client.get(f"/console/characters/{character.pk}/export/?format={fmt}")
        assert response.status_code == 200 and response["Content-Disposition"].startswith(
            "attachment"
        )
