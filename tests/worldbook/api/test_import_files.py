"""``POST /v1/imports/files`` and ``POST /v1/imports``: batches are all or nothing, file
imports are deduplicated by SHA-256, bad files are 4xx with the importer's code.
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.worldbook.api.wb_api_helpers import (
    b64_json,
    bomb_png,
    book,
    card,
    card_png,
    counts,
    error,
    publish,
    st_entry,
    st_world,
)
from tests.worldbook.importers.wb_import_builders import card_entry
from worldbook.models import Book, FileImport

pytestmark = pytest.mark.django_db

MiB = 1024 * 1024
WORLD = st_world(st_entry(0, key=["gate"], content="The gate is shut at night."))
CARD_PNG = card_png({"chara": b64_json(card(2, [card_entry(1)], name="Warden"))})


def upload(api, *files: tuple[str, bytes], **headers):
    payload = {"files": [SimpleUploadedFile(name, data) for name, data in files]}
    return api.post("/v1/imports/files", payload, format="multipart", **headers)


def test_files_create_one_book_each(api):
    res = upload(api, ("world.json", WORLD), ("warden.png", CARD_PNG))
    assert res.status_code == 201, res.content
    body = res.json()
    assert body["replayed"] is False and len(body["books"]) == 2
    world, warden = body["books"]
    assert world["revision"] == 1 and world["deduplicated"] is False
    assert world["import_report"]["format"] == "sillytavern"
    assert world["import_report"]["filename"] == "world.json"
    assert warden["import_report"]["format"] == "ccv2"
    stored = api.get(f"/v1/books/{warden['book_id']}").json()
    assert stored["head"]["import_report"] == warden["import_report"]
    assert stored["head"]["book"]["entries"][0]["keys"] == ["gate"]
    assert FileImport.objects.count() == 2


def test_lorebooks_of_other_tools_become_books(api):
    novelai = {"lorebookVersion": 5, "entries": [{"text": "Fog.", "keys": ["fog"]}]}
    agnai = {"kind": "memory", "name": "Agnai lore", "entries": [
        {"name": "Gate", "entry": "The gate.", "keywords": ["gate"], "priority": 2,
         "weight": 1, "enabled": True}]}  # fmt: skip
    risu = {"type": "risu", "ver": 1, "data": [{"key": "lamp", "content": "The lamp."}]}
    res = upload(
        api,
        ("Harbour.lorebook", json.dumps(novelai).encode()),
        ("agnai.json", json.dumps(agnai).encode()),
        ("risu.json", json.dumps(risu).encode()),
    )
    assert res.status_code == 201, res.content
    books = res.json()["books"]
    assert [b["import_report"]["format"] for b in books] == ["novelai", "agnai", "risuai"]
    names = [api.get(f"/v1/books/{b['book_id']}").json()["name"] for b in books]
    assert names == ["Harbour", "Agnai lore", "risu"]
    gate = api.get(f"/v1/books/{books[1]['book_id']}").json()["head"]["book"]["entries"][0]
    assert (gate["keys"], gate["priority"], gate["order"]) == (["gate"], 2, 1)


def test_same_bytes_dedupe_to_revision_1_even_after_later_revisions(api):
    first = upload(api, ("world.json", WORLD)).json()["books"][0]
    book_id = first["book_id"]
    assert publish(api, book_id, book("edited"), 1).status_code == 201
    assert publish(api, book_id, book("edited again"), 2).status_code == 201
    before = counts()
    again = upload(api, ("renamed.json", WORLD))
    assert again.status_code == 201
    dup = again.json()["books"][0]
    assert dup["book_id"] == book_id and dup["revision"] == 1 and dup["deduplicated"] is True
    assert dup["import_report"] == first["import_report"]
    assert counts() == before
    # One changed byte is a new file.
    changed = upload(api, ("world.json", WORLD + b" ")).json()["books"][0]
    assert changed["book_id"] != book_id and changed["deduplicated"] is False


def test_duplicate_inside_one_batch(api):
    res = upload(api, ("a.json", WORLD), ("b.json", WORLD))
    assert res.status_code == 201
    first, second = res.json()["books"]
    assert first["deduplicated"] is False and second["deduplicated"] is True
    assert first["book_id"] == second["book_id"]
    assert Book.objects.count() == 1


def test_dedupe_is_per_tenant(api, other_api):
    mine = upload(api, ("w.json", WORLD)).json()["books"][0]
    theirs = upload(other_api, ("w.json", WORLD)).json()["books"][0]
    assert theirs["deduplicated"] is False and theirs["book_id"] != mine["book_id"]


def test_one_bad_file_writes_nothing(api):
    before = counts()
    res = upload(
        api,
        ("good.json", WORLD),
        ("good.png", CARD_PNG),
        ("bad.json", b'{"entries": {"0": '),
    )
    assert res.status_code == 400 and error(res)["code"] == "invalid_json"
    assert "bad.json" in error(res)["message"]
    assert counts() == before
    # The good files were not remembered either: importing them now is not a dedupe.
    res = upload(api, ("good.json", WORLD))
    assert res.json()["books"][0]["deduplicated"] is False


TRUNCATED = card_png({"chara": b64_json(card(2, [card_entry(1)]))})[:-30]


@pytest.mark.parametrize(
    ("name", "data", "status", "code"),
    [
        ("broken.json", b"{not json", 400, "invalid_json"),
        ("latin.json", b"\xff\xfe{}", 400, "invalid_json"),
        ("array.json", b"[1, 2]", 400, "unsupported_format"),
        ("random.json", json.dumps({"hello": "world"}).encode(), 400, "unsupported_format"),
        ("native.json", json.dumps(book("n")).encode(), 400, "unsupported_format"),
        ("plain.png", card_png({"Comment": "just a picture"}), 400, "not_a_card"),
        ("fake.png", b"GIF89a not a png", 400, "invalid_png"),
        ("cut.png", TRUNCATED, 400, "invalid_png"),
        ("bomb.png", bomb_png(17 * MiB), 400, "decompression_bomb"),
        ("junk.png", card_png({"chara": "!!!not base64!!!"}), 400, "invalid_card"),
        ("v1.json", json.dumps({"name": "a", "first_mes": "hi"}).encode(), 400, "no_worldbook"),
    ],
)
def test_bad_files_are_4xx_with_the_importers_code(api, name, data, status, code):
    before = counts()
    for path, field in (("/v1/imports/preview", "file"), ("/v1/imports/files", "files")):
        res = api.post(path, {field: SimpleUploadedFile(name, data)}, format="multipart")
        assert res.status_code == status, (path, res.content)
        assert error(res)["code"] == code, error(res)
    assert counts() == before


def test_too_many_entries_and_oversized_entries(api):
    many = st_world(*[st_entry(i, content="x") for i in range(5_001)])
    before = counts()
    res = upload(api, ("many.json", many))
    assert res.status_code == 422 and error(res)["code"] == "too_many_entries"
    assert error(res)["details"] == {"count": 5001, "limit": 5000}
    huge = st_world(st_entry(0, content="x" * 200_001))
    res = upload(api, ("huge.json", huge))
    assert res.status_code == 400 and error(res)["code"] == "entry_too_large"
    assert counts() == before
    ok = st_world(*[st_entry(i, content="x") for i in range(5_000)])
    assert upload(api, ("ok.json", ok)).status_code == 201


def test_file_over_16_mib_is_413(api):
    big = b"{" + b" " * (16 * MiB) + b"}"  # 16 MiB + 2 bytes
    assert len(big) > 16 * MiB
    before = counts()
    for path, field in (("/v1/imports/preview", "file"), ("/v1/imports/files", "files")):
        res = api.post(path, {field: SimpleUploadedFile("big.json", big)}, format="multipart")
        assert res.status_code == 413 and error(res)["code"] == "file_too_large", path
    assert counts() == before


def test_file_of_exactly_16_mib_is_read(api):
    padded = WORLD + b" " * (16 * MiB - len(WORLD))
    res = upload(api, ("padded.json", padded))
    assert res.status_code == 201, res.content


def test_batch_over_48_mib_is_413(api):
    chunk = b" " * (12 * MiB + 1)
    files = [(f"f{i}.json", chunk) for i in range(4)]
    before = counts()
    res = upload(api, *files)
    assert res.status_code == 413 and error(res)["code"] == "payload_too_large"
    assert counts() == before


def test_file_count_limits(api):
    before = counts()
    res = api.post("/v1/imports/files", {}, format="multipart")
    assert res.status_code == 422 and "files" in error(res)["message"]
    eleven = [(f"w{i}.json", st_world(st_entry(0, content=f"entry {i}"))) for i in range(11)]
    res = upload(api, *eleven)
    assert 400 <= res.status_code < 500 and "error" in res.json()
    assert counts() == before
    assert upload(api, *eleven[:10]).status_code == 201


def test_file_upload_replays_with_the_same_key(api):
    first = upload(api, ("world.json", WORLD), HTTP_IDEMPOTENCY_KEY="files-1")
    assert first.status_code == 201
    replay = upload(api, ("world.json", WORLD), HTTP_IDEMPOTENCY_KEY="files-1")
    assert replay.status_code == 201 and replay.json() == {**first.json(), "replayed": True}
    other = upload(api, ("card.png", CARD_PNG), HTTP_IDEMPOTENCY_KEY="files-1")
    assert other.status_code == 409 and error(other)["code"] == "idempotency_conflict"
    assert Book.objects.count() == 1


def test_json_body_to_a_file_route_is_415(api):
    res = api.post("/v1/imports/files", {"files": []}, format="json")
    assert res.status_code == 415 and error(res)["code"] == "unsupported_media_type"


# --- native batch: POST /v1/imports ---------------------------------------------------------


def test_native_batch_creates_every_book(api):
    res = api.post("/v1/imports", {"books": [book(f"b{i}") for i in range(10)]}, format="json")
    assert res.status_code == 201 and res.json()["replayed"] is False
    created = res.json()["books"]
    assert [c["revision"] for c in created] == [1] * 10
    assert {b.name for b in Book.objects.all()} == {f"b{i}" for i in range(10)}


@pytest.mark.parametrize("books", [[], [book()] * 11, "not a list", None])
def test_native_batch_size(api, books):
    before = counts()
    res = api.post("/v1/imports", {"books": books}, format="json")
    assert res.status_code == 422 and error(res)["code"] == "validation_error"
    assert counts() == before


def test_native_batch_is_all_or_nothing(api):
    before = counts()
    batch = [book("ok"), book("also ok"), book("bad", {"id": "a", "content": "x", "oops": 1})]
    res = api.post("/v1/imports", {"books": batch}, format="json")
    assert res.status_code == 422
    err = error(res)
    assert err["details"]["errors"][0]["loc"] == "books.2.entries.0.oops"
    assert "oops" in err["message"]
    assert counts() == before


def test_native_batch_unknown_top_level_field(api):
    res = api.post("/v1/imports", {"books": [book()], "dry_run": True}, format="json")
    assert res.status_code == 422 and "dry_run" in error(res)["message"]


def test_native_batch_idempotency(api):
    payload = {"books": [book("a"), book("b")]}
    first = api.post("/v1/imports", payload, format="json", HTTP_IDEMPOTENCY_KEY="batch")
    replay = api.post("/v1/imports", payload, format="json", HTTP_IDEMPOTENCY_KEY="batch")
    assert replay.status_code == 201 and replay.json() == {**first.json(), "replayed": True}
    other = api.post(
        "/v1/imports", {"books": [book("c")]}, format="json", HTTP_IDEMPOTENCY_KEY="batch"
    )
    assert other.status_code == 409 and error(other)["code"] == "idempotency_conflict"
    assert Book.objects.count() == 2
