"""``GET /v1/books/{id}/revisions/{n}/export``: native and SillyTavern, and the round trip back
through ``POST /v1/books`` and ``POST /v1/imports/files``."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.worldbook.api.wb_api_helpers import book, create, entry, error, publish

pytestmark = pytest.mark.django_db

RICH = book(
    "灰港 export",
    entry(
        "gate",
        "铜钥匙只能开启灰港城门的侧门。",
        title="城门",
        keys=["铜钥匙", "/gat(e|es)/i"],
        secondary_keys=["守卫"],
        selective=True,
        logic="not_any",
        case_sensitive=True,
        match_whole_words=True,
        probability=70,
        scan_depth=3,
        priority=5,
        order=-20,
        position="at_depth",
        depth=2,
        role="assistant",
        sticky=2,
        cooldown=1,
        delay=1,
        group="doors,gates",
        group_override=True,
        group_weight=9,
        requires=["world"],
        conditions=[{"path": "quest.started", "op": "eq", "value": True}],
        conflict_key="gate-rule",
        audience=["actor", "narrator"],
        kind="rule",
        runtime_requirements=["ejs"],
        metadata={"author": "ops"},
    ),
    entry("world", "@@ starts with decorators", constant=True, required=True),
    entry("off", "disabled entry", enabled=False, exclude_recursion=False),
    description="A book with most fields set.",
    metadata={"tags": ["demo"]},
)


def export(api, book_id: str, revision: int, fmt: str | None):
    query = f"?format={fmt}" if fmt else ""
    return api.get(f"/v1/books/{book_id}/revisions/{revision}/export{query}")


def test_native_export_reimports_to_the_same_content_hash(api):
    book_id = create(api, RICH)["book_id"]
    original = api.get(f"/v1/books/{book_id}/revisions/1").json()
    exported = export(api, book_id, 1, None)
    assert exported.status_code == 200
    assert exported.json() == export(api, book_id, 1, "native").json()
    assert exported.json() == original["book"]
    copy_id = create(api, exported.json())["book_id"]
    copy = api.get(f"/v1/books/{copy_id}/revisions/1").json()
    assert copy["content_hash"] == original["content_hash"]


def _without_provenance(entries: list[dict]) -> list[dict]:
    return [{k: v for k, v in e.items() if k != "source"} for e in entries]


def test_sillytavern_export_round_trips_through_file_import(api):
    book_id = create(api, RICH)["book_id"]
    exported = export(api, book_id, 1, "sillytavern")
    assert exported.status_code == 200
    st = exported.json()
    assert set(st["entries"]) == {"0", "1", "2"}
    gate = st["entries"]["0"]
    assert gate["key"] == ["铜钥匙", "/gat(e|es)/i"] and gate["keysecondary"] == ["守卫"]
    assert gate["disable"] is False and st["entries"]["2"]["disable"] is True
    assert st["entries"]["1"]["content"].startswith("@@@")  # ST's decorator escape

    data = json.dumps(st, ensure_ascii=False).encode("utf-8")
    res = api.post(
        "/v1/imports/files",
        {"files": [SimpleUploadedFile("export.json", data)]},
        format="multipart",
    )
    assert res.status_code == 201, res.content
    imported = res.json()["books"][0]
    assert imported["import_report"]["format"] == "sillytavern"
    assert imported["import_report"]["runtime_blocked_count"] == 1  # "ejs" is kept
    back = api.get(f"/v1/books/{imported['book_id']}/revisions/1").json()["book"]
    original = api.get(f"/v1/books/{book_id}/revisions/1").json()["book"]
    assert back["name"] == original["name"] and back["description"] == original["description"]
    assert _without_provenance(back["entries"]) == _without_provenance(original["entries"])


def test_export_of_an_old_revision(api):
    book_id = create(api, book("v1", entry("a", "first")))["book_id"]
    assert publish(api, book_id, book("v2", entry("a", "second")), 1).status_code == 201
    assert export(api, book_id, 1, "native").json()["entries"][0]["content"] == "first"
    assert export(api, book_id, 2, "native").json()["entries"][0]["content"] == "second"


def test_unknown_export_format_is_400(api):
    book_id = create(api)["book_id"]
    res = export(api, book_id, 1, "novelai")
    assert res.status_code == 400 and error(res)["code"] == "invalid_format"
