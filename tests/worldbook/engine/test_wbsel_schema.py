"""The native schema: defaults, limits, unknown fields, publish validation, content hash."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from worldbook.engine.schema import (
    DEFAULT_CAPABILITIES,
    POSITIONS,
    SELECTABLE_KINDS,
    BookIn,
    EntryIn,
    PublishError,
    SelectRequest,
    content_hash,
    validate_book_for_publish,
    validation_error_details,
)


def _book(*entries, **extra):
    return BookIn.model_validate({"name": "b", "entries": list(entries), **extra})


def test_entry_defaults_follow_the_seed():
    entry = EntryIn.model_validate({"content": "x"})
    assert entry.title == ""
    assert entry.enabled is True and entry.constant is False and entry.required is False
    assert entry.keys == [] and entry.secondary_keys == []
    assert entry.selective is False and entry.logic == "and_any"
    assert entry.case_sensitive is False and entry.match_whole_words is False
    assert entry.probability == 100 and entry.scan_depth is None
    assert entry.priority == 0 and entry.order == 0 and entry.conflict_key is None
    assert entry.audience == ["actor"] and entry.kind == "lore"
    assert (entry.position, entry.depth, entry.role) == ("before_character", 0, "system")
    assert entry.exclude_recursion is True and entry.prevent_recursion is True
    assert entry.runtime_requirements == [] and entry.metadata == {} and entry.source is None
    assert entry.sticky is None and entry.cooldown is None and entry.delay is None
    assert entry.delay_until_recursion is False and entry.group == ""
    assert entry.group_weight == 100 and entry.use_group_scoring is None
    assert entry.vectorized is False


def test_constants():
    assert len(POSITIONS) == 8 and POSITIONS[0] == "before_character" and POSITIONS[-1] == "outlet"
    assert DEFAULT_CAPABILITIES == ("before_character", "after_character", "at_depth")
    assert SELECTABLE_KINDS == {"lore", "character", "rule"}


def test_missing_ids_are_filled_by_position():
    book = _book({"content": "a"}, {"id": "x", "content": "b"}, {"content": "c"})
    assert [e.id for e in book.entries] == ["entry-0", "x", "entry-2"]
    assert book.metadata == {} and book.description == ""


def test_content_is_required():
    with pytest.raises(ValidationError):
        EntryIn.model_validate({"title": "no content"})


def test_unknown_field_is_rejected_and_named():
    with pytest.raises(ValidationError) as info:
        _book({"content": "a"}, {"content": "b"}, {"content": "c"}, {"content": "d", "foo": 1})
    body = validation_error_details(info.value)
    assert body["code"] == "validation_error"
    assert body["details"]["errors"][0]["loc"] == "entries.3.foo"
    assert "foo" in body["message"]


def test_book_level_unknown_field_is_rejected():
    with pytest.raises(ValidationError) as info:
        BookIn.model_validate({"name": "b", "tenant_id": "t1"})
    assert validation_error_details(info.value)["details"]["errors"][0]["loc"] == "tenant_id"


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("title", "t" * 501),
        ("content", "c" * 200_001),
        ("keys", ["k"] * 201),
        ("secondary_keys", ["k"] * 201),
        ("keys", ["k" * 501]),
        ("probability", 101),
        ("probability", -1),
        ("scan_depth", 101),
        ("priority", 1_000_001),
        ("order", -1_000_001),
        ("depth", 10_001),
        ("requires", ["r"] * 21),
        ("conditions", [{"path": "a", "op": "exists"}] * 21),
        ("id", "i" * 151),
        ("logic", "or"),
        ("position", "somewhere"),
        ("role", "tool"),
        ("kind", "poem"),
        ("sticky", -1),
        ("cooldown", -1),
        ("delay", -1),
        ("delay_until_recursion", 0.5),
        ("group_weight", 0),
    ],
)
def test_entry_limits(field, value):
    with pytest.raises(ValidationError):
        EntryIn.model_validate({"content": "x", field: value})


def test_entry_limit_edges_are_accepted():
    entry = EntryIn.model_validate(
        {
            "id": "i" * 150,
            "title": "t" * 500,
            "content": "c" * 200_000,
            "keys": ["k" * 500] * 200,
            "probability": 0,
            "scan_depth": 0,
            "priority": -1_000_000,
            "order": 1_000_000,
            "depth": 10_000,
            "delay_until_recursion": 3,
        }
    )
    assert entry.recursion_level == 3
    assert (
        EntryIn.model_validate({"content": "", "delay_until_recursion": True}).recursion_level == 1
    )


def test_book_limits():
    with pytest.raises(ValidationError):
        BookIn.model_validate({"name": ""})
    with pytest.raises(ValidationError):
        BookIn.model_validate({"name": "n" * 301})
    with pytest.raises(ValidationError):
        BookIn.model_validate({"name": "b", "description": "d" * 10_001})
    with pytest.raises(ValidationError):
        BookIn.model_validate({"name": "b", "entries": [{"content": "x"}] * 5001})
    assert (
        len(BookIn.model_validate({"name": "b", "entries": [{"content": "x"}] * 5000}).entries)
        == 5000
    )


@pytest.mark.parametrize(
    "condition",
    [
        {"path": "a", "op": "in", "value": 3},
        {"path": "a..b", "op": "exists"},
        {"path": "", "op": "eq", "value": 1},
        {"path": "a", "op": "gt", "value": 1},
        {"path": "a", "op": "exists", "value": 7},
    ],
)
def test_bad_conditions(condition):
    with pytest.raises(ValidationError):
        EntryIn.model_validate({"content": "x", "conditions": [condition]})


def test_request_defaults_and_limits():
    req = SelectRequest.model_validate({"books": [{"book_id": "b"}], "query": "q"})
    assert (req.audience, req.strategy, req.scan_depth, req.token_budget) == (
        "actor",
        "rules",
        4,
        1500,
    )
    assert req.constant_budget_ratio == 0.35 and req.max_entries == 50
    assert req.max_recursion_rounds == 2 and req.seed == "0" and req.template_vars == {}
    assert req.placement_capabilities is None and req.capabilities == frozenset(
        DEFAULT_CAPABILITIES
    )
    assert req.hybrid_threshold == 0.3 and req.use_group_scoring is False
    bad = [
        {"query": ""},
        {"query": "q" * 8001},
        {"books": []},
        {"books": [{"book_id": f"b{i}"} for i in range(21)]},
        {"books": [{"book_id": "b"}, {"book_id": "b"}]},
        {"history": [{"role": "user", "content": "x"}] * 101},
        {"history": [{"role": "user", "content": "x" * 16_001}]},
        {"scan_depth": 101},
        {"token_budget": 32_001},
        {"constant_budget_ratio": 1.5},
        {"max_entries": 0},
        {"max_entries": 201},
        {"max_recursion_rounds": 6},
        {"seed": "s" * 201},
        {"strategy": "vector"},
        {"placement_capabilities": ["outlet"]},
        {"placement_capabilities": ["nowhere"]},
        {"hybrid_threshold": 1.1},
        {"surprise": True},
    ]
    for override in bad:
        data = {"books": [{"book_id": "b"}], "query": "q", **override}
        with pytest.raises(ValidationError):
            SelectRequest.model_validate(data)


def _publish_error(*entries) -> PublishError:
    with pytest.raises(PublishError) as info:
        validate_book_for_publish(_book(*entries))
    return info.value


def test_publish_accepts_a_valid_book():
    validate_book_for_publish(
        _book(
            {"id": "a", "content": "x", "requires": ["b"], "keys": ["/gu+ard/i"]},
            {"id": "b", "content": "y", "position": "outlet", "outlet_name": "scene"},
        )
    )


def test_publish_duplicate_ids():
    err = _publish_error({"id": "a", "content": "x"}, {"id": "a", "content": "y"})
    assert err.code == "duplicate_entry_id" and err.details["entry_ids"] == ["a"]


def test_publish_dependency_missing_self_and_cycle():
    err = _publish_error({"id": "a", "content": "x", "requires": ["ghost"]})
    assert err.code == "dependency_missing"
    assert err.details["missing"] == [{"entry_id": "a", "requires": "ghost"}]
    err = _publish_error({"id": "a", "content": "x", "requires": ["a"]})
    assert err.code == "dependency_self" and err.details["entry_ids"] == ["a"]
    err = _publish_error(
        {"id": "a", "content": "x", "requires": ["b"]},
        {"id": "b", "content": "x", "requires": ["c"]},
        {"id": "c", "content": "x", "requires": ["a"]},
        {"id": "d", "content": "x", "requires": ["a"]},
    )
    assert err.code == "dependency_cycle"
    assert err.details["cycle"] == ["a", "b", "c", "a"]
    assert "a -> b -> c -> a" in err.message


@pytest.mark.parametrize(
    "key", ["/(?=look/", "/(?=a)((a{100}){100}){100}/", "/unclosed(/i", "/((a{100}){100}){100}/"]
)
def test_publish_rejects_regex_re2_cannot_use(key):
    err = _publish_error({"id": "r", "content": "x", "secondary_keys": [key]})
    assert err.code == "invalid_regex"
    assert err.details["entry_id"] == "r" and err.details["key"] == key
    assert err.details["field"] == "secondary_keys"


def test_publish_outlet_needs_a_name():
    err = _publish_error({"id": "o", "content": "x", "position": "outlet"})
    assert err.code == "outlet_name_required" and err.details["entry_ids"] == ["o"]


def test_content_hash_normalises_defaults_and_ids():
    implicit = _book({"content": "x"})
    explicit = _book(
        {"id": "entry-0", "content": "x", "enabled": True, "audience": ["actor"], "title": ""},
        metadata={},
    )
    assert content_hash(implicit) == content_hash(explicit)
    assert content_hash(implicit) != content_hash(_book({"content": "y"}))
    assert len(content_hash(implicit)) == 64
