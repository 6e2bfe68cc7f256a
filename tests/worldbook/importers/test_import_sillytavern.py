"""SillyTavern world-info JSON -> native book: every field, the report and the failures."""

from __future__ import annotations

import json

import pytest
from wb_import_builders import entry_by_id, st_entry, st_file, valid

from worldbook.engine.importers import ImportFailure, parse_import
from worldbook.engine.schema import validate_book_for_publish


def imported(data: bytes, filename: str = "Grey Port.json"):
    result = parse_import(filename, data)
    valid(result.book)
    return result


def test_seed_example_maps_every_field_and_validates():
    entry = st_entry(
        7,
        key=["铜钥匙", "城门"],
        keysecondary=["守卫"],
        comment="铜钥匙与城门守卫",
        content="铜钥匙只能开启灰港城门的侧门。{{char}} 对 {{user}} 说：手令呢？",
        selectiveLogic=3,
        order=250,
        position=4,
        depth=2,
        role=2,
        excludeRecursion=True,
        preventRecursion=False,
        delayUntilRecursion=2,
        probability=40,
        group="gate,keys",
        groupOverride=True,
        groupWeight=30,
        useGroupScoring=True,
        scanDepth=6,
        caseSensitive=True,
        matchWholeWords=True,
        sticky=3,
        cooldown=2,
        delay=1,
        vectorized=True,
    )
    result = imported(st_file(entry))
    assert result.format == "sillytavern"
    assert result.book["name"] == "Grey Port"
    got = entry_by_id(result.book, "7")
    expected = {
        "title": "铜钥匙与城门守卫",
        "content": "铜钥匙只能开启灰港城门的侧门。{{char}} 对 {{user}} 说：手令呢？",
        "keys": ["铜钥匙", "城门"],
        "secondary_keys": ["守卫"],
        "enabled": True,
        "constant": False,
        "selective": True,
        "logic": "and_all",
        "order": 250,
        "priority": 0,
        "position": "at_depth",
        "depth": 2,
        "role": "assistant",
        "exclude_recursion": True,
        "prevent_recursion": False,
        "delay_until_recursion": 2,
        "probability": 40,
        "group": "gate,keys",
        "group_override": True,
        "group_weight": 30,
        "use_group_scoring": True,
        "scan_depth": 6,
        "case_sensitive": True,
        "match_whole_words": True,
        "sticky": 3,
        "cooldown": 2,
        "delay": 1,
        "vectorized": True,
        "runtime_requirements": [],
    }
    assert {key: got.get(key, "<default>") for key in expected} == expected
    assert got["source"]["format"] == "sillytavern"
    assert got["source"]["uid"] == 7
    assert result.report["lossy_mappings"] == []
    assert result.report["runtime_blocked_count"] == 0
    assert result.report["entry_count"] == result.report["imported_count"] == 1
    assert result.report["source_sha256"] == result.sha256
    assert result.book["metadata"]["import"]["source_sha256"] == result.sha256


@pytest.mark.parametrize(
    ("number", "logic"), [(0, "and_any"), (1, "not_all"), (2, "not_any"), (3, "and_all")]
)
def test_selective_logic_numbers(number, logic):
    book = imported(st_file(st_entry(0, content="x", selectiveLogic=number))).book
    assert book["entries"][0]["logic"] == logic


@pytest.mark.parametrize(
    ("number", "position"),
    [
        (0, "before_character"),
        (1, "after_character"),
        (2, "author_note_top"),
        (3, "author_note_bottom"),
        (4, "at_depth"),
        (5, "before_examples"),
        (6, "after_examples"),
        (7, "outlet"),
    ],
)
def test_positions(number, position):
    entry = st_entry(0, content="x", position=number, outletName="scene_lore")
    got = imported(st_file(entry)).book["entries"][0]
    assert got["position"] == position
    assert got["outlet_name"] == "scene_lore"


@pytest.mark.parametrize(("number", "role"), [(0, "system"), (1, "user"), (2, "assistant")])
def test_roles(number, role):
    assert (
        imported(st_file(st_entry(0, content="x", role=number))).book["entries"][0]["role"] == role
    )


def test_st_defaults_differ_from_native_defaults():
    got = imported(st_file(st_entry(0, content="x"))).book["entries"][0]
    # ST's recursion defaults are kept (native would be True), ST's depth default is 4.
    assert got["exclude_recursion"] is False
    assert got["prevent_recursion"] is False
    assert got["depth"] == 4
    assert got["selective"] is True
    assert got["match_whole_words"] is False
    assert got["case_sensitive"] is False
    assert got["use_group_scoring"] is None
    assert got["scan_depth"] is None
    assert got["order"] == 100


