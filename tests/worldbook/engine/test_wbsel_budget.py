"""Dependencies, conflicts, budgets: whole groups taken or dropped; required rules fail loudly."""

from __future__ import annotations

import pytest
from wbsel_helpers import decision, reason, run, selected_ids

from worldbook.engine.selection import SelectionError

LONG = "lorem ipsum dolor sit amet " * 20  # roughly 100 tokens


def test_dependencies_join_the_group():
    entries = [
        {"id": "a", "content": "x", "keys": ["go"], "requires": ["b"]},
        {"id": "b", "content": "y", "requires": ["c"]},
        {"id": "c", "content": "z"},
        {"id": "d", "content": "w"},
    ]
    result = run(entries, "go")
    assert sorted(selected_ids(result)) == ["a", "b", "c"]
    assert reason(result, "b") == "dependency"
    assert decision(result, "c")["details"] == {"required_by": ["b1:a"]}
    assert reason(result, "d") == "not_triggered"


def test_dependency_that_is_also_active_keeps_its_own_reason():
    entries = [
        {"id": "a", "content": "x", "keys": ["go"], "requires": ["b"]},
        {"id": "b", "content": "y", "keys": ["go"]},
    ]
    result = run(entries, "go")
    assert reason(result, "b") == "keyword" and len(result.blocks) == 2


def test_ineligible_dependency_drops_optional_group():
    entries = [
        {"id": "a", "content": "x", "keys": ["go"], "requires": ["b"]},
        {"id": "b", "content": "y", "enabled": False},
    ]
    result = run(entries, "go")
    assert result.blocks == []
    assert decision(result, "a")["reason"] == "dependency_unavailable"
    assert decision(result, "a")["details"] == {"dependency": "b", "dependency_reason": "disabled"}
    assert reason(result, "b") == "disabled"


def test_missing_dependency_in_an_unpublished_book_drops_the_group():
    result = run([{"id": "a", "content": "x", "constant": True, "requires": ["ghost"]}])
    assert decision(result, "a")["details"]["dependency_reason"] == "missing"


def test_broken_dependency_of_required_entry_is_an_error():
    entries = [
        {"id": "r", "content": "x", "required": True, "requires": ["b"]},
        {"id": "b", "content": "y", "conditions": [{"path": "ok", "op": "exists"}]},
    ]
    with pytest.raises(SelectionError) as info:
        run(entries)
    assert info.value.code == "dependency_broken"
    assert info.value.details["dependency"] == "b"
    assert info.value.details["dependency_reason"] == "condition_failed"
    assert selected_ids(run(entries, state={"ok": 1})) == ["b", "r"]


def test_conflict_key_keeps_the_better_ranked_entry():
    entries = [
        {"id": "low", "content": "x", "keys": ["go"], "conflict_key": "weather", "priority": 1},
        {"id": "high", "content": "y", "keys": ["go"], "conflict_key": "weather", "priority": 5},
        {"id": "free", "content": "z", "keys": ["go"]},
    ]
    result = run(entries, "go")
    assert sorted(selected_ids(result)) == ["free", "high"]
    assert decision(result, "low")["reason"] == "conflict_dropped"
    assert decision(result, "low")["details"] == {"conflict_key": "weather", "winner": "b1:high"}


def test_conflict_through_a_dependency_drops_the_whole_group():
    entries = [
        {"id": "winner", "content": "x", "keys": ["go"], "conflict_key": "k", "priority": 9},
        {"id": "root", "content": "y", "keys": ["go"], "requires": ["dep"]},
        {"id": "dep", "content": "z", "conflict_key": "k"},
    ]
    result = run(entries, "go")
    assert selected_ids(result) == ["winner"]
    assert reason(result, "root") == "conflict_dropped"


def test_required_beats_optional_in_a_conflict():
    entries = [
        {"id": "opt", "content": "x", "constant": True, "conflict_key": "k", "priority": 99},
        {"id": "req", "content": "y", "required": True, "conflict_key": "k"},
    ]
    result = run(entries)
    assert selected_ids(result) == ["req"] and reason(result, "opt") == "conflict_dropped"


def test_conflict_between_required_entries_is_an_error():
    entries = [
        {"id": "r1", "content": "x", "required": True, "conflict_key": "k"},
        {"id": "r2", "content": "y", "required": True, "conflict_key": "k"},
    ]
    with pytest.raises(SelectionError) as info:
        run(entries)
    assert info.value.code == "required_conflict"
    assert sorted(info.value.details["entries"]) == ["b1:r1", "b1:r2"]


