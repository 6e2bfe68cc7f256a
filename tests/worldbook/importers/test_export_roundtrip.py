"""Exporter: canonical native JSON, and SillyTavern files that import back to the same entries."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from wb_import_builders import st_entry, st_file, valid

from worldbook.engine.exporter import export_book
from worldbook.engine.importers import parse_import
from worldbook.engine.importers.runtime import runtime_requirements
from worldbook.engine.schema import BookIn

SEED_BOOK = {
    "name": "灰港世界设定",
    "description": "演示：常驻世界规则与按铜钥匙触发的城门规则。",
    "entries": [
        {
            "id": "greyport-background",
            "title": "灰港基本设定",
            "content": "灰港是一座蒸汽城市，城内没有电力，夜晚依靠煤气灯照明。",
            "constant": True,
            "position": "before_character",
            "audience": ["actor"],
        },
        {
            "id": "copper-key",
            "title": "铜钥匙与城门守卫",
            "content": "铜钥匙只能开启灰港城门的侧门。守卫在放行前必须核对来访者的手令。",
            "keys": ["铜钥匙", "城门"],
            "position": "before_character",
            "audience": ["actor"],
            "priority": 20,
        },
    ],
}


def roundtrip(book: dict) -> tuple[dict, dict]:
    exported = export_book(book, "sillytavern")
    result = parse_import("export.json", json.dumps(exported, ensure_ascii=False).encode())
    valid(result.book)
    return result.book, result.report


def comparable(entries: list[dict]) -> list[dict]:
    """Entries without ``source`` (import provenance, by design not exported)."""
    return [{k: v for k, v in entry.items() if k != "source"} for entry in entries]


def test_native_export_is_the_canonical_dump():
    native = export_book(SEED_BOOK, "native")
    assert native == BookIn.model_validate(SEED_BOOK).model_dump(mode="json")
    assert native["entries"][0]["exclude_recursion"] is True
    assert native["entries"][1]["probability"] == 100


def test_sillytavern_export_shape():
    exported = export_book(SEED_BOOK, "sillytavern")
    assert list(exported["entries"]) == ["0", "1"]
    first = exported["entries"]["1"]
    assert first["uid"] == 1
    assert first["key"] == ["铜钥匙", "城门"]
    assert first["comment"] == "铜钥匙与城门守卫"
    assert first["position"] == 0 and first["selectiveLogic"] == 0 and first["role"] == 0
    assert first["useProbability"] is True
    assert first["extensions"]["roleplay_native"] == {"id": "copper-key", "priority": 20}
    for field in ("automationId", "triggers", "characterFilter", "ignoreBudget", "displayIndex"):
        assert field in first


def test_seed_book_round_trips():
    book, report = roundtrip(SEED_BOOK)
    expected = BookIn.model_validate(SEED_BOOK).model_dump(mode="json")
    assert comparable(book["entries"]) == comparable(expected["entries"])
    assert book["name"] == SEED_BOOK["name"]
    assert book["description"] == SEED_BOOK["description"]
    assert report["lossy_mappings"] == []


def test_native_only_fields_survive_the_round_trip():
    entry = {
        "id": "guard-rule",
        "title": "Guards check warrants",
        "content": "@@ starts like a decorator but is plain text.",
        "required": True,
        "conditions": [{"path": "quest.started", "op": "eq", "value": True}],
        "requires": ["copper-key"],
        "conflict_key": "gate",
        "kind": "rule",
        "audience": ["actor", "director"],
        "priority": -5,
        "metadata": {"author": "ops"},
        "position": "outlet",
        "outlet_name": "scene_lore",
        "delay_until_recursion": 3,
        "use_group_scoring": True,
        "runtime_requirements": ["ejs"],
    }
    book = {**SEED_BOOK, "entries": [*SEED_BOOK["entries"], entry], "metadata": {"v": 2}}
    imported, _ = roundtrip(book)
    expected = BookIn.model_validate(book).model_dump(mode="json")
    for entry in expected["entries"]:
        # The importer's rule: an entry whose text or keys hold a runtime's syntax (EJS
        # ``<%…%>``, MVU, scripts) needs that runtime; a key like ``<%%>`` comes back so.
        texts = [entry["content"], *entry["keys"], *entry["secondary_keys"]]
        needs = set(entry["runtime_requirements"]) | set(runtime_requirements(texts))
        entry["runtime_requirements"] = sorted(needs)
    assert comparable(imported["entries"]) == comparable(expected["entries"])
    assert imported["metadata"]["v"] == 2


def test_st_file_reimports_identically_after_export():
    original = st_file(
        st_entry(3, key=["a"], content="A", automationId="auto", triggers=["normal"], order=5),
        st_entry(9, key=["/b+/i"], content="B", position=4, depth=2, role=2, sticky=2),
    )
    first = parse_import("lore.json", original)
    exported = export_book(first.book, "sillytavern")
    assert exported["entries"]["0"]["automationId"] == "auto"
    assert exported["entries"]["0"]["triggers"] == ["normal"]
    second = parse_import("lore.json", json.dumps(exported).encode())
    assert comparable(second.book["entries"]) == comparable(first.book["entries"])
    assert second.report["lossy_mappings"] == first.report["lossy_mappings"]


def test_unknown_export_format():
    with pytest.raises(ValueError):
        export_book(SEED_BOOK, "risu")  # type: ignore[arg-type]


# Text without edge whitespace in keys, and content free of the markers the runtime
# detector or the decorator parser react to, so round trips compare like for like.
_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs", "Cc")), max_size=40)
_key = _text.map(str.strip).filter(lambda k: k and "," not in k and not k.startswith("/"))
_content = st.text(alphabet="abc 铜钥匙城门\n@{}%<>/", max_size=60).filter(
    lambda c: "<%" not in c and "{{" not in c and "<" not in c
)
_entry = st.fixed_dictionaries(
    {
        "title": _text,
        "content": _content,
        "enabled": st.booleans(),
        "constant": st.booleans(),
        "required": st.booleans(),
        "keys": st.lists(_key, max_size=4, unique=True),
        "secondary_keys": st.lists(_key, max_size=3, unique=True),
        "selective": st.booleans(),
        "logic": st.sampled_from(["and_any", "and_all", "not_any", "not_all"]),
        "case_sensitive": st.booleans(),
        "match_whole_words": st.booleans(),
        "probability": st.integers(0, 100),
        "scan_depth": st.none() | st.integers(0, 100),
        "priority": st.integers(-1_000_000, 1_000_000),
        "order": st.integers(-1_000_000, 1_000_000),
        "kind": st.sampled_from(["lore", "character", "rule", "template"]),
        "position": st.sampled_from(
            [
                "before_character",
                "after_character",
                "at_depth",
                "before_examples",
                "after_examples",
                "author_note_top",
                "author_note_bottom",
            ]
        ),
        "depth": st.integers(0, 10_000),
        "role": st.sampled_from(["system", "user", "assistant"]),
        "exclude_recursion": st.booleans(),
        "prevent_recursion": st.booleans(),
        "sticky": st.none() | st.integers(0, 50),
        "cooldown": st.none() | st.integers(0, 50),
        "delay": st.none() | st.integers(0, 50),
        "delay_until_recursion": st.booleans() | st.integers(1, 100),
        "group": _text,
        "group_override": st.booleans(),
        "group_weight": st.integers(1, 1000),
        "use_group_scoring": st.none() | st.booleans(),
        "vectorized": st.booleans(),
        "metadata": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2),
    }
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_entry, max_size=5))
@example([{"content": "", "secondary_keys": ["<%%>"]}])  # found by a clean-clone run
def test_any_native_book_round_trips_through_sillytavern(entries):
    book = {
        "name": "Round trip",
        "entries": [{"id": f"e-{i}", **entry} for i, entry in enumerate(entries)],
    }
    imported, _ = roundtrip(book)
    expected = BookIn.model_validate(book).model_dump(mode="json")
    for entry in expected["entries"]:
        # The importer's rule: an entry whose text or keys hold a runtime's syntax (EJS
        # ``<%…%>``, MVU, scripts) needs that runtime; a key like ``<%%>`` comes back so.
        texts = [entry["content"], *entry["keys"], *entry["secondary_keys"]]
        needs = set(entry["runtime_requirements"]) | set(runtime_requirements(texts))
        entry["runtime_requirements"] = sorted(needs)
    assert comparable(imported["entries"]) == comparable(expected["entries"])
