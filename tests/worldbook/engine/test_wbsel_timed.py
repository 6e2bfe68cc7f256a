"""Timed effects across messages: delay, sticky, cooldown, retries and rollbacks."""

from __future__ import annotations

import json

from wbsel_helpers import decision, reason, run


def _turns(entries, queries, start=0, state=None):
    """Run consecutive messages, threading the timed state; returns (reason per turn, state)."""
    reasons = []
    for offset, query in enumerate(queries):
        result = (
            run(
                entries,
                query,
                conversation_id="conv-1",
                message_index=start + offset,
                **({} if state is None else {}),
                timed_state=None,
            )
            if False
            else None
        )
        del result
        from wbsel_helpers import book, loaded, request

        from tests.worldbook.engine.wbsel_helpers import select

        res = select(
            request(query, conversation_id="conv-1", message_index=start + offset),
            [loaded(book(*entries))],
            timed_state=state,
        )
        json.dumps(res.timed_state)  # always JSON-serialisable
        state = res.timed_state
        reasons.append(reason(res, "e"))
    return reasons, state


def test_timed_entries_need_a_conversation():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "cooldown": 2}]
    assert reason(run(entries, "go"), "e") == "timed_effect_needs_conversation"
    assert reason(run(entries, "go", conversation_id="c"), "e") == "timed_effect_needs_conversation"
    assert reason(run(entries, "go", conversation_id="c", message_index=0), "e") == "keyword"


def test_delay():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "delay": 2}]
    reasons, _ = _turns(entries, ["go"] * 4)
    assert reasons == ["delay_pending", "delay_pending", "keyword", "keyword"]


def test_sticky_keeps_an_entry_active_without_its_key():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "sticky": 2}]
    reasons, state = _turns(entries, ["go", "-", "-", "-", "-"])
    assert reasons == ["keyword", "sticky", "sticky", "not_triggered", "not_triggered"]
    assert state == {}


def test_sticky_state_shape():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "sticky": 2, "cooldown": 1}]
    _, state = _turns(entries, ["go"], start=5)
    assert state == {"b1:e": {"activated_at": 5, "sticky_until": 7, "cooldown_until": 8}}


def test_cooldown_blocks_reactivation():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "cooldown": 2}]
    reasons, _ = _turns(entries, ["go"] * 6)
    assert reasons == ["keyword", "cooldown", "cooldown", "keyword", "cooldown", "cooldown"]


def test_cooldown_starts_when_sticky_ends():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "sticky": 1, "cooldown": 2}]
    reasons, _ = _turns(entries, ["go"] * 6)
    assert reasons == ["keyword", "keyword", "cooldown", "cooldown", "keyword", "keyword"]


def test_sticky_skips_probability_and_wins_its_group():
    entries = [
        {"id": "e", "content": "x", "keys": ["go"], "sticky": 3, "probability": 100, "group": "g"},
        {
            "id": "other",
            "content": "y",
            "keys": ["go", "more"],
            "group": "g",
            "group_override": True,
        },
    ]
    from wbsel_helpers import book, loaded, request

    from tests.worldbook.engine.wbsel_helpers import select

    state = {"b1:e": {"activated_at": 0, "sticky_until": 3, "cooldown_until": None}}
    res = select(
        request("go more", conversation_id="c", message_index=1),
        [loaded(book(*entries))],
        timed_state=state,
    )
    assert reason(res, "e") == "keyword" and reason(res, "other") == "group_lost"
    assert decision(res, "e")["details"]["sticky_until"] == 3
    entries[0]["probability"] = 0
    res = select(
        request("-", conversation_id="c", message_index=2),
        [loaded(book(*entries))],
        timed_state=state,
    )
    assert reason(res, "e") == "sticky"


def test_retry_of_the_same_message_is_recomputed():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "cooldown": 3}]
    _, state = _turns(entries, ["go"], start=4)
    again, state_again = _turns(entries, ["go"], start=4, state=state)
    assert again == ["keyword"] and state_again == state
    other, state_other = _turns(entries, ["-"], start=4, state=state)
    assert other == ["not_triggered"] and state_other == {}


def test_rollback_discards_effects_from_the_future():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "cooldown": 5}]
    _, state = _turns(entries, ["go"], start=10)
    reasons, _ = _turns(entries, ["go"], start=3, state=state)
    assert reasons == ["keyword"]


def test_other_books_state_passes_through_untouched():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "cooldown": 1}]
    foreign = {"other-book:e": {"anything": [1, 2]}}
    _, state = _turns(entries, ["go"], start=0, state=foreign)
    assert state["other-book:e"] == {"anything": [1, 2]}
    assert "b1:e" in state


def test_malformed_state_is_ignored():
    entries = [{"id": "e", "content": "x", "keys": ["go"], "cooldown": 1}]
    bad = {"b1:e": "garbage", "b1:f": {"activated_at": "x"}}
    reasons, state = _turns(entries, ["go"], start=2, state=bad)
    assert reasons == ["keyword"] and set(state) == {"b1:e"}
