"""A reply's reasoning through the REST door and SillyTavern's chat files (``extra.reasoning``):
shown read-only by the message API, written by the export, read back by the import; the
message store caps it; a preset file's ``reasoning.add_to_prompts`` is the preset's option."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from memory import alternatives
from memory import services as message_store
from memory.models import Message, MessageAlternative
from roleplay.models import Conversation, Preset
from roleplay.prompting.default_preset import default_prompt_data

pytestmark = pytest.mark.django_db


@pytest.fixture
def thought(tenant, conversation):
    session = conversation.session_id
    message_store.save_message(tenant, session, role="user", content="Is the lamp lit?")
    reply = message_store.save_message(
        tenant, session, role="assistant", content="Not yet.", reasoning="It is dark out."
    )
    alternatives.add_alternative(
        tenant, reply.pk, content="It is now.", status="complete", reasoning="Light it first."
    )
    return reply


def test_the_message_api_shows_reasoning_and_does_not_take_it(api, conversation, thought):
    url = f"/api/v1/conversations/{conversation.pk}/messages/"
    rows = api.get(url).json()["results"]
    reply = next(m for m in rows if m["id"] == str(thought.pk))
    assert (reply["content"], reply["reasoning"]) == ("It is now.", "Light it first.")
    shown = api.get(f"{url}{thought.pk}/alternatives/").json()["results"]
    assert [(a["content"], a["reasoning"]) for a in shown] == [
        ("Not yet.", "It is dark out."),
        ("It is now.", "Light it first."),
    ]


def test_a_sillytavern_chat_carries_reasoning_both_ways(api, conversation, thought, player):
    response = api.get(f"/api/v1/conversations/{conversation.pk}/export")
    assert response.status_code == 200
    data = b"".join(response.streaming_content) if response.streaming else response.content
    lines = [json.loads(line) for line in data.decode().splitlines()]
    reply = next(line for line in lines if line.get("mes") == "It is now.")
    assert reply["extra"]["reasoning"] == "Light it first."
    upload = SimpleUploadedFile("back.jsonl", data)
    body = api.post(
        "/api/v1/conversations/import",
        {"file": upload, "player": str(player.pk), "character": str(conversation.character_id)},
        format="multipart",
    ).json()
    again = Conversation.objects.get(pk=body["conversation"]["id"])
    copied = Message.objects.get(session_id=again.session_id, role="assistant")
    assert (copied.content, copied.reasoning) == ("It is now.", "Light it first.")
    selected = MessageAlternative.objects.get(message=copied, index=copied.selected_alternative)
    assert selected.reasoning == "Light it first."


def test_the_store_caps_reasoning_with_a_marker(tenant, conversation):
    long = "x" * (message_store.MAX_REASONING_CHARS + 10)
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="Hi.", reasoning=long
    )
    stored = Message.objects.get(pk=reply.pk).reasoning
    assert len(stored) == message_store.MAX_REASONING_CHARS
    assert stored.endswith(message_store.TRUNCATED)


@pytest.mark.parametrize(("carried", "on"), [(True, True), (False, False), ("yes", False)])
def test_a_preset_file_s_add_to_prompts_is_the_preset_s_option(api, carried, on):
    native = {"format": "roleplay-preset", "name": "thinks", "prompts": default_prompt_data()}
    native["reasoning"] = {"add_to_prompts": carried}
    response = api.post("/api/v1/presets/import", {"preset": native}, format="json")
    assert response.status_code == 201, response.content[:500]
    body = response.json()["preset"]
    assert body["reasoning_in_prompt"] is on
    preset = Preset.objects.get(pk=body["id"])
    exported = api.get(f"/api/v1/presets/{preset.pk}/export", {"format": "sillytavern"}).json()
    assert exported["reasoning"] == {"add_to_prompts": on}


def test_a_preset_s_option_is_changed_through_the_api(api):
    created = api.post("/api/v1/presets/", {"name": "plain"}, format="json").json()
    assert created["reasoning_in_prompt"] is False
    changed = api.patch(
        f"/api/v1/presets/{created['id']}/",
        {"reasoning_in_prompt": True, "version": created["version"]},
        format="json",
    )
    assert changed.status_code == 200, changed.content[:500]
    assert changed.json()["reasoning_in_prompt"] is True
