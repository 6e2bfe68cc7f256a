"""Bulk actions on plain entries, and the per-entry stats a revision inherits."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from worldbook.engine.bulk import BulkEdit, apply, copy_id, duplicates
from worldbook.engine.stats import revision_stats

ENTRY = {"id": "a", "title": "A", "content": "x", "keys": ["k"], "enabled": True,
         "position": "before_character", "depth": 0, "order": 0, "group": "g"}  # fmt: skip


@pytest.mark.parametrize(
    ("edit", "changes"),
    [
        ({"action": "disable"}, {"enabled": False}),
        ({"action": "set_position", "position": "at_depth", "depth": 4},
         {"position": "at_depth", "depth": 4}),
        ({"action": "set_position", "position": "outlet", "outlet_name": "scene"},
         {"position": "outlet", "outlet_name": "scene"}),
        ({"action": "set_depth", "depth": 2}, {"depth": 2}),
        ({"action": "set_order", "order": -3}, {"order": -3}),
        ({"action": "set_group", "group": "sea"}, {"group": "sea"}),
        ({"action": "clear_group"}, {"group": ""}),
        ({"action": "add_key", "key": "bell"}, {"keys": ["k", "bell"]}),
        ({"action": "remove_key", "key": "k"}, {"keys": []}),
    ],
)  # fmt: skip
def test_each_action_changes_its_fields_only(edit, changes):
    before = dict(ENTRY)
    after = apply(ENTRY, BulkEdit(**edit))
    assert after == {**ENTRY, **changes}
    assert ENTRY == before  # never mutated


@pytest.mark.parametrize(
    "edit",
    [
        {"action": "enable"},
        {"action": "add_key", "key": "k"},
        {"action": "remove_key", "key": "absent"},
        {"action": "set_group", "group": "g"},
    ],
)
def test_an_action_that_changes_nothing_returns_the_same_entry(edit):
    assert apply(ENTRY, BulkEdit(**edit)) is ENTRY


@pytest.mark.parametrize(
    "edit",
    [
        {"action": "set_position"},
        {"action": "set_order"},
        {"action": "add_key"},
        {"action": "add_key", "key": ""},
        {"action": "set_position", "position": "outlet"},
        {"action": "set_depth", "depth": -1},
        {"action": "explode"},
        {"action": "disable", "colour": "red"},
    ],
)
def test_bad_parameters_are_refused(edit):
    with pytest.raises(ValidationError):
        BulkEdit(**edit)


def test_list_actions_are_not_field_actions():
    with pytest.raises(ValueError):
        apply(ENTRY, BulkEdit(action="delete"))


def test_copies_get_fresh_ids():
    taken = {"a", "a-copy"}
    assert copy_id("a", taken) == "a-copy-2" and "a-copy-2" in taken
    long_id = "x" * 150
    assert len(copy_id(long_id, {long_id})) <= 150
    copies = duplicates([ENTRY, ENTRY], {"a"})
    assert [c["id"] for c in copies] == ["a-copy", "a-copy-2"]
    assert copies[0]["title"] == "A (copy)" and copies[0]["content"] == "x"


def count(text: str) -> int:
    count.calls.append(text)
    return len(text)


count.calls = []


def test_stats_reuse_what_did_not_change():
    first = [{"id": "a", "content": "aaa"}, {"id": "b", "content": "bb"}]
    count.calls.clear()
    one = revision_stats(first, 1, count)
    assert one == {"tokens": {"a": 3, "b": 2}, "changed": {"a": 1, "b": 1}}
    second = [{"id": "a", "content": "aaa", "title": "t"}, {"id": "b", "content": "bb"},
              {"id": "c", "content": "c"}]  # fmt: skip
    count.calls.clear()
    two = revision_stats(second, 2, count, previous=first, previous_stats=one)
    assert count.calls == ["c"]  # a's content is unchanged, so is its count
    assert two == {"tokens": {"a": 3, "b": 2, "c": 1}, "changed": {"a": 2, "b": 1, "c": 2}}


def test_without_the_previous_stats_an_unchanged_entry_dates_from_the_previous():
    entries = [{"id": "a", "content": "aaa"}]
    stats = revision_stats(entries, 5, count, previous=entries, previous_stats=None)
    assert stats["changed"] == {"a": 4}
