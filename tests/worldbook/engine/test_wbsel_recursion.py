"""Recursion: entry text activating other entries, bounded by rounds and per-entry flags."""

from __future__ import annotations

from wbsel_helpers import decision, reason, run, selected_ids


def _chain(**overrides):
    """a (keyword 'start') mentions 'bee'; b mentions 'sea'; c has key 'sea'."""
    entries = [
        {"id": "a", "content": "talks about bee", "keys": ["start"], "prevent_recursion": False},
        {
            "id": "b",
            "content": "near the sea",
            "keys": ["bee"],
            "exclude_recursion": False,
            "prevent_recursion": False,
        },
        {"id": "c", "content": "waves", "keys": ["sea"], "exclude_recursion": False},
    ]
    for entry in entries:
        entry.update(overrides.get(entry["id"], {}))
    return entries


def test_recursion_activates_through_rounds():
    result = run(_chain(), "start")
    assert [reason(result, e) for e in "abc"] == ["keyword", "recursion", "recursion"]
    assert decision(result, "b")["details"]["round"] == 1
    assert decision(result, "c")["details"] == {"round": 2, "source": "content", "keys": ["sea"]}


def test_max_recursion_rounds_bounds_the_chain():
    assert reason(run(_chain(), "start", max_recursion_rounds=1), "c") == "not_triggered"
    assert reason(run(_chain(), "start", max_recursion_rounds=0), "b") == "not_triggered"


def test_native_defaults_disable_recursion_both_ways():
    entries = [
        {"id": "a", "content": "talks about bee", "keys": ["start"]},
        {"id": "b", "content": "x", "keys": ["bee"]},
    ]
    assert reason(run(entries, "start"), "b") == "not_triggered"


def test_prevent_recursion_stops_an_entry_feeding_others():
    result = run(_chain(a={"prevent_recursion": True}), "start")
    assert reason(result, "b") == "not_triggered"


def test_exclude_recursion_stops_an_entry_being_activated_by_text():
    result = run(_chain(b={"exclude_recursion": True}), "start")
    assert reason(result, "b") == "not_triggered" and reason(result, "c") == "not_triggered"


def test_constant_entries_feed_recursion():
    entries = [
        {"id": "world", "content": "the bee kingdom", "constant": True, "prevent_recursion": False},
        {"id": "bee", "content": "bees buzz", "keys": ["bee"], "exclude_recursion": False},
    ]
    result = run(entries, "hello")
    assert selected_ids(result) == ["bee", "world"]
    assert reason(result, "bee") == "recursion"


def test_recursion_uses_substituted_content():
    entries = [
        {"id": "a", "content": "{{char}} waves", "constant": True, "prevent_recursion": False},
        {"id": "b", "content": "x", "keys": ["Mira"], "exclude_recursion": False},
    ]
    assert reason(run(entries, template_vars={"char": "Mira"}), "b") == "recursion"


def test_delay_until_recursion_waits_for_a_recursion_round():
    entries = _chain(c={"keys": ["start"], "delay_until_recursion": True})
    # c's key is in the chat, but it may only fire once a recursion round happens.
    result = run(entries, "start")
    assert reason(result, "c") == "recursion"
    assert decision(result, "c")["details"]["source"] == "window"
    alone = [{"id": "c", "content": "x", "keys": ["start"], "delay_until_recursion": True}]
    assert reason(run(alone, "start"), "c") == "not_triggered"


def test_delay_until_recursion_level():
    entries = _chain(c={"keys": ["bee"], "delay_until_recursion": 2})
    # 'bee' appears in a's text (round 1), but c waits for level 2; round 2 scans b's text,
    # which has no 'bee'. The window carries no 'bee' either, so c stays off.
    assert reason(run(entries, "start"), "c") == "not_triggered"
    result = run(_chain(c={"keys": ["start"], "delay_until_recursion": 2}), "start")
    assert reason(result, "c") == "recursion"
    assert decision(result, "c")["details"]["round"] == 2


def test_recursion_secondary_keys_count_window_and_content():
    entries = [
        {"id": "a", "content": "the gate", "keys": ["start"], "prevent_recursion": False},
        {
            "id": "b",
            "content": "x",
            "keys": ["gate"],
            "secondary_keys": ["night"],
            "selective": True,
            "exclude_recursion": False,
        },
    ]
    assert reason(run(entries, "start at night"), "b") == "recursion"
    assert reason(run(entries, "start"), "b") == "not_triggered"
