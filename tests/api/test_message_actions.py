"""A conversation's turns and messages through the REST API: run a turn to its end (chat,
regenerate, continue), edit a message, list and pick alternatives, delete the last exchange
or roll back to a message."""

from __future__ import annotations

import uuid

import pytest

from memory.models import Message, MessageEdit
from roleplay.llm.scripted_server import Reply

pytestmark = pytest.mark.django_db(transaction=True)


def base(conversation) -> str:
    return f"/api/v1/conversations/{conversation.id}"


def run(api, conversation, client_id, kind="chat", content="", key=None):
    body = {"client_message_id": client_id, "kind": kind}
    if content:
        body["content"] = content
    extra = {"HTTP_IDEMPOTENCY_KEY": key} if key else {}
    return api.post(f"{base(conversation)}/turns/run", body, format="json", **extra)


def texts(conversation) -> list[tuple[str, str]]:
    rows = Message.objects.filter(session_id=str(conversation.id)).order_by("ts")
    return [(m.role, m.content) for m in rows]


def test_a_chat_turn_runs_to_its_end_and_a_repeat_returns_it(api, conversation, llm):
    llm.enqueue(Reply(content="The lamp is lit.", chunks=3))
    first = run(api, conversation, "c1", content="Hello")
    assert first.status_code == 201, first.content
    body = first.json()
    assert body["turn"]["status"] == "complete" and body["turn"]["kind"] == "chat"
    assert body["reply"]["content"] == "The lamp is lit."
    again = run(api, conversation, "c1", content="Hello")
    assert again.status_code == 200 and again.json()["turn"]["id"] == body["turn"]["id"]
    assert texts(conversation) == [("user", "Hello"), ("assistant", "The lamp is lit.")]


def test_regenerate_continue_alternatives_and_selection(api, conversation, llm):
    llm.enqueue(Reply(content="One.", chunks=1), Reply(content="Two.", chunks=1))
    reply_id = run(api, conversation, "c1", content="Hi").json()["reply"]["id"]
    regenerated = run(api, conversation, "r1", kind="regenerate").json()
    assert regenerated["turn"]["kind"] == "regenerate"
    assert regenerated["reply"]["id"] == reply_id and regenerated["reply"]["content"] == "Two."
    listed = api.get(f"{base(conversation)}/messages/{reply_id}/alternatives").json()
    assert listed["selected"] == 1
    assert [(a["index"], a["content"]) for a in listed["results"]] == [(0, "One."), (1, "Two.")]
    picked = api.post(
        f"{base(conversation)}/messages/{reply_id}/select-alternative", {"index": 0}, format="json"
    )
    assert picked.status_code == 200 and picked.json()["content"] == "One."
    llm.enqueue(Reply(content=" And more.", chunks=1))
    continued = run(api, conversation, "k1", kind="continue").json()
    assert continued["reply"]["content"] == "One. And more."
    assert texts(conversation) == [("user", "Hi"), ("assistant", "One. And more.")]


def test_an_edit_is_recorded_with_its_editor(api, conversation, llm):
    llm.enqueue(Reply(content="Welcome.", chunks=1))
    reply_id = run(api, conversation, "c1", content="Hi").json()["reply"]["id"]
    edited = api.patch(
        f"{base(conversation)}/messages/{reply_id}",
        {"content": "Welcome, traveller."},
        format="json",
    )
    assert edited.status_code == 200, edited.content
    assert edited.json()["edited"] is True and edited.json()["content"] == "Welcome, traveller."
    edit = MessageEdit.objects.get(message_id=reply_id)
    assert edit.editor == "token:test"


def test_delete_last_and_rollback_to(api, conversation, llm):
    llm.enqueue(Reply(content="A.", chunks=1), Reply(content="B.", chunks=1))
    first = run(api, conversation, "c1", content="One").json()
    run(api, conversation, "c2", content="Two")
    deleted = api.post(f"{base(conversation)}/messages/delete-last").json()["deleted"]
    assert len(deleted) == 2 and texts(conversation) == [("user", "One"), ("assistant", "A.")]
    rolled = api.post(
        f"{base(conversation)}/messages/rollback-to",
        {"message_id": first["reply"]["id"]},
        format="json",
    )
    assert rolled.json()["deleted"] == [first["reply"]["id"]]
    assert texts(conversation) == [("user", "One")]


@pytest.mark.parametrize(
    ("method", "suffix", "body", "status", "code"),
    [
        (
            "post",
            "/turns/run",
            {"client_message_id": "x", "kind": "regenerate"},
            409,
            "nothing_to_rewrite",
        ),
        ("post", "/turns/run", {"client_message_id": "x"}, 400, "empty_content"),
        ("post", "/turns/run", {"client_message_id": "x", "kind": "auto"}, 400, "validation_error"),
        ("post", "/turns/run", {"kind": "chat", "content": "x"}, 400, "validation_error"),
        ("patch", f"/messages/{uuid.UUID(int=1)}", {"content": "x"}, 404, "message_not_found"),
        ("patch", "/messages/not-a-uuid", {"content": "x"}, 404, "message_not_found"),
        ("patch", f"/messages/{uuid.UUID(int=2)}", {"content": "   "}, 400, "empty_content"),
        ("patch", f"/messages/{uuid.UUID(int=3)}", {"text": "x"}, 400, "validation_error"),
        (
            "post",
            "/messages/rollback-to",
            {"message_id": str(uuid.UUID(int=4))},
            404,
            "message_not_found",
        ),
        (
            "post",
            f"/messages/{uuid.UUID(int=5)}/select-alternative",
            {"index": -1},
            400,
            "validation_error",
        ),
    ],
)
def test_bad_requests_change_nothing(api, conversation, llm, method, suffix, body, status, code):
    response = getattr(api, method)(f"{base(conversation)}{suffix}", body, format="json")
    assert response.status_code == status, response.content
    assert response.json()["error"]["code"] == code
    assert texts(conversation) == []


def test_another_tenants_conversation_is_not_found(api_client_for, other_tenant, conversation, llm):
    other = api_client_for(other_tenant)
    response = run(other, conversation, "c1", content="Hi")
    assert response.status_code == 404 and texts(conversation) == []
