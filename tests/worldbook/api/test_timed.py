"""Timed effects through the API: sticky, cooldown and delay keep per-conversation state in
the database between requests (``conversation_id`` + ``message_index``)."""

from __future__ import annotations

import pytest

from tests.worldbook.api.wb_api_helpers import book, create, entry, select_body
from worldbook.models import TimedEffectState

pytestmark = pytest.mark.django_db

TIMED = book(
    "Timed",
    entry("bell", "The fog bell rings.", keys=["bell"], sticky=2),
    entry("horn", "A horn sounds.", keys=["horn"], cooldown=2),
    entry("late", "Late arrivals.", keys=["late"], delay=3),
    entry("plain", "Plain lore.", keys=["plain"]),
)


def turn(api, book_id, query, index, conversation="conv-1"):
    body = select_body(book_id, query, conversation_id=conversation, message_index=index)
    res = api.post("/v1/context/select", body, format="json")
    assert res.status_code == 200, res.content
    return {d["entry_id"]: d["reason"] for d in res.json()["decisions"]}


def test_sticky_keeps_an_entry_for_n_messages(api, tenant):
    book_id = create(api, TIMED)["book_id"]
    assert turn(api, book_id, "ring the bell", 1)["bell"] == "keyword"
    row = TimedEffectState.objects.get(tenant=tenant, conversation_id="conv-1")
    assert row.state[f"{book_id}:bell"] == {
        "activated_at": 1,
        "sticky_until": 3,
        "cooldown_until": None,
    }
    assert turn(api, book_id, "quiet now", 2)["bell"] == "sticky"
    assert turn(api, book_id, "still quiet", 3)["bell"] == "sticky"
    assert turn(api, book_id, "silence", 4)["bell"] == "not_triggered"


def test_sticky_blocks_are_in_the_output(api):
    book_id = create(api, TIMED)["book_id"]
    turn(api, book_id, "bell", 5)
    body = select_body(book_id, "nothing", conversation_id="conv-1", message_index=6)
    out = api.post("/v1/context/select", body, format="json").json()
    assert [(b["entry_id"], b["reason"]) for b in out["blocks"]] == [("bell", "sticky")]


def test_cooldown_blocks_reactivation(api):
    book_id = create(api, TIMED)["book_id"]
    assert turn(api, book_id, "horn", 1)["horn"] == "keyword"
    assert turn(api, book_id, "horn", 2)["horn"] == "cooldown"
    assert turn(api, book_id, "horn", 3)["horn"] == "cooldown"
    assert turn(api, book_id, "horn", 4)["horn"] == "keyword"


def test_delay_waits_for_the_message_index(api):
    book_id = create(api, TIMED)["book_id"]
    assert turn(api, book_id, "late", 1)["late"] == "delay_pending"
    assert turn(api, book_id, "late", 2)["late"] == "delay_pending"
    assert turn(api, book_id, "late", 3)["late"] == "keyword"


def test_retrying_a_message_gives_the_same_answer(api, tenant):
    book_id = create(api, TIMED)["book_id"]
    turn(api, book_id, "bell horn", 1)
    first = turn(api, book_id, "horn", 2)
    state = TimedEffectState.objects.get(tenant=tenant, conversation_id="conv-1").state
    assert turn(api, book_id, "horn", 2) == first
    assert TimedEffectState.objects.get(tenant=tenant, conversation_id="conv-1").state == state


def test_without_a_conversation_timed_entries_say_so(api):
    book_id = create(api, TIMED)["book_id"]
    for extra in ({}, {"message_index": 3}, {"conversation_id": "c"}):
        body = select_body(book_id, "bell horn late plain", **extra)
        out = api.post("/v1/context/select", body, format="json").json()
        reasons = {d["entry_id"]: d["reason"] for d in out["decisions"]}
        assert reasons == {
            "bell": "timed_effect_needs_conversation",
            "horn": "timed_effect_needs_conversation",
            "late": "timed_effect_needs_conversation",
            "plain": "keyword",
        }
        assert "timed_state" not in out
    assert TimedEffectState.objects.count() == 0


def test_conversations_and_tenants_are_independent(api, other_api, tenant):
    mine = create(api, TIMED)["book_id"]
    theirs = create(other_api, TIMED)["book_id"]
    turn(api, mine, "bell", 1, conversation="shared-name")
    assert turn(api, mine, "quiet", 2, conversation="another")["bell"] == "not_triggered"
    assert turn(other_api, theirs, "quiet", 2, conversation="shared-name")["bell"] == (
        "not_triggered"
    )
    assert turn(api, mine, "quiet", 2, conversation="shared-name")["bell"] == "sticky"
    # A row is kept only where there is state: mine holds the bell's sticky turns, the other
    # tenant's "shared-name" triggered nothing.
    rows = TimedEffectState.objects.filter(conversation_id="shared-name")
    assert [row.tenant_id for row in rows] == [tenant.id]


def test_state_of_other_books_is_kept(api, tenant):
    first = create(api, TIMED)["book_id"]
    second = create(api, TIMED)["book_id"]
    turn(api, first, "bell", 1)
    turn(api, second, "horn", 2)
    state = TimedEffectState.objects.get(tenant=tenant, conversation_id="conv-1").state
    assert set(state) == {f"{first}:bell", f"{second}:horn"}
    assert turn(api, first, "quiet", 3)["bell"] == "sticky"


@pytest.mark.parametrize("writers", [1, 3])
def test_a_concurrent_writer_is_never_overwritten(api, tenant, monkeypatch, writers):
    """Another request records the conversation's state between this one's read and write
    (a real row update, ``writers`` times): the compare-and-set fails, the selection is made
    again on the newer state, and after three lost races it waits for the row's lock."""
    from worldbook import retrieval

    book_id = create(api, TIMED)["book_id"]
    turn(api, book_id, "ring the bell", 1)
    real_select, races = retrieval.select, {"left": writers}

    def racing_select(*args, **kwargs):
        if races["left"]:
            races["left"] -= 1
            row = TimedEffectState.objects.get(tenant=tenant, conversation_id="conv-1")
            state = {**row.state, "other:entry": {"activated_at": 1, "sticky_until": 9,
                                                  "cooldown_until": None}}  # fmt: skip
            TimedEffectState.objects.filter(pk=row.pk).update(state=state, version=row.version + 1)
        return real_select(*args, **kwargs)

    monkeypatch.setattr(retrieval, "select", racing_select)
    assert turn(api, book_id, "the horn", 2)["horn"] == "keyword"
    row = TimedEffectState.objects.get(tenant=tenant, conversation_id="conv-1")
    assert "other:entry" in row.state  # the concurrent write survived
    assert row.state[f"{book_id}:horn"]["activated_at"] == 2  # and so did this one
    assert row.version == 1 + writers + 1
