"""The author's note of characters and conversations: one stored shape checked by the
services for every door (REST, console, card import), the conversation's replacing the
character's in the prompt, and SillyTavern's ``depth_prompt`` carried through card files."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roleplay.characters.cards.mapping import card_to_fields
from roleplay.characters.cards.report import CardReport
from roleplay.characters.services import characters
from roleplay.conversations.services import conversations
from roleplay.errors import FieldErrors
from roleplay.models import Character, Conversation
from tests.characters.cardfiles import as_json, v2_card

pytestmark = pytest.mark.django_db

NOTE = {"content": "Keep the fog thick.", "depth": 2}


def test_a_note_is_stored_with_every_field_filled_in(character):
    characters.update_character(character, author_note=NOTE)
    character.refresh_from_db()
    assert character.author_note == {
        "content": "Keep the fog thick.",
        "position": "in_chat",
        "depth": 2,
        "frequency": 1,
        "role": "system",
    }
    characters.update_character(character, author_note={"content": "   "})
    character.refresh_from_db()
    assert character.author_note == {}


@pytest.mark.parametrize(
    "bad",
    [
        {"content": "x", "depth": -1},
        {"content": "x", "position": "somewhere"},
        {"content": "x", "role": "narrator"},
        {"content": "x", "frequency": "2"},
        {"content": "x", "surprise": 1},
        {"content": "x" * 20_001},
        {"content": "nul\x00"},
        ["not", "an", "object"],
    ],
)
def test_a_bad_note_is_refused_and_changes_nothing(character, conversation, bad):
    with pytest.raises(FieldErrors) as raised:
        characters.update_character(character, author_note=bad)
    assert "author_note" in raised.value.by_field
    with pytest.raises(FieldErrors):
        conversations.update_conversation(conversation, author_note=bad)
    assert Character.objects.get(pk=character.pk).author_note == {}
    assert Conversation.objects.get(pk=conversation.pk).author_note == {}


def test_the_api_reads_and_writes_both_notes(api, character, conversation):
    response = api.patch(
        f"/api/v1/characters/{character.pk}",
        {"author_note": {**NOTE, "position": "after_prompt"}},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["author_note"]["position"] == "after_prompt"
    response = api.patch(
        f"/api/v1/conversations/{conversation.pk}",
        {"author_note": {"content": "Rain now.", "frequency": 3}},
        format="json",
    )
    assert response.status_code == 200, response.content
    assert response.json()["author_note"]["frequency"] == 3
    cleared = api.patch(
        f"/api/v1/conversations/{conversation.pk}", {"author_note": None}, format="json"
    )
    assert cleared.json()["author_note"] == {}


def test_the_api_refuses_a_bad_note_with_a_field_error(api, character):
    response = api.patch(
        f"/api/v1/characters/{character.pk}",
        {"author_note": {"content": "x", "depth": 5000}},
        format="json",
    )
    assert response.status_code == 400
    body = response.json()["error"]
    assert body["code"] == "validation_error"
    assert any(e["loc"].startswith("author_note") for e in body["details"]["errors"])
    assert Character.objects.get(pk=character.pk).author_note == {}


def test_the_conversation_note_replaces_the_characters_in_the_prompt(character, conversation):
    from roleplay.presets.selectors import effective_preset
    from roleplay.turns.preview import preview_prompt

    characters.update_character(character, author_note={"content": "CHARACTER NOTE", "depth": 0})
    conversation.refresh_from_db()
    texts = [m.content for m in preview_prompt(conversation, effective_preset(None)).messages]
    assert "CHARACTER NOTE" in texts
    conversations.update_conversation(
        conversation, author_note={"content": "CONVERSATION NOTE", "depth": 0}
    )
    conversation.refresh_from_db()
    texts = [m.content for m in preview_prompt(conversation, effective_preset(None)).messages]
    assert "CONVERSATION NOTE" in texts and "CHARACTER NOTE" not in texts


def test_the_console_edits_the_characters_note(operator_client, character):
    page = operator_client.get(f"/console/characters/{character.pk}/").content.decode()
    assert 'name="note_content"' in page and 'name="note_position"' in page
    form = {
        "name": character.name,
        "description": character.description,
        "first_message": character.first_message,
        "extensions": "{}",
        "note_content": "Mention the bell.",
        "note_position": "before_prompt",
        "note_depth": "0",
        "note_frequency": "2",
        "note_role": "user",
    }
    response = operator_client.post(f"/console/characters/{character.pk}/", form)
    assert response.status_code == 302, response.content.decode()[:2000]
    character.refresh_from_db()
    assert character.author_note == {
        "content": "Mention the bell.",
        "position": "before_prompt",
        "depth": 0,
        "frequency": 2,
        "role": "user",
    }
    page = operator_client.get(f"/console/characters/{character.pk}/").content.decode()
    assert "Mention the bell." in page


def test_the_console_sets_and_clears_the_conversations_note(operator_client, conversation):
    url = f"/console/conversations/{conversation.pk}/author-note/"
    response = operator_client.post(url, {"note-note_content": "Thunder.", "note-note_depth": "1"})
    assert response.status_code == 302
    conversation.refresh_from_db()
    assert conversation.author_note["content"] == "Thunder."
    assert conversation.author_note["depth"] == 1
    page = operator_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert "Thunder." in page
    operator_client.post(url, {"note-note_depth": "-5", "note-note_content": "x"})
    conversation.refresh_from_db()
    assert conversation.author_note["content"] == "Thunder."  # a bad post changes nothing
    operator_client.post(url, {"note-note_content": ""})
    conversation.refresh_from_db()
    assert conversation.author_note == {}


def test_a_viewer_cannot_set_a_note(viewer_client, conversation):
    url = f"/console/conversations/{conversation.pk}/author-note/"
    assert viewer_client.post(url, {"note-note_content": "x"}).status_code == 403


def test_sillytaverns_depth_prompt_becomes_the_note_and_goes_back_out(api, tenant):
    depth_prompt = {"prompt": "{{char}} hums.", "depth": 3, "role": "assistant"}
    card = v2_card(extensions={"depth_prompt": depth_prompt, "talkativeness": "0.5"})
    report = CardReport("json", "0" * 64)
    fields = card_to_fields(card, "ccv2", report)
    assert fields["author_note"] == {
        "content": "{{char}} hums.",
        "position": "in_chat",
        "depth": 3,
        "frequency": 1,
        "role": "assistant",
    }
    upload = SimpleUploadedFile("mira.json", as_json(card), content_type="application/json")
    created = api.post("/api/v1/characters/import", {"file": upload}, format="multipart")
    assert created.status_code == 201, created.content[:500]
    pk = created.json()["character"]["id"]
    assert Character.objects.get(pk=pk).author_note["content"] == "{{char}} hums."
    api.patch(f"/api/v1/characters/{pk}", {"author_note": {"content": "New."}}, format="json")
    exported = json.loads(api.get(f"/api/v1/characters/{pk}/export?format=ccv2_json").content)
    assert exported["data"]["extensions"]["depth_prompt"] == {
        "prompt": "New.",
        "depth": 4,
        "role": "system",
    }
    assert exported["data"]["extensions"]["talkativeness"] == "0.5"


@pytest.mark.parametrize(
    "junk", [None, "text", {"prompt": ""}, {"prompt": 5}, {"prompt": "x", "depth": "deep"}]
)
def test_a_malformed_depth_prompt_never_breaks_an_import(junk):
    fields = card_to_fields(v2_card(extensions={"depth_prompt": junk}), "ccv2", CardReport("j", ""))
    note = fields.get("author_note")
    assert note is None or (note["content"] == "x" and note["depth"] == 4)