def test_budget_drops_whole_groups_in_rank_order():
    entries = [
        {"id": "top", "content": LONG, "keys": ["go"], "priority": 10},
        {"id": "big", "content": LONG, "keys": ["go"], "priority": 5, "requires": ["dep"]},
        {"id": "dep", "content": LONG},
        {"id": "small", "content": "short", "keys": ["go"]},
    ]
    result = run(entries, "go", token_budget=260)
    assert sorted(selected_ids(result)) == ["small", "top"]
    assert reason(result, "big") == "budget_dropped"
    assert decision(result, "dep")["reason"] == "budget_dropped"
    assert decision(result, "dep")["details"]["as_dependency_of"] == "b1:big"
    assert result.token_count <= 260


def test_constant_entries_are_capped_by_the_ratio():
    entries = [
        {"id": f"c{i}", "content": LONG, "constant": True, "order": -i} for i in range(4)
    ] + [{"id": "kw", "content": LONG, "keys": ["go"]}]
    result = run(entries, "go", token_budget=1000, constant_budget_ratio=0.35)
    constants = [b for b in result.blocks if b["reason"] == "constant"]
    assert len(constants) == 2  # ~115 tokens each, cap 350
    assert reason(result, "c2") == "constant_budget_dropped"
    assert decision(result, "c2")["details"]["constant_cap"] == 350
    assert reason(result, "kw") == "keyword"
    everything = run(entries, "go", token_budget=1000, constant_budget_ratio=1.0)
    assert len(everything.blocks) == 5
    none = run(entries, "go", token_budget=1000, constant_budget_ratio=0)
    assert selected_ids(none) == ["kw"]


def test_required_entries_ignore_the_constant_cap_but_not_the_budget():
    entries = [{"id": "r", "content": LONG, "required": True, "constant": True}]
    assert selected_ids(run(entries, token_budget=300, constant_budget_ratio=0)) == ["r"]
    with pytest.raises(SelectionError) as info:
        run(entries, token_budget=50)
    assert info.value.code == "required_over_budget"
    assert info.value.details["limit"] == "token_budget"


def test_required_come_first_then_constant_then_the_rest():
    entries = [
        {"id": "kw", "content": LONG, "keys": ["go"], "priority": 1000},
        {"id": "const", "content": LONG, "constant": True},
        {"id": "req", "content": LONG, "required": True},
    ]
    result = run(entries, "go", token_budget=260, constant_budget_ratio=1)
    assert sorted(selected_ids(result)) == ["const", "req"]
    assert reason(result, "kw") == "budget_dropped"


def test_max_entries_counts_dependencies():
    entries = [
        {"id": "a", "content": "x", "keys": ["go"], "priority": 5, "requires": ["a1", "a2"]},
        {"id": "a1", "content": "x"},
        {"id": "a2", "content": "x"},
        {"id": "b", "content": "y", "keys": ["go"], "priority": 4, "requires": ["b1"]},
        {"id": "b1", "content": "y"},
        {"id": "c", "content": "z", "keys": ["go"]},
    ]
    result = run(entries, "go", max_entries=4)
    assert sorted(selected_ids(result)) == ["a", "a1", "a2", "c"]
    assert reason(result, "b") == "max_entries_dropped"
    assert decision(result, "b")["details"] == {"max_entries": 4}


def test_required_over_max_entries_is_an_error():
    entries = [
        {"id": "r", "content": "x", "required": True, "requires": ["d"]},
        {"id": "d", "content": "y"},
    ]
    with pytest.raises(SelectionError) as info:
        run(entries, max_entries=1)
    assert info.value.code == "required_over_budget"
    assert info.value.details["limit"] == "max_entries"


def test_shared_dependencies_are_counted_once():
    entries = [
        {"id": "a", "content": "x", "keys": ["go"], "requires": ["shared"]},
        {"id": "b", "content": "y", "keys": ["go"], "requires": ["shared"]},
        {"id": "shared", "content": "z"},
    ]
    result = run(entries, "go", max_entries=3)
    assert sorted(selected_ids(result)) == ["a", "b", "shared"]
    assert decision(result, "shared")["details"]["required_by"] == ["b1:a", "b1:b"]


def test_zero_budget_selects_nothing():
    result = run(
        [{"id": "c", "content": "x", "constant": True}], token_budget=0, constant_budget_ratio=1
    )
    assert result.blocks == [] and reason(result, "c") == "budget_dropped"


def test_sort_uses_priority_keyword_order_then_stable_id():
    entries = [
        {"id": "b", "content": LONG, "keys": ["go"]},
        {"id": "a", "content": LONG, "keys": ["go"]},
        {"id": "ordered", "content": LONG, "keys": ["go"], "order": 3},
    ]
    result = run(entries, "go", token_budget=150)
    assert selected_ids(result) == ["ordered"]
    result = run(entries, "go", token_budget=270)
    assert sorted(selected_ids(result)) == ["a", "ordered"]
