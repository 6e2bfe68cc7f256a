"""Nested conversation actions: messages, archive, rollback, turns, ws-ticket."""

from __future__ import annotations

import pytest
from django.core import signing

from console.tickets import redeem_ticket
from memory import services as message_store
from memory.models import Message

MESSAGE_FIELDS = {
    "id", "role", "content", "kind", "status", "metadata", "timestamp", "archived", "created_at",
    "selected_alternative", "edited", "display", "reasoning",
}  # fmt: skip


@pytest.fixture
def history(tenant, conversation):
    """Ten messages, alternating user/assistant, in ascending time."""
    return [
        message_store.save_message(
            tenant, conversation.session_id, role="user" if i % 2 == 0 else "assistant",
            content=f"m{i}", kind="chat" if i % 3 else None, metadata={"i": i},
        )
        for i in range(10)
    ]  # fmt: skip


def _url(conversation, tail=""):
    return f"/api/v1/conversations/{conversation.id}/{tail}"


def test_messages_are_returned_ascending_with_their_fields(api, conversation, history):
    body = api.get(_url(conversation, "messages")).json()
    assert set(body) == {"results"}
    rows = body["results"]
    assert [r["content"] for r in rows] == [f"m{i}" for i in range(10)]
    assert all(set(r) == MESSAGE_FIELDS for r in rows)
    assert [r["timestamp"] for r in rows] == sorted(r["timestamp"] for r in rows)
    assert rows[0]["id"] == str(history[0].id) and rows[0]["metadata"] == {"i": 0}
    assert rows[0]["kind"] is None and rows[1]["kind"] == "chat"


def test_limit_returns_the_latest_n_in_ascending_order(api, conversation, history):
    rows = api.get(_url(conversation, "messages?limit=3")).json()["results"]
    assert [r["content"] for r in rows] == ["m7", "m8", "m9"]


def test_archive_keeps_the_latest_n_and_hides_the_rest(api, conversation, history):
    response = api.post(_url(conversation, "messages/archive"), {"keep_recent": 4}, format="json")
    assert response.status_code == 200 and response.json() == {"archived": 6}
    active = api.get(_url(conversation, "messages")).json()["results"]
    assert [r["content"] for r in active] == ["m6", "m7", "m8", "m9"]
    everything = api.get(_url(conversation, "messages?include_archived=true")).json()["results"]
    assert [r["content"] for r in everything] == [f"m{i}" for i in range(10)]
    assert [r["archived"] for r in everything] == [True] * 6 + [False] * 4
    # Archiving again with the same N is a no-op.
    again = api.post(_url(conversation, "messages/archive"), {"keep_recent": 4}, format="json")
    assert again.json() == {"archived": 0}


def test_include_archived_with_a_limit(api, conversation, history):
    api.post(_url(conversation, "messages/archive"), {"keep_recent": 0}, format="json")
    assert api.get(_url(conversation, "messages")).json()["results"] == []
    rows = api.get(_url(conversation, "messages?include_archived=1&limit=2")).json()["results"]
    assert [r["content"] for r in rows] == ["m8", "m9"]


def test_rollback_deletes_by_timestamps(api, conversation, history):
    stamps = [history[-1].ts, history[-2].ts, 1]  # a stamp that matches nothing is ignored
    response = api.post(
        _url(conversation, "messages/rollback"), {"timestamps": stamps}, format="json"
    )
    assert response.status_code == 200 and response.json() == {"deleted": 2}
    rows = api.get(_url(conversation, "messages")).json()["results"]
    assert [r["content"] for r in rows] == [f"m{i}" for i in range(8)]


def test_rollback_only_touches_this_conversation(api, tenant, conversation, player, character):
    from roleplay.models import Conversation

    other = Conversation.objects.create(tenant=tenant, player=player, character=character)
    mine = message_store.save_message(tenant, conversation.session_id, role="user", content="a")
    theirs = message_store.save_message(tenant, other.session_id, role="user", content="b")
    api.post(
        _url(conversation, "messages/rollback"), {"timestamps": [mine.ts, theirs.ts]}, format="json"
    )
    assert not Message.objects.filter(pk=mine.pk).exists()
    assert Message.objects.filter(pk=theirs.pk).exists()


def test_turns_lists_the_conversation_turns_newest_first(api, tenant, conversation):
    import uuid

    from roleplay.models import Turn

    for i in range(3):
        Turn.objects.create(
            tenant=tenant, conversation=conversation, client_message_id=f"c{i}",
            user_message_id=uuid.uuid4(), assistant_message_id=uuid.uuid4(),
            status="complete", usage={"total_tokens": i},
        )  # fmt: skip
    rows = api.get(_url(conversation, "turns")).json()["results"]
    assert [r["client_message_id"] for r in rows] == ["c2", "c1", "c0"]
    assert set(rows[0]) == {
        "id", "kind", "client_message_id", "user_message_id", "assistant_message_id", "speaker",
        "status",
        "error_code", "usage", "trace", "started_at", "finished_at",
    }  # fmt: skip


def test_ws_ticket_is_signed_single_use_and_bound_to_the_conversation(play_api, conversation):
    response = play_api.post(_url(conversation, "ws-ticket"))
    assert response.status_code == 201
    body = response.json()
    assert set(body) == {"ticket", "expires_in", "url"}
    assert body["expires_in"] > 0
    assert body["url"] == f"/ws/conversations/{conversation.id}/?ticket={body['ticket']}"
    assert redeem_ticket(body["ticket"], "00000000-0000-0000-0000-000000000000") is None
    assert redeem_ticket(body["ticket"], str(conversation.id)) == str(conversation.tenant_id)
    assert redeem_ticket(body["ticket"], str(conversation.id)) is None  # burnt on first use
    forged = body["ticket"][:-2] + ("AA" if not body["ticket"].endswith("AA") else "BB")
    with pytest.raises(signing.BadSignature):
        signing.loads(forged, salt="roleplay.ws-ticket")
    assert redeem_ticket(forged, str(conversation.id)) is None


def test_each_ticket_is_distinct(play_api, conversation):
    tickets = {play_api.post(_url(conversation, "ws-ticket")).json()["ticket"] for _ in range(3)}
    assert len(tickets) == 3


def test_messages_need_play_scope(content_api, conversation, history):
    assert content_api.get(_url(conversation, "messages")).status_code == 403
