"""The REST doors the chat page's new controls have: delete one message (the ones before and
after it stay), and pick the opening among the card's greetings (the page offers it before
the first message).
Each calls the same service as the socket frame, and every socket on the conversation hears
of the change."""

from __future__ import annotations

import pytest

from memory import services as message_store
from memory.models import Message
from roleplay.models import Conversation, Turn, TurnKind

pytestmark = pytest.mark.django_db(transaction=True)


def base(conversation) -> str:
    return f"/api/v1/conversations/{conversation.id}"


def texts(conversation) -> list[str]:
    rows = Message.objects.filter(session_id=str(conversation.id)).order_by("ts")
    return [m.content for m in rows]


@pytest.fixture
def history(conversation):
    save = message_store.save_message
    lines = [("user", "One"), ("assistant", "A."), ("user", "Two"), ("assistant", "B.")]
    return [
        save(conversation.tenant, conversation.session_id, role=role, content=text)
        for role, text in lines
    ]


def test_delete_one_message_keeps_the_others(api, conversation, history):
    response = api.delete(f"{base(conversation)}/messages/{history[1].id}")
    assert response.status_code == 200, response.content
    assert response.json() == {"deleted": [str(history[1].id)]}
    assert texts(conversation) == ["One", "Two", "B."]

    again = api.delete(f"{base(conversation)}/messages/{history[1].id}")
    assert again.status_code == 404 and again.json()["error"]["code"] == "message_not_found"
    assert api.delete(f"{base(conversation)}/messages/not-a-uuid").status_code == 404


def test_delete_one_message_waits_for_a_running_turn(api, conversation, history):
    Turn.objects.create(
        tenant=conversation.tenant,
        conversation=conversation,
        client_message_id="r-1",
        kind=TurnKind.REGENERATE,
        assistant_message_id=history[3].id,
    )
    response = api.delete(f"{base(conversation)}/messages/{history[0].id}")
    assert response.status_code == 409 and response.json()["error"]["code"] == "turn_in_progress"
    assert len(texts(conversation)) == 4


@pytest.fixture
def greetings(character):
    character.alternate_greetings = ["Second hello.", "Third hello."]
    character.save(update_fields=["alternate_greetings"])
    return character


def test_choose_the_opening(api, conversation, greetings):
    response = api.post(f"{base(conversation)}/opening", {"index": 2}, format="json")
    assert response.status_code == 200, response.content
    assert response.json() == {"greeting_index": 2, "greetings": 3, "opening": "Third hello."}
    assert Conversation.objects.get(pk=conversation.pk).greeting_index == 2

    missing = api.post(f"{base(conversation)}/opening", {"index": 3}, format="json")
    assert missing.status_code == 404
    assert missing.json()["error"]["code"] == "opening_not_found"
    bad = api.post(f"{base(conversation)}/opening", {"index": "x"}, format="json")
    assert bad.status_code == 400


def test_another_tenant_cannot_touch_messages_or_opening(
    api_client_for, other_tenant, conversation, history
):
    other = api_client_for(other_tenant)
    assert other.delete(f"{base(conversation)}/messages/{history[0].id}").status_code == 404
    response = other.post(f"{base(conversation)}/opening", {"index": 0}, format="json")
    assert response.status_code == 404
    assert len(texts(conversation)) == 4
