"""``POST /v1/imports/preview``: every accepted format is normalized and nothing is written.

SillyTavern world info (entries as an object and as an array), CCv2/CCv3 cards as JSON and as
PNG (``chara``/``ccv3`` text chunks written by Pillow, plain and zTXt-compressed).
"""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from tests.worldbook.api.wb_api_helpers import (
    b64_json,
    card,
    card_png,
    counts,
    error,
    st_entry,
    st_world,
)
from tests.worldbook.importers.wb_import_builders import card_entry

pytestmark = pytest.mark.django_db

GATE = st_entry(
    0,
    key=["gate", "城门"],
    keysecondary=["night"],
    comment="Gate rule",
    content="The gate is shut at night.",
    selectiveLogic=3,
    position=4,
    depth=2,
    role=1,
    order=30,
    probability=40,
    caseSensitive=True,
    matchWholeWords=True,
    sticky=2,
    cooldown=1,
    delay=3,
    group="doors",
    groupOverride=True,
    groupWeight=7,
    scanDepth=5,
)
WORLD_CONST = st_entry(1, constant=True, comment="World", content="Greyport runs on steam.")
BLOCKED = st_entry(2, key=["stat"], content="<% if (x) { %>hp<% } %>", comment="EJS panel")


def preview(api, name: str, data: bytes):
    upload = SimpleUploadedFile(name, data)
    return api.post("/v1/imports/preview", {"file": upload}, format="multipart")


def previewed(api, name: str, data: bytes) -> dict:
    before = counts()
    res = preview(api, name, data)
    assert res.status_code == 200, res.content
    assert counts() == before  # a preview writes nothing
    return res.json()


@pytest.mark.parametrize("as_array", [False, True])
def test_sillytavern_world_info_fields_are_mapped(api, as_array):
    body = previewed(api, "greyport.json", st_world(GATE, WORLD_CONST, BLOCKED, as_array=as_array))
    book = body["book"]
    assert book["name"] == "greyport"
    gate = book["entries"][0]
    assert gate["keys"] == ["gate", "城门"] and gate["secondary_keys"] == ["night"]
    assert gate["title"] == "Gate rule" and gate["content"] == "The gate is shut at night."
    assert gate["logic"] == "and_all" and gate["position"] == "at_depth" and gate["depth"] == 2
    assert gate["role"] == "user" and gate["order"] == 30 and gate["probability"] == 40
    assert gate["case_sensitive"] is True and gate["match_whole_words"] is True
    assert (gate["sticky"], gate["cooldown"], gate["delay"]) == (2, 1, 3)
    assert gate["group"] == "doors" and gate["group_override"] is True
    assert gate["group_weight"] == 7 and gate["scan_depth"] == 5
    assert book["entries"][1]["constant"] is True

    report = body["import_report"]
    assert report["format"] == "sillytavern"
    assert report["entry_count"] == report["imported_count"] == 3
    assert report["runtime_blocked_count"] == 1
    assert report["runtime_blocked"][0]["reasons"] == ["ejs"]
    assert report["runtime_blocked"][0]["title"] == "EJS panel"
    assert isinstance(report["lossy_mappings"], list) and isinstance(report["warnings"], list)
    assert len(body["sha256"]) == 64
    assert book["entries"][2]["runtime_requirements"] == ["ejs"]


def test_preview_reports_lossy_mappings(api):
    entry = st_entry(0, key=["gate", "/(?<=a b/"], content="{{random::a,b}} at the gate")
    body = previewed(api, "lossy.json", st_world(entry))
    # No engine compiles an unclosed look-behind: the key is dropped and the report says so.
    assert body["book"]["entries"][0]["keys"] == ["gate"]
    report = body["import_report"]
    assert report["lossy_count"] >= 2
    assert all({"entry_id", "field", "reason"} <= set(m) for m in report["lossy_mappings"])
    dropped = [m for m in report["lossy_mappings"] if m["value"] == "/(?<=a b/"]
    assert dropped and dropped[0]["entry_id"] == "0" and "cannot run" in dropped[0]["reason"]


def test_outlet_entry_without_a_name_imports_disabled(api):
    entry = st_entry(0, key=["a"], content="panel text", position=7, outletName="")
    body = previewed(api, "outlet.json", st_world(entry))
    assert body["book"]["entries"][0]["enabled"] is False


@pytest.mark.parametrize("version", [2, 3])
def test_character_card_json(api, version):
    entries = [card_entry(1), card_entry(2, keys=["tower"], content="The tower.", constant=True)]
    data = json.dumps(card(version, entries)).encode()
    body = previewed(api, "guard.json", data)
    assert body["import_report"]["format"] == f"ccv{version}"
    contents = [e["content"] for e in body["book"]["entries"]]
    assert contents == ["The gate is shut at night.", "The tower."]
    assert body["book"]["entries"][1]["constant"] is True
    assert body["book"]["entries"][0]["keys"] == ["gate"]


@pytest.mark.parametrize(
    ("chunks", "fmt"),
    [
        ({"chara": b64_json(card(2, [card_entry(1)]))}, "ccv2"),
        ({"ccv3": b64_json(card(3, [card_entry(1)]))}, "ccv3"),
        # Both present: ccv3 is preferred (tools often leave a stale chara behind).
        (
            {
                "chara": b64_json(card(2, [card_entry(1, content="stale")])),
                "ccv3": b64_json(card(3, [card_entry(1)])),
            },
            "ccv3",
        ),
    ],
)
def test_character_card_png(api, chunks, fmt):
    body = previewed(api, "guard.png", card_png(chunks))
    assert body["import_report"]["format"] == fmt
    assert [e["content"] for e in body["book"]["entries"]] == ["The gate is shut at night."]


def test_compressed_card_chunk(api):
    png = card_png({"chara": b64_json(card(2, [card_entry(1)]))}, compressed=True)
    assert b"zTXt" in png
    body = previewed(api, "z.png", png)
    assert body["book"]["entries"][0]["keys"] == ["gate"]


def test_preview_rejects_what_publish_would_reject(api):
    # An exported native entry travels in ST's extensions; its ``requires`` is checked.
    entry = st_entry(0, key=["a"], content="x")
    entry["extensions"] = {"roleplay_native": {"id": "a", "requires": ["ghost"]}}
    res = preview(api, "deps.json", st_world(entry))
    assert res.status_code == 422 and error(res)["code"] == "dependency_missing"
    assert error(res)["details"]["missing"] == [{"entry_id": "a", "requires": "ghost"}]


def test_preview_needs_exactly_one_file(api):
    res = api.post("/v1/imports/preview", {}, format="multipart")
    assert res.status_code == 422 and "file" in error(res)["message"]
    two = {"file": [SimpleUploadedFile("a.json", b"{}"), SimpleUploadedFile("b.json", b"{}")]}
    res = api.post("/v1/imports/preview", two, format="multipart")
    assert res.status_code == 422
