"""Message store writes (seed 001) against the real database: save, finish, clear, trim,
update content, delete by timestamps, metadata."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory import selectors as reads
from memory import services as store
from memory.models import MemoryMetadata, Message


def _save(tenant, session, n, **kwargs):
    return [
        store.save_message(tenant, session, role="user", content=f"m{i}", **kwargs)
        for i in range(n)
    ]


def _bulk(tenant, session, stamps):
    """Messages at chosen timestamps, written directly (faster than save_message for 1000s)."""
    Message.objects.bulk_create(
        Message(tenant=tenant, session_id=session, role="user", content=str(ts), ts=ts)
        for ts in stamps
    )


def test_save_assigns_strictly_increasing_timestamps(tenant):
    rows = _save(tenant, "s", 30)
    stamps = [m.ts for m in rows]
    assert stamps == sorted(stamps) and len(set(stamps)) == 30


def test_save_keeps_fields_and_defaults(tenant):
    given_id = uuid.uuid4()
    m = store.save_message(
        tenant, "s", role="assistant", content="hi", kind="chat", metadata={"a": 1},
        message_id=given_id, status="streaming",
    )  # fmt: skip
    row = Message.objects.get(pk=given_id)
    assert (row.role, row.content, row.kind, row.metadata, row.status, row.archived) == (
        "assistant", "hi", "chat", {"a": 1}, "streaming", False,
    )  # fmt: skip
    plain = store.save_message(tenant, "s", role="user", content="x")
    assert plain.kind is None and plain.metadata == {} and plain.status == "complete"
    assert m.ts < plain.ts


def test_timestamps_are_per_session_and_per_tenant(tenant, other_tenant):
    a = store.save_message(tenant, "s", role="user", content="a")
    b = store.save_message(other_tenant, "s", role="user", content="b")
    assert reads.get_history(tenant, "s") == [a]
    assert reads.get_history(other_tenant, "s") == [b]


def test_finish_message_sets_content_status_and_merges_metadata(tenant):
    m = store.save_message(
        tenant, "s", role="assistant", content="", status="streaming", metadata={"turn": "t1"}
    )
    store.finish_message(m, content="partial", status="cancelled", metadata={"reason": "user"})
    row = Message.objects.get(pk=m.pk)
    assert row.content == "partial" and row.status == "cancelled"
    assert row.metadata == {"turn": "t1", "reason": "user"}


def test_clear_session_removes_archived_too_and_nothing_else(tenant, other_tenant):
    _save(tenant, "s", 5)
    store.trim_history(tenant, "s", 2)
    _save(tenant, "other", 2)
    _save(other_tenant, "s", 3)
    assert store.clear_session(tenant, "s") == 5
    assert reads.get_full_history(tenant, "s") == []
    assert len(reads.get_full_history(tenant, "other")) == 2
    assert len(reads.get_full_history(other_tenant, "s")) == 3
    assert store.clear_session(tenant, "s") == 0


@pytest.mark.parametrize(
    ("count", "keep", "archived"), [(10, 4, 6), (10, 0, 10), (3, 10, 0), (0, 5, 0), (5, -3, 5)]
)
def test_trim_history_keeps_the_latest_active(tenant, count, keep, archived):
    rows = _save(tenant, "s", count)
    assert store.trim_history(tenant, "s", keep) == archived
    kept = rows[archived:]
    assert reads.get_history(tenant, "s") == kept
    assert all(m.archived for m in Message.objects.filter(pk__in=[r.pk for r in rows[:archived]]))


def test_trim_counts_only_newly_archived(tenant):
    _save(tenant, "s", 10)
    assert store.trim_history(tenant, "s", 6) == 4
    assert store.trim_history(tenant, "s", 6) == 0
    assert store.trim_history(tenant, "s", 2) == 4
    assert len(reads.get_full_history(tenant, "s")) == 10


def test_trim_is_scoped_to_session_and_tenant(tenant, other_tenant):
    _save(tenant, "other", 3)
    _save(other_tenant, "s", 3)
    _save(tenant, "s", 3)
    store.trim_history(tenant, "s", 0)
    assert len(reads.get_history(tenant, "other")) == 3
    assert len(reads.get_history(other_tenant, "s")) == 3


def test_update_message_content_within_the_recent_limit(tenant):
    rows = _save(tenant, "s", 8)
    for m in rows:
        Message.objects.filter(pk=m.pk).update(content=f"Alice said {m.content}")
    assert store.update_message_content(tenant, "s", "Alice", "Bea", recent_limit=3) == 3
    contents = [m.content for m in reads.get_history(tenant, "s")]
    assert contents[:5] == [f"Alice said m{i}" for i in range(5)]
    assert contents[5:] == [f"Bea said m{i}" for i in range(5, 8)]


def test_update_message_content_default_limit_is_100(tenant):
    _bulk(tenant, "s", range(1, 131))
    Message.objects.filter(tenant=tenant).update(content="old")
    assert store.update_message_content(tenant, "s", "old", "new") == 100
    by_ts = {m.ts: m.content for m in reads.get_full_history(tenant, "s")}
    assert all(by_ts[ts] == "old" for ts in range(1, 31))
    assert all(by_ts[ts] == "new" for ts in range(31, 131))


def test_update_message_content_edge_cases(tenant):
    _save(tenant, "s", 2)
    assert store.update_message_content(tenant, "s", "", "x") == 0
    assert store.update_message_content(tenant, "s", "absent", "x") == 0
    assert store.update_message_content(tenant, "s", "m", "M", recent_limit=0) == 0
    assert store.update_message_content(tenant, "s", "m", "M m", recent_limit=5) == 2
    assert [m.content for m in reads.get_history(tenant, "s")] == ["M m0", "M m1"]


def test_delete_by_timestamps_removes_exactly_those(tenant, other_tenant):
    rows = _save(tenant, "s", 6)
    twin = store.save_message(tenant, "t", role="user", content="twin")
    foreign = store.save_message(other_tenant, "s", role="user", content="foreign")
    # Same timestamps in another session and another tenant: those rows must stay.
    Message.objects.filter(pk=twin.pk).update(ts=rows[4].ts)
    Message.objects.filter(pk=foreign.pk).update(ts=rows[5].ts)
    doomed = [rows[4].ts, rows[5].ts, rows[5].ts, 1]
    assert store.delete_messages_by_timestamps(tenant, "s", doomed) == 2
    assert reads.get_full_history(tenant, "s") == rows[:4]
    assert Message.objects.filter(pk__in=[twin.pk, foreign.pk]).count() == 2


def test_delete_by_timestamps_includes_archived(tenant):
    rows = _save(tenant, "s", 4)
    store.trim_history(tenant, "s", 1)
    assert store.delete_messages_by_timestamps(tenant, "s", [m.ts for m in rows[:2]]) == 2
    assert len(reads.get_full_history(tenant, "s")) == 2


def test_delete_by_timestamps_works_in_batches_of_500(tenant):
    _bulk(tenant, "s", range(1, 1301))
    doomed = list(range(1, 1201))
    with CaptureQueriesContext(connection) as ctx:
        assert store.delete_messages_by_timestamps(tenant, "s", doomed) == 1200
    deletes = [
        q["sql"]
        for q in ctx.captured_queries
        if q["sql"].startswith('DELETE FROM "memory_message"')
    ]
    # No statement names more than a batch (a rollback of thousands never builds one giant
    # statement); alternatives and edits of the messages go with them.
    assert deletes and all(sql.count("::uuid") <= store.DELETE_BATCH for sql in deletes)
    assert store.DELETE_BATCH == 500
    assert [m.ts for m in reads.get_full_history(tenant, "s")] == list(range(1201, 1301))


def test_delete_by_timestamps_of_nothing(tenant):
    _save(tenant, "s", 2)
    assert store.delete_messages_by_timestamps(tenant, "s", []) == 0
    assert len(reads.get_history(tenant, "s")) == 2


def test_metadata_upsert_get_list_delete(tenant, other_tenant):
    assert reads.get_metadata(tenant, "summary", "s1") is None
    store.save_metadata(tenant, "summary", "s1", {"text": "v1"})
    store.save_metadata(tenant, "summary", "s1", {"text": "v2"})
    store.save_metadata(tenant, "summary", "a0", {"text": "first"})
    store.save_metadata(tenant, "profile", "s1", {"name": "Ann"})
    store.save_metadata(other_tenant, "summary", "s1", {"text": "theirs"})
    assert reads.get_metadata(tenant, "summary", "s1") == {"text": "v2"}
    assert reads.list_metadata(tenant, "summary") == [
        {"key": "a0", "data": {"text": "first"}},
        {"key": "s1", "data": {"text": "v2"}},
    ]
    assert MemoryMetadata.objects.filter(tenant=tenant, namespace="summary").count() == 2
    store.delete_metadata(tenant, "summary", "s1")
    assert reads.get_metadata(tenant, "summary", "s1") is None
    assert reads.get_metadata(tenant, "profile", "s1") == {"name": "Ann"}
    assert reads.get_metadata(other_tenant, "summary", "s1") == {"text": "theirs"}
    store.delete_metadata(tenant, "summary", "missing")  # deleting nothing is fine
