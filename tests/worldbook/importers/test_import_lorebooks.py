"""NovelAI, Agnai and RisuAI lorebooks arrive as SillyTavern imports them, with what they
carry beyond it: constant entries, Agnai's priority, RisuAI's regex keys and folders."""

from __future__ import annotations

import json

import pytest
from wb_import_builders import valid

from worldbook.engine.importers import ImportFailure, parse_import

NOVELAI = {
    "lorebookVersion": 5,
    "entries": [
        {
            "text": "The tower is older than the town.",
            "contextConfig": {"prefix": "", "suffix": "\n", "budgetPriority": 250,
                              "insertionPosition": -1},
            "lastUpdatedAt": 1649000000000,
            "displayName": "Tower",
            "id": "0b1c",
            "keys": ["tower", "/spire/i"],
            "searchRange": 1000,
            "enabled": True,
            "forceActivation": False,
            "keyRelative": False,
            "nonStoryActivatable": False,
            "category": "",
            "loreBiasGroups": [],
        },
        {"text": "Greyport is a harbour town.", "keys": [], "displayName": "Greyport",
         "forceActivation": True},
        {"text": "Switched off.", "keys": ["off"], "enabled": False},
    ],
    "settings": {"orderByKeyLocations": False},
    "categories": [],
}  # fmt: skip

AGNAI = {
    "kind": "memory",
    "name": "Harbour lore",
    "description": "What the harbour knows.",
    "entries": [
        {"name": "Fog", "entry": "Fog rolls in every night.", "keywords": ["fog", "mist"],
         "priority": 5, "weight": 3, "enabled": True},
        {"name": "Old", "entry": "Unused.", "keywords": ["old"], "priority": 0, "weight": 0,
         "enabled": False},
    ],
}  # fmt: skip

RISU = {
    "type": "risu",
    "ver": 1,
    "data": [
        {"key": "lamp, light ,", "secondkey": "night", "insertorder": 120, "comment": "Lamp",
         "content": "The lamp is lit at dusk.", "mode": "multiple", "alwaysActive": False,
         "selective": True, "extentions": {}, "activationPercent": 50, "loreCache": None,
         "useRegex": False, "bookVersion": 2, "id": "a"},
        {"key": "", "comment": "Folder", "content": "", "mode": "folder", "id": "f"},
        {"key": "l[ae]mp(s)?", "comment": "Regex", "content": "Lamps.", "mode": "normal",
         "useRegex": True},
        {"key": "", "comment": "Always", "content": "It is winter.", "mode": "constant"},
    ],
}  # fmt: skip


def parse(name: str, obj: dict):
    result = parse_import(name, json.dumps(obj).encode())
    valid(result.book)
    return result


def test_a_novelai_lorebook():
    result = parse("Greyport.lorebook", NOVELAI)
    assert result.format == "novelai" and result.book["name"] == "Greyport"
    tower, town, off = result.book["entries"]
    assert tower["title"] == "Tower" and tower["keys"] == ["tower", "/spire/i"]
    assert tower["content"] == "The tower is older than the town." and tower["order"] == 250
    assert tower["enabled"] and not tower["constant"]
    assert tower["source"]["format"] == "novelai"
    assert tower["source"]["fields"]["contextConfig"]["insertionPosition"] == -1
    assert town["constant"] and town["enabled"] and town["order"] == 400
    assert not off["enabled"]
    codes = {warning["code"] for warning in result.report["warnings"]}
    assert "fields_kept_in_source" in codes
    assert result.report["entry_count"] == result.report["imported_count"] == 3


def test_an_agnai_memory_book():
    result = parse("agnai.json", AGNAI)
    assert result.format == "agnai"
    assert result.book["name"] == "Harbour lore"
    assert result.book["description"] == "What the harbour knows."
    fog, old = result.book["entries"]
    assert (fog["title"], fog["keys"], fog["content"]) == (
        "Fog",
        ["fog", "mist"],
        "Fog rolls in every night.",
    )
    assert (fog["order"], fog["priority"], fog["enabled"]) == (3, 5, True)
    assert not old["enabled"]
    assert fog["source"] == {"format": "agnai", "fields": {}}


def test_a_risuai_lorebook():
    result = parse("risu.json", RISU)
    assert result.format == "risuai"
    lamp, regex, always = result.book["entries"]
    assert lamp["keys"] == ["lamp", "light"] and lamp["secondary_keys"] == ["night"]
    assert lamp["selective"] and lamp["order"] == 120 and lamp["probability"] == 50
    assert regex["keys"] == ["/l[ae]mp(s)?/"]
    assert always["constant"]
    assert result.report["entry_count"] == 4 and result.report["imported_count"] == 3
    codes = [warning["code"] for warning in result.report["warnings"]]
    assert "folder_skipped" in codes


@pytest.mark.parametrize(
    "obj",
    [
        {"lorebookVersion": 5, "entries": {"a": 1}},
        {"kind": "memory", "name": "x"},
        {"type": "risu", "data": "nope"},
    ],
)
def test_a_lorebook_without_its_entry_list_is_refused(obj):
    with pytest.raises(ImportFailure) as caught:
        parse_import("x.json", json.dumps(obj).encode())
    assert caught.value.code == "unsupported_format"


def test_odd_values_are_read_leniently_never_raised():
    odd = {
        "lorebookVersion": 5,
        "entries": [
            7,
            {"text": 3, "keys": "tower", "displayName": ["x"], "contextConfig": "y",
             "enabled": "yes"},
        ],
    }  # fmt: skip
    result = parse("odd.lorebook", odd)
    assert result.report["imported_count"] == 1
    (entry,) = result.book["entries"]
    assert (entry["content"], entry["keys"], entry["title"]) == ("3", ["tower"], "")
    risu = {"type": "risu", "data": [{"key": 5, "secondkey": None, "insertorder": "x"}]}
    assert parse("r.json", risu).report["imported_count"] == 1


def test_too_many_entries_is_refused():
    obj = {"kind": "memory", "entries": [{"entry": "x"}] * 5001}
    with pytest.raises(ImportFailure) as caught:
        parse_import("big.json", json.dumps(obj).encode())
    assert caught.value.code == "too_many_entries"