def test_use_probability_false_means_always():
    entry = st_entry(0, content="x", probability=5, useProbability=False)
    assert imported(st_file(entry)).book["entries"][0]["probability"] == 100


def test_disable_and_constant():
    got = imported(st_file(st_entry(0, content="x", disable=True, constant=True))).book
    assert got["entries"][0]["enabled"] is False
    assert got["entries"][0]["constant"] is True


def test_entries_as_array_and_minimal_entries():
    data = {"entries": [{"key": "a, b ,", "content": "one"}, {"uid": 5, "content": "two"}]}
    result = imported(json.dumps(data).encode())
    assert [e["id"] for e in result.book["entries"]] == ["0", "5"]
    assert result.book["entries"][0]["keys"] == ["a", "b"]


def test_uid_collisions_are_resolved_deterministically():
    data = {"entries": {"a": {"uid": 1, "content": "x"}, "b": {"uid": 1, "content": "y"}}}
    first = imported(json.dumps(data).encode())
    second = imported(json.dumps(data).encode())
    ids = [e["id"] for e in first.book["entries"]]
    assert ids == ["1", "1~2"]
    assert ids == [e["id"] for e in second.book["entries"]]
    assert any(w["code"] == "entry_id_changed" for w in first.report["warnings"])


def test_long_uid_is_cut_to_150_chars_and_kept_unique():
    data = {"entries": [{"uid": "u" * 400, "content": "x"}, {"uid": "u" * 400, "content": "y"}]}
    ids = [e["id"] for e in imported(json.dumps(data).encode()).book["entries"]]
    assert all(len(i) <= 150 for i in ids)
    assert len(set(ids)) == 2


def test_unsupported_fields_are_lossy_only_when_not_default():
    entry = st_entry(
        3,
        content="x",
        automationId="auto-1",
        triggers=["normal"],
        ignoreBudget=True,
        matchPersonaDescription=True,
        characterFilter={"isExclude": True, "names": ["Alice"], "tags": []},
        addMemo=False,
        displayIndex=9,
        mystery="?",
    )
    result = imported(st_file(entry))
    lossy = {m["field"]: m for m in result.report["lossy_mappings"]}
    assert set(lossy) == {
        "automationId",
        "triggers",
        "ignoreBudget",
        "matchPersonaDescription",
        "characterFilter",
        "mystery",
    }
    assert lossy["automationId"]["entry_id"] == "3"
    assert lossy["mystery"]["reason"].startswith("unknown field")
    fields = result.book["entries"][0]["source"]["fields"]
    assert fields["automationId"] == "auto-1"
    assert fields["displayIndex"] == 9


def test_default_valued_unsupported_fields_are_not_reported():
    assert imported(st_file(st_entry(0, content="x"))).report["lossy_mappings"] == []


def test_regex_keys_are_kept_as_written_and_ones_that_cannot_run_dropped():
    keys = ["/gate(s)?/i", "/(?<=a)b/", "/(?<=a b/", "plain"]
    result = imported(st_file(st_entry(0, content="x", key=keys)))
    assert result.book["entries"][0]["keys"] == ["/gate(s)?/i", "/(?<=a)b/", "plain"]
    [dropped] = result.report["lossy_mappings"]
    assert dropped["field"] == "key" and dropped["value"] == "/(?<=a b/"
    validate_book_for_publish(valid(result.book))  # publishable as imported


def test_out_of_range_values_are_clamped_and_reported():
    entry = st_entry(0, content="x", order=5_000_000, probability=150, scanDepth=1000)
    result = imported(st_file(entry))
    got = result.book["entries"][0]
    assert (got["order"], got["probability"], got["scan_depth"]) == (1_000_000, 100, 100)
    assert {m["field"] for m in result.report["lossy_mappings"]} == {
        "order",
        "probability",
        "scanDepth",
    }


def test_loose_types_are_coerced():
    entry = st_entry(0, content=12, order="7", constant="true", disable=0, probability=33.0)
    got = imported(st_file(entry)).book["entries"][0]
    assert (got["content"], got["order"], got["constant"], got["enabled"]) == ("12", 7, True, True)
    assert got["probability"] == 33


def test_title_over_500_chars_is_truncated_and_reported():
    result = imported(st_file(st_entry(0, content="x", comment="t" * 600)))
    assert len(result.book["entries"][0]["title"]) == 500
    assert result.report["lossy_mappings"][0]["field"] == "comment"


