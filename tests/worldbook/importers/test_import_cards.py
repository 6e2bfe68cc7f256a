"""CCv2/CCv3 card JSON -> native book of the embedded character_book."""

from __future__ import annotations

import json

import pytest
from wb_import_builders import card, card_entry, entry_by_id, valid

from worldbook.engine.importers import ImportFailure, parse_import


def parse_card_json(value, filename="guard.json"):
    result = parse_import(filename, json.dumps(value, ensure_ascii=False).encode())
    valid(result.book)
    return result


def test_ccv2_card_maps_entries_and_names_the_book_after_the_card():
    book = {"entries": [card_entry(0), card_entry(1, position="after_char", enabled=False)]}
    result = parse_card_json(card("chara_card_v2", book))
    assert result.format == "ccv2"
    assert result.report["format"] == "ccv2"
    assert result.book["name"] == "Guard worldbook"
    first = entry_by_id(result.book, "0")
    assert first["keys"] == ["gate"]
    assert first["title"] == "Gate"
    assert first["order"] == 10
    assert first["position"] == "before_character"
    assert first["exclude_recursion"] is False
    second = entry_by_id(result.book, "1")
    assert (second["position"], second["enabled"]) == ("after_character", False)
    assert result.book["metadata"]["card_name"] == "Guard"
    assert result.report["lossy_mappings"] == []


def test_book_name_prefers_character_book_name():
    result = parse_card_json(card("chara_card_v2", {"name": "灰港", "entries": [card_entry(0)]}))
    assert result.book["name"] == "灰港"


def test_extensions_carry_st_fields():
    extensions = {
        "position": 4,
        "depth": 1,
        "role": 1,
        "probability": 25,
        "useProbability": True,
        "selectiveLogic": 2,
        "group": "doors",
        "group_override": True,
        "group_weight": 7,
        "exclude_recursion": True,
        "prevent_recursion": True,
        "delay_until_recursion": True,
        "scan_depth": 3,
        "match_whole_words": True,
        "case_sensitive": True,
        "use_group_scoring": False,
        "sticky": 4,
        "cooldown": 5,
        "delay": 6,
        "vectorized": True,
        "display_index": 3,
    }
    entry = card_entry(9, extensions=extensions, priority=12, selective=True)
    got = parse_card_json(card("chara_card_v3", {"entries": [entry]})).book["entries"][0]
    assert got["position"] == "at_depth"
    assert (got["depth"], got["role"], got["probability"]) == (1, "user", 25)
    assert (got["logic"], got["selective"], got["priority"]) == ("not_any", True, 12)
    assert (got["group"], got["group_override"], got["group_weight"]) == ("doors", True, 7)
    assert (got["exclude_recursion"], got["prevent_recursion"]) == (True, True)
    assert got["delay_until_recursion"] is True
    assert (got["scan_depth"], got["match_whole_words"], got["case_sensitive"]) == (3, True, True)
    assert (got["sticky"], got["cooldown"], got["delay"]) == (4, 5, 6)
    assert got["use_group_scoring"] is False
    assert got["vectorized"] is True
    assert got["source"]["format"] == "ccv3"


def test_unknown_and_unsupported_extension_fields_are_reported_with_card_names():
    entry = card_entry(
        0,
        extensions={"automation_id": "a1", "ignore_budget": False, "other_tool": {"x": 1}},
        insertion_order=9_999_999,
    )
    result = parse_card_json(card("chara_card_v2", {"entries": [entry]}))
    fields = {m["field"] for m in result.report["lossy_mappings"]}
    assert fields == {"extensions.automation_id", "extensions.other_tool", "insertion_order"}
    kept = result.book["entries"][0]["source"]["fields"]
    assert kept["extensions.other_tool"] == {"x": 1}


def test_use_regex_rewrites_keys_as_slash_patterns():
    entry = card_entry(0, keys=["gate(s)?", "/door/"], use_regex=True, case_sensitive=False)
    result = parse_card_json(card("chara_card_v3", {"entries": [entry]}))
    assert result.book["entries"][0]["keys"] == ["/gate(s)?/i", "/door/"]
    assert result.report["lossy_mappings"][0]["reason"].startswith("use_regex")


def test_comment_falls_back_to_name_for_the_title():
    entry = card_entry(0, comment="", name="Side gate")
    assert (
        parse_card_json(card("chara_card_v2", {"entries": [entry]})).book["entries"][0]["title"]
        == "Side gate"
    )


def test_missing_position_is_after_char_like_sillytavern():
    entry = card_entry(0)
    del entry["position"]
    got = parse_card_json(card("chara_card_v2", {"entries": [entry]})).book["entries"][0]
    assert got["position"] == "after_character"


def test_missing_ids_and_duplicate_ids_become_unique():
    entries = [card_entry(1), card_entry(1), {"keys": ["x"], "content": "no id"}]
    ids = [
        e["id"]
        for e in parse_card_json(card("chara_card_v2", {"entries": entries})).book["entries"]
    ]
    assert ids == ["1", "1~2", "2"]


def test_book_level_settings_go_to_metadata_with_a_warning():
    book = {"entries": [card_entry(0)], "scan_depth": 5, "token_budget": 900}
    result = parse_card_json(card("chara_card_v2", book))
    assert result.book["metadata"]["character_book"] == {"scan_depth": 5, "token_budget": 900}
    assert "book_settings_not_applied" in {w["code"] for w in result.report["warnings"]}


def test_card_without_character_book_is_no_worldbook():
    with pytest.raises(ImportFailure) as info:
        parse_import("guard.json", json.dumps(card("chara_card_v2", None)).encode())
    assert info.value.code == "no_worldbook"


def test_ccv1_card_is_no_worldbook():
    v1 = {"name": "Guard", "description": "d", "first_mes": "Halt.", "personality": ""}
    with pytest.raises(ImportFailure) as info:
        parse_import("guard.json", json.dumps(v1).encode())
    assert info.value.code == "no_worldbook"


def test_card_with_broken_book_is_invalid_card():
    broken = card("chara_card_v2", {"entries": "nope"})
    with pytest.raises(ImportFailure) as info:
        parse_import("guard.json", json.dumps(broken).encode())
    assert info.value.code == "invalid_card"


def test_card_with_empty_book_imports_an_empty_book():
    result = parse_card_json(card("chara_card_v3", {"entries": []}))
    assert result.book["entries"] == []


def test_bare_character_book_reads_as_ccv2():
    bare = {"name": "Loose book", "entries": [card_entry(0)]}
    result = parse_card_json(bare, filename="book.json")
    assert result.format == "ccv2"
    assert result.book["name"] == "Loose book"
    assert "bare_character_book" in {w["code"] for w in result.report["warnings"]}


def test_card_entry_count_limit():
    big = card("chara_card_v2", {"entries": [card_entry(i) for i in range(5001)]})
    with pytest.raises(ImportFailure) as info:
        parse_import("guard.json", json.dumps(big).encode())
    assert info.value.code == "too_many_entries"


def test_unknown_card_spec_is_unsupported():
    with pytest.raises(ImportFailure) as info:
        parse_import("x.json", json.dumps({"spec": "chara_card_v9", "data": {}}).encode())
    assert info.value.code == "unsupported_format"
