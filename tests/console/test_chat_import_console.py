"""The console's chat import: a file becomes a conversation, a bad file is shown its code."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory.models import Message
from roleplay.models import Conversation

pytestmark = pytest.mark.django_db

URL = "/console/conversations/import/"
CHAT = "\n".join(
    json.dumps(item)
    for item in [
        {"user_name": "Ann", "character_name": "Mira"},
        {"name": "Mira", "is_user": False, "mes": "Welcome."},
        {"name": "Ann", "is_user": True, "mes": "Hello there."},
        {"name": "Mira", "is_user": False, "mes": "Sit by the fire."},
        {"name": "Ann", "is_user": True, "mes": "(note)", "is_system": True},
    ]
).encode()


def test_a_chat_file_becomes_a_conversation(operator_client, tenant, character):
    page = operator_client.get(URL)
    assert page.status_code == 200 and 'id="chat-import"' in page.content.decode()
    upload = SimpleUploadedFile("Mira chat.jsonl", CHAT)
    response = operator_client.post(URL, {"file": upload, "character": str(character.pk)})
    assert response.status_code == 302
    conversation = Conversation.objects.get(tenant=tenant)
    assert response["Location"] == f"/console/conversations/{conversation.pk}/"
    assert conversation.title == "Mira chat" and conversation.greeting_index == 0
    assert list(
        Message.objects.filter(session_id=conversation.session_id)
        .order_by("ts")
        .values_list("role", "content")
    ) == [("user", "Hello there."), ("assistant", "Sit by the fire.")]
    shown = operator_client.get(response["Location"]).content.decode()
    assert "Imported 2 messages from Mira chat.jsonl (1 left out)" in shown
    assert "Sit by the fire." in shown


def test_a_bad_file_is_shown_its_code_and_writes_nothing(operator_client, tenant, character):
    upload = SimpleUploadedFile("bad.jsonl", b'{"mes": "a"}\n{oops')
    response = operator_client.post(URL, {"file": upload, "character": str(character.pk)})
    assert response.status_code == 200 and "invalid_chat_file" in response.content.decode()
    assert not Conversation.objects.filter(tenant=tenant).exists()


def test_a_viewer_cannot_import(viewer_client):
    assert viewer_client.get(URL).status_code == 403


def test_a_conversation_downloads_as_a_chat_file(operator_client, conversation):
    page = operator_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert 'id="conversation-export"' in page
    response = operator_client.get(f"/console/conversations/{conversation.pk}/export/")
    assert response.status_code == 200 and response["Content-Type"] == "application/jsonl"
    header, opening = (json.loads(line) for line in response.content.decode().splitlines())
    assert header["character_name"] == "Mira" and opening["mes"] == "Welcome."
    plain = operator_client.get(f"/console/conversations/{conversation.pk}/export/?format=openai")
    assert json.loads(plain.content) == [{"role": "assistant", "content": "Welcome."}]