def test_too_many_keys_keeps_the_first_200():
    entry = st_entry(0, content="x", key=[f"k{i}" for i in range(250)])
    result = imported(st_file(entry))
    assert result.book["entries"][0]["keys"] == [f"k{i}" for i in range(200)]


def test_outlet_without_name_is_disabled_and_reported():
    result = imported(st_file(st_entry(0, content="x", position=7, outletName="")))
    assert result.book["entries"][0]["enabled"] is False
    assert result.report["lossy_mappings"][0]["field"] == "outletName"


def test_decorators_are_stripped_and_mapped():
    content = "@@depth 3\n@@dont_activate\nThe real text."
    got = imported(st_file(st_entry(0, content=content))).book["entries"][0]
    assert got["content"] == "The real text."
    assert (got["position"], got["depth"], got["enabled"]) == ("at_depth", 3, False)
    escaped = imported(st_file(st_entry(0, content="@@@depth is literal"))).book
    assert escaped["entries"][0]["content"] == "@@depth is literal"


def test_other_macros_are_reported_but_char_user_are_not():
    result = imported(st_file(st_entry(0, content="{{char}} rolls {{roll:d20}} for {{user}}")))
    [macro] = result.report["lossy_mappings"]
    assert macro["value"] == ["{{roll}}"]
    assert result.book["entries"][0]["content"] == "{{char}} rolls {{roll:d20}} for {{user}}"


def test_non_object_entries_are_skipped_with_a_warning():
    result = imported(json.dumps({"entries": {"0": "junk", "1": {"content": "ok"}}}).encode())
    assert result.report["entry_count"] == 2
    assert result.report["imported_count"] == 1


def test_empty_book_is_allowed_with_a_warning():
    result = imported(b'{"entries": {}}', filename="empty.json")
    assert result.book["entries"] == []
    assert result.book["name"] == "empty"
    assert [w["code"] for w in result.report["warnings"]] == ["empty_book"]


def test_book_name_falls_back_and_is_bounded():
    result = imported(b'{"entries": {}}', filename="C:\\books\\" + "n" * 400 + ".json")
    assert len(result.book["name"]) == 300


def test_content_over_the_limit_fails_the_import():
    with pytest.raises(ImportFailure) as info:
        parse_import("big.json", st_file(st_entry(0, content="x" * 200_001)))
    assert info.value.code == "entry_too_large"
    assert info.value.details["entry_id"] == "0"


def test_too_many_entries():
    data = {"entries": [{"key": [], "content": "x"} for _ in range(5001)]}
    with pytest.raises(ImportFailure) as info:
        parse_import("many.json", json.dumps(data).encode())
    assert info.value.code == "too_many_entries"


def test_exactly_5000_entries_import():
    data = {"entries": [{"content": f"e{i}", "key": [f"k{i}"]} for i in range(5000)]}
    result = imported(json.dumps(data).encode())
    assert result.report["imported_count"] == 5000


@pytest.mark.parametrize(
    "payload",
    [b"", b"{", b"\xff\xfe{}", b'{"entries": NaN}', b"[" * 100_000 + b"]" * 100_000],
)
def test_invalid_json(payload):
    with pytest.raises(ImportFailure) as info:
        parse_import("bad.json", payload)
    assert info.value.code == "invalid_json"


def test_file_too_large():
    with pytest.raises(ImportFailure) as info:
        parse_import("big.json", b" " * 101, max_bytes=100)
    assert info.value.code == "file_too_large"
    assert info.value.details == {"size": 101, "limit": 100}


@pytest.mark.parametrize(
    "payload",
    [
        {"name": "灰港世界设定", "entries": [{"id": "a", "title": "t", "content": "c"}]},
        {"books": [{"name": "x", "entries": []}]},
        {"name": "x", "description": "d", "entries": []},
    ],
)
def test_native_json_is_rejected_with_a_hint(payload):
    with pytest.raises(ImportFailure) as info:
        parse_import("native.json", json.dumps(payload).encode())
    assert info.value.code == "unsupported_format"
    assert "/v1/books" in info.value.message


@pytest.mark.parametrize(
    "payload", [[1, 2], {"hello": "world"}, {"lorebookVersion": 5}, {"type": "risu"}, "text"]
)
def test_unsupported_json(payload):
    with pytest.raises(ImportFailure) as info:
        parse_import("x.json", json.dumps(payload).encode())
    assert info.value.code == "unsupported_format"


def test_failure_serialises_for_the_api():
    with pytest.raises(ImportFailure) as info:
        parse_import("x.json", b"[]")
    body = info.value.to_dict()
    assert body["code"] == "unsupported_format" and isinstance(body["message"], str)
