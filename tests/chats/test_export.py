"""``GET /api/v1/conversations/{id}/export``: a conversation as a SillyTavern chat or an
OpenAI message array, which the import reads back as the same conversation."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory import alternatives
from memory import services as message_store
from memory.models import Message, MessageAlternative
from roleplay.conversations.chats.read import read_chat
from roleplay.models import Conversation
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db


@pytest.fixture
def talked(tenant, conversation, character):
    character.alternate_greetings = ["{{char}} nods at {{user}}."]
    character.save()
    conversation.greeting_index = 1
    conversation.title = "Night watch"
    conversation.author_note = {
        "content": "Storm tonight.", "position": "in_chat", "depth": 2, "frequency": 1,
        "role": "system",
    }  # fmt: skip
    conversation.save()
    session = conversation.session_id
    message_store.save_message(tenant, session, role="user", content="Is the lamp lit?")
    reply = message_store.save_message(tenant, session, role="assistant", content="Not yet.")
    alternatives.add_alternative(tenant, reply.pk, content="It is now.", status="complete")
    message_store.save_message(tenant, session, role="user", content="Then let us climb.")
    return conversation


def export(api, conversation, **query):
    return api.get(f"/api/v1/conversations/{conversation.pk}/export", query)


def test_a_sillytavern_export_reads_back_as_the_same_conversation(api, talked, player):
    response = export(api, talked)
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"] == "application/jsonl"
    assert 'filename="Mira - Night watch.jsonl"' in response["Content-Disposition"]
    data = b"".join(response.streaming_content) if response.streaming else response.content
    lines = [json.loads(line) for line in data.decode().splitlines()]
    assert lines[0]["character_name"] == "Mira" and lines[0]["user_name"] == "Ann"
    assert lines[0]["chat_metadata"]["note_prompt"] == "Storm tonight."
    assert lines[1]["swipes"] == ["Welcome.", "Mira nods at Ann."] and lines[1]["swipe_id"] == 1
    assert lines[3]["swipes"] == ["Not yet.", "It is now."] and lines[3]["swipe_id"] == 1
    chat = read_chat(data)
    stored = list(Message.objects.filter(session_id=talked.session_id).order_by("ts"))
    assert [(m.role, m.content, m.sent_ms) for m in chat.messages[1:]] == [
        (m.role, m.content, m.ts) for m in stored
    ]
    # imported again: the same opening, messages, alternatives and times
    upload = SimpleUploadedFile("back.jsonl", data)
    body = api.post(
        "/api/v1/conversations/import",
        {"file": upload, "player": str(player.pk), "character": str(talked.character_id)},
        format="multipart",
    ).json()
    again = Conversation.objects.get(pk=body["conversation"]["id"])
    assert again.greeting_index == 1 and body["report"]["opening"] == "greeting"
    assert again.author_note == talked.author_note and body["report"]["author_note"] is True
    copied = list(Message.objects.filter(session_id=again.session_id).order_by("ts"))
    assert [(m.role, m.content, m.ts, m.selected_alternative) for m in copied] == [
        (m.role, m.content, m.ts, m.selected_alternative) for m in stored
    ]
    assert list(
        MessageAlternative.objects.filter(message=copied[1]).values_list("content", flat=True)
    ) == ["Not yet.", "It is now."]


def test_an_openai_export(api, talked):
    response = export(api, talked, format="openai")
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    assert json.loads(response.content) == [
        {"role": "assistant", "content": "Mira nods at Ann."},
        {"role": "user", "content": "Is the lamp lit?"},
        {"role": "assistant", "content": "It is now."},
        {"role": "user", "content": "Then let us climb."},
    ]


def test_bad_format_and_foreign_conversation(api, api_client_for, other_tenant, talked):
    assert_error(export(api, talked, format="html"), 400, "validation_error")
    assert_error(export(api, talked, colour="red"), 400, "validation_error")
    assert_error(export(api_client_for(other_tenant), talked), 404, "not_found")
