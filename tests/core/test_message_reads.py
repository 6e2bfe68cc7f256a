"""Message store reads (seed 001): history, full history, ranges, recent across sessions."""

from __future__ import annotations

import pytest

from memory import selectors as reads
from memory import services as store
from memory.models import Message


def _put(tenant, session, ts, role="user", kind=None, archived=False, **metadata):
    return Message.objects.create(
        tenant=tenant, session_id=session, role=role, content=f"{session}@{ts}", kind=kind,
        ts=ts, archived=archived, metadata=metadata,
    )  # fmt: skip


def _contents(rows):
    return [m.content for m in rows]


def test_history_default_limit_is_50_latest_ascending(tenant):
    for ts in range(1, 61):
        _put(tenant, "s", ts)
    rows = reads.get_history(tenant, "s")
    assert reads.DEFAULT_HISTORY_LIMIT == 50
    assert [m.ts for m in rows] == list(range(11, 61))


def test_history_skips_archived_and_orders_by_timestamp_not_insertion(tenant):
    for ts in (30, 10, 20, 40):
        _put(tenant, "s", ts)
    _put(tenant, "s", 35, archived=True)
    assert [m.ts for m in reads.get_history(tenant, "s", 3)] == [20, 30, 40]
    assert reads.get_history(tenant, "s", 0) == []
    assert reads.get_history(tenant, "nobody") == []


def test_full_history_includes_archived(tenant):
    for ts in range(1, 6):
        _put(tenant, "s", ts, archived=ts < 3)
    assert [m.ts for m in reads.get_full_history(tenant, "s")] == [1, 2, 3, 4, 5]
    assert [m.ts for m in reads.get_full_history(tenant, "s", 2)] == [4, 5]


def test_reads_are_tenant_scoped(tenant, other_tenant):
    _put(other_tenant, "s", 1)
    assert reads.get_history(tenant, "s") == []
    assert reads.get_full_history(tenant, "s") == []
    assert reads.get_messages_by_range(tenant, "s", 0, 10) == []
    assert reads.get_recent_across_sessions(tenant, limit=10) == []


def test_range_is_inclusive_and_ascending(tenant):
    for ts in range(1, 11):
        _put(tenant, "s", ts, role="user" if ts % 2 else "assistant")
    _put(tenant, "t", 5)
    assert [m.ts for m in reads.get_messages_by_range(tenant, "s", 3, 6)] == [3, 4, 5, 6]
    only_user = reads.get_messages_by_range(tenant, "s", 1, 10, roles=["user"])
    assert [m.ts for m in only_user] == [1, 3, 5, 7, 9]
    assert reads.get_messages_by_range(tenant, "s", 7, 3) == []


def test_range_exclude_kinds_keeps_null_kinds(tenant):
    _put(tenant, "s", 1, kind=None)
    _put(tenant, "s", 2, kind="control")
    _put(tenant, "s", 3, kind="chat")
    rows = reads.get_messages_by_range(tenant, "s", 0, 10, exclude_kinds=["control"])
    assert [m.ts for m in rows] == [1, 3]


@pytest.fixture
def sessions(tenant, other_tenant):
    """Three sessions of interleaved messages plus noise that must never be returned."""
    _put(tenant, "a", 1, role="user", platform="web")
    _put(tenant, "b", 2, role="assistant", kind="chat", platform="discord")
    _put(tenant, "a", 3, role="system")
    _put(tenant, "c", 4, role="user", kind="control", platform="web")
    _put(tenant, "b", 5, role="tool", kind="chat")
    _put(tenant, "a", 6, role="assistant", kind=None, platform="web")
    _put(tenant, "c", 7, role="user", archived=True)
    _put(tenant, "b", 8, role="user", kind="chat", platform="discord")
    _put(other_tenant, "a", 9, role="user")


def _recent(tenant, **query):
    return [(session, m.ts) for session, m in reads.get_recent_across_sessions(tenant, **query)]


def test_recent_defaults_to_user_and_assistant_unarchived(tenant, sessions):
    assert _recent(tenant, limit=10) == [("a", 1), ("b", 2), ("c", 4), ("a", 6), ("b", 8)]


def test_recent_takes_the_latest_n_then_ascends(tenant, sessions):
    assert _recent(tenant, limit=2) == [("a", 6), ("b", 8)]
    assert _recent(tenant, limit=0) == []


def test_recent_roles_override_the_default(tenant, sessions):
    assert _recent(tenant, limit=10, roles=["system", "tool"]) == [("a", 3), ("b", 5)]


def test_recent_filters_since_platform_and_sessions(tenant, sessions):
    assert _recent(tenant, limit=10, since_ts=4) == [("c", 4), ("a", 6), ("b", 8)]
    assert _recent(tenant, limit=10, platform="web") == [("a", 1), ("c", 4), ("a", 6)]
    assert _recent(tenant, limit=10, exclude_session_ids=["a", "c"]) == [("b", 2), ("b", 8)]
    combined = _recent(tenant, limit=1, platform="web", exclude_session_ids=["a"])
    assert combined == [("c", 4)]


def test_recent_kinds_whitelist_and_null_safe_blacklist(tenant, sessions):
    assert _recent(tenant, limit=10, kinds=["chat"]) == [("b", 2), ("b", 8)]
    # NULL kinds survive a blacklist: only the named kinds go.
    assert _recent(tenant, limit=10, exclude_kinds=["chat"]) == [("a", 1), ("c", 4), ("a", 6)]
    # The blacklist wins over the whitelist.
    assert _recent(tenant, limit=10, kinds=["chat", "control"], exclude_kinds=["chat"]) == [
        ("c", 4)
    ]


def test_recent_limit_is_capped(tenant):
    Message.objects.bulk_create(
        Message(tenant=tenant, session_id=f"s{ts % 7}", role="user", content="x", ts=ts)
        for ts in range(1, 1101)
    )
    rows = reads.get_recent_across_sessions(tenant, limit=5000)
    assert len(rows) == reads.CROSS_SESSION_MAX_LIMIT == 1000
    assert [m.ts for _s, m in rows] == list(range(101, 1101))


def test_reads_return_what_save_wrote(tenant):
    saved = store.save_message(tenant, "s", role="user", content="hi", metadata={"platform": "x"})
    [(session, row)] = reads.get_recent_across_sessions(tenant, limit=1, platform="x")
    assert session == "s" and row.pk == saved.pk and row.content == "hi"
