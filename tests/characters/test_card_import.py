"""Card import through the API and the console: every format becomes a character with its
avatar and its embedded book bound; every malformed file is a 4xx with a stable code and
nothing written; a re-imported file is recognised."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roleplay.characters.cards.limits import CARD_EXTENSION
from roleplay.models import Character, CharacterImport
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.characters.cardfiles import (
    BOOK,
    as_json,
    bomb_png,
    charx,
    flip_crc,
    image_bytes,
    pixel_bomb_png,
    png_card,
    v2_card,
    v3_card,
    zip_bomb,
)
from worldbook.engine.importers import parse_import
from worldbook.models import Book, PromptBinding
from worldbook.selectors import get_revision

pytestmark = pytest.mark.django_db

URL = "/api/v1/characters/import"


def send(client, data: bytes, name: str, **extra):
    upload = SimpleUploadedFile(name, data, content_type="application/octet-stream")
    return client.post(URL, {"file": upload, **extra}, format="multipart")


def imported(client, data: bytes, name: str, **extra) -> dict:
    response = send(client, data, name, **extra)
    assert response.status_code == 201, response.content[:1000]
    return response.json()


FILES = {
    "ccv2_json": (lambda: as_json(v2_card(book=BOOK)), "mira.json"),
    "ccv3_json": (lambda: as_json(v3_card(book=BOOK)), "mira.json"),
    "ccv2_png": (lambda: png_card(v2_card(book=BOOK)), "mira.png"),
    "ccv3_png": (lambda: png_card(v3_card(book=BOOK)), "mira.png"),
    "ccv3_charx": (lambda: charx(v3_card(book=BOOK), icon=image_bytes()), "mira.charx"),
}


@pytest.mark.parametrize("fmt", sorted(FILES))
def test_each_format_becomes_a_character_with_its_book(api, tenant, fmt):
    make, name = FILES[fmt]
    data = make()
    body = imported(api, data, name)
    character = Character.objects.get(pk=body["character"]["id"])
    assert body["report"]["format"] == fmt
    assert (character.name, character.first_message) == ("Mira", "A visitor, at this hour?")
    assert character.alternate_greetings == ["The lamp needs trimming.", "You again?"]
    assert character.system_prompt == "You are {{char}}."
    assert character.post_history_instructions == "Stay in character."
    assert character.tags == ["lighthouse", "fantasy"]
    assert character.extensions["depth_prompt"] == {"depth": 4}
    if fmt.startswith("ccv3"):
        assert character.extensions[CARD_EXTENSION]["nickname"] == "Mi"
    assert (character.avatar is not None) == (not fmt.endswith("json"))
    assert body["character"]["has_avatar"] == (not fmt.endswith("json"))

    # The embedded book: a worldbook bound to the character, as the worldbook importer maps it.
    binding = PromptBinding.objects.get(tenant=tenant, prompt_id=str(character.id))
    assert body["books"] == [
        {"book_id": str(binding.book_id), "name": "Greyport lore", "revision": None}
    ]
    stored = get_revision(tenant, binding.book, None).content
    expected = parse_import("card.json", as_json(v3_card(book=BOOK))).book
    assert [e["content"] for e in stored["entries"]] == [e["content"] for e in expected["entries"]]
    assert [e["position"] for e in stored["entries"]] == ["at_depth", "before_character"]
    assert body["report"]["book"]["imported_count"] == 2
    assert (
        CharacterImport.objects.get(character=character).sha256 == body["report"]["source_sha256"]
    )


def test_the_report_accounts_for_every_card_field(api):
    body = imported(
        api, as_json({**v3_card(book=BOOK, future=1), "talkativeness": "0.5"}), "m.json"
    )
    report = body["report"]
    mapped = {m["card_field"] for m in report["mapped"]}
    kept = {k["card_field"] for k in report["kept"]}
    dropped = {d["card_field"] for d in report["dropped"]}
    card_fields = {f"data.{key}" for key in v3_card(book=BOOK, future=1)["data"]}
    assert mapped | kept == card_fields
    assert "data.character_book" in mapped and "data.future" in kept
    assert dropped == {"talkativeness"}


def test_a_card_without_a_book_binds_nothing(api, tenant):
    body = imported(api, as_json(v2_card()), "m.json")
    assert body["books"] == [] and body["report"]["book"] is None
    assert not PromptBinding.objects.filter(tenant=tenant).exists()


MALFORMED = [
    (b"{broken", "c.json", 400, "invalid_json"),
    (as_json({"spec": "chara_card_v9", "data": {}}), "c.json", 400, "unsupported_format"),
    (png_card(v2_card())[:-30], "c.png", 400, "invalid_png"),
    (flip_crc(png_card(v2_card()), b"tEXt"), "c.png", 400, "invalid_png"),
    (flip_crc(png_card(v2_card()), b"IDAT"), "c.png", 400, "invalid_png"),
    (image_bytes(), "c.png", 400, "not_a_card"),
    (bomb_png(17 * 1024 * 1024), "c.png", 400, "decompression_bomb"),
    (zip_bomb(17 * 1024 * 1024), "c.charx", 400, "decompression_bomb"),
    (charx(v3_card())[:100], "c.charx", 400, "invalid_charx"),
    (charx(None, members={"x": b""}), "c.charx", 400, "invalid_charx"),
    (as_json(v2_card(name="")), "c.json", 422, "card_field_invalid"),
    (as_json(v2_card(first_mes="x" * 20_001)), "c.json", 422, "card_field_invalid"),
    (as_json(v2_card(alternate_greetings=["g"] * 101)), "c.json", 422, "card_field_invalid"),
    (as_json(v2_card(book={"entries": "nope"})), "c.json", 400, "invalid_card"),
]


@pytest.mark.parametrize(
    ("data", "name", "status", "code"),
    MALFORMED,
    ids=[
        "bad-json",
        "unknown-spec",
        "truncated-png",
        "text-crc",
        "image-crc",
        "png-without-card",
        "png-text-bomb",
        "zip-bomb",
        "truncated-charx",
        "charx-without-card",
        "no-name",
        "greeting-too-long",
        "too-many-greetings",
        "broken-book",
    ],
)
def test_malformed_files_are_refused_and_nothing_is_written(api, data, name, status, code):
    before = db_snapshot()
    assert_error(send(api, data, name), status, code)
    assert snapshot_diff(before, db_snapshot()) == []


def test_a_card_field_is_named_as_the_card_names_it(api):
    error = assert_error(
        send(api, as_json(v2_card(first_mes="x" * 20_001)), "c.json"), 422, "card_field_invalid"
    )
    assert error["details"]["errors"][0]["loc"] == "data.first_mes"


def test_a_pixel_bomb_image_fails_the_whole_import(api):
    image = pixel_bomb_png()
    iend = image.rindex(b"IEND") - 4
    card = png_card(v2_card(book=BOOK))
    text_at = card.index(b"tEXt") - 4
    length = int.from_bytes(card[text_at : text_at + 4], "big")
    text_chunk = card[text_at : text_at + 12 + length]
    bomb_card = image[:iend] + text_chunk + image[iend:]
    before = db_snapshot()
    assert_error(send(api, bomb_card, "c.png"), 422, "image_too_large")
    assert snapshot_diff(before, db_snapshot()) == []


def test_a_book_that_cannot_be_published_leaves_no_character(api):
    entry = {"keys": ["x"], "content": "x", "extensions": {"roleplay_native": {"requires": ["no"]}}}
    before = db_snapshot()
    response = send(api, as_json(v2_card(book={"entries": [entry]})), "c.json")
    assert_error(response, 422, "dependency_missing")
    assert snapshot_diff(before, db_snapshot()) == []


def test_too_large_a_file_is_413(api):
    data = as_json(v2_card(description="x" * (16 * 1024 * 1024)))
    before = db_snapshot()
    assert_error(send(api, data, "c.json"), 413, "file_too_large")
    assert snapshot_diff(before, db_snapshot()) == []


def test_the_upload_is_checked(api):
    assert_error(api.post(URL, {}, format="multipart"), 400, "validation_error")
    upload = SimpleUploadedFile("c.json", as_json(v2_card()))
    response = api.post(URL, {"file": upload, "surprise": "1"}, format="multipart")
    assert "surprise" in {
        e["loc"] for e in assert_error(response, 400, "validation_error")["details"]["errors"]
    }
    upload = SimpleUploadedFile("c.json", as_json(v2_card()))
    response = api.post(URL, {"file": upload, "on_duplicate": "merge"}, format="multipart")
    assert_error(response, 400, "validation_error")


def test_a_reimport_returns_the_first_character_unless_a_copy_is_asked(api, tenant):
    data = png_card(v3_card(book=BOOK))
    first = imported(api, data, "mira.png")
    before = db_snapshot()
    again = send(api, data, "renamed.png")
    assert again.status_code == 200
    body = again.json()
    assert body["deduplicated"] is True
    assert body["character"]["id"] == first["character"]["id"]
    assert body["books"] == first["books"]
    assert "duplicate_file" in {w["code"] for w in body["report"]["warnings"]}
    assert snapshot_diff(before, db_snapshot()) == []

    copy = imported(api, data, "mira.png", on_duplicate="copy")
    assert copy["character"]["id"] != first["character"]["id"] and not copy["deduplicated"]
    assert Character.objects.filter(tenant=tenant, name="Mira").count() == 2
    assert Book.objects.filter(tenant=tenant).count() == 2


def test_another_tenants_import_is_not_a_duplicate(api, other_api):
    data = as_json(v2_card())
    mine = imported(api, data, "m.json")
    theirs = imported(other_api, data, "m.json")
    assert theirs["character"]["id"] != mine["character"]["id"]


def test_an_idempotency_key_replays_the_first_answer(api, tenant):
    data = as_json(v2_card())
    upload = lambda: SimpleUploadedFile("m.json", data)  # noqa: E731
    first = api.post(URL, {"file": upload()}, format="multipart", HTTP_IDEMPOTENCY_KEY="k1")
    again = api.post(URL, {"file": upload()}, format="multipart", HTTP_IDEMPOTENCY_KEY="k1")
    assert first.status_code == again.status_code == 201
    assert again.json()["replayed"] is True
    assert again.json()["character"] == first.json()["character"]
    other = SimpleUploadedFile("m.json", as_json(v2_card("Ada")))
    conflict = api.post(URL, {"file": other}, format="multipart", HTTP_IDEMPOTENCY_KEY="k1")
    assert_error(conflict, 409, "idempotency_conflict")
    assert Character.objects.filter(tenant=tenant).count() == 1


def test_a_play_token_cannot_import(play_api):
    assert_error(send(play_api, as_json(v2_card()), "m.json"), 403, "forbidden")


def test_the_console_imports_a_card_and_shows_the_report(operator_client, tenant):
    upload = SimpleUploadedFile("mira.png", png_card(v3_card(book=BOOK)))
    response = operator_client.post(
        "/console/characters/import/", {"file": upload, "on_duplicate": "existing"}
    )
    character = Character.objects.get(tenant=tenant, name="Mira")
    assert response.status_code == 302
    assert response["Location"] == f"/console/characters/{character.pk}/"
    page = operator_client.get(response["Location"]).content.decode()
    assert "Imported “Mira” from mira.png." in page
    assert 'id="import-report"' in page and "data.nickname" in page
    assert "Greyport lore" in page and 'id="character-avatar"' in page


def test_the_console_says_ccv1_copies_were_ignored_not_dropped(operator_client, tenant):
    """A SillyTavern export carries a CCv1 copy of each field beside the v2 data: the
    summary says they were ignored because the v2 fields were used, not that they were lost."""
    card = v2_card()
    sillytavern = {**card, "name": "Mira", "first_mes": "A visitor?", "creatorcomment": "x"}
    upload = SimpleUploadedFile("mira.json", as_json(sillytavern))
    response = operator_client.post(
        "/console/characters/import/", {"file": upload, "on_duplicate": "existing"}
    )
    page = operator_client.get(response["Location"]).content.decode()
    summary = page[page.index('id="import-summary"') :]
    summary = summary[: summary.index("</span>")]
    assert "3 CCv1 copies ignored (the v2 fields were used)" in summary
    assert "dropped" not in summary and "not imported" not in summary


def test_the_console_shows_import_errors(operator_client, tenant):
    upload = SimpleUploadedFile("bad.png", b"\x89PNG\r\n\x1a\nnope")
    response = operator_client.post(
        "/console/characters/import/", {"file": upload, "on_duplicate": "existing"}
    )
    assert response.status_code == 200 and "invalid_png" in response.content.decode()
    assert not Character.objects.filter(tenant=tenant).exists()


def test_a_viewer_cannot_import_in_the_console(viewer_client):
    assert viewer_client.get("/console/characters/import/").status_code == 403
