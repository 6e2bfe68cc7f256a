"""Character pages: create, edit, delete round trips and server-side validation."""

from __future__ import annotations

import pytest

from memory import services as message_store
from roleplay.models import Character, Conversation

pytestmark = pytest.mark.django_db


def test_list_shows_characters_and_their_conversation_counts(operator_client, conversation):
    page = operator_client.get("/console/characters/").content.decode()
    assert "Mira" in page and "A lighthouse keeper." in page
    assert f'href="/console/conversations/?character={conversation.character.pk}">1<' in page


def test_create_edit_delete_round_trip(operator_client, tenant, model_config):
    response = operator_client.post(
        "/console/characters/new/",
        {
            "name": "Orin",
            "description": "A ferryman.",
            "first_message": "Fare, please.",
            "example_dialogues": "<START>\nOrin: Mind the gap.",
            "model_config": str(model_config.pk),
        },
    )
    orin = Character.objects.get(tenant=tenant, name="Orin")
    assert response.status_code == 302
    assert response["Location"] == f"/console/characters/{orin.pk}/"
    assert orin.first_message == "Fare, please."
    assert orin.example_dialogues.endswith("Mind the gap.")
    assert orin.model_config == model_config

    page = operator_client.get(f"/console/characters/{orin.pk}/").content.decode()
    assert "A ferryman." in page and "Character “Orin” created." in page

    response = operator_client.post(
        f"/console/characters/{orin.pk}/",
        {"name": "Orin the Elder", "description": "Older.", "model_config": ""},
    )
    assert response.status_code == 302
    orin.refresh_from_db()
    assert (orin.name, orin.description, orin.model_config) == ("Orin the Elder", "Older.", None)
    assert orin.first_message == ""  # an emptied textarea is saved as empty

    confirm = operator_client.get(f"/console/characters/{orin.pk}/delete/")
    assert confirm.status_code == 200 and "Delete character" in confirm.content.decode()
    assert Character.objects.filter(pk=orin.pk).exists()  # GET only asks
    response = operator_client.post(f"/console/characters/{orin.pk}/delete/")
    assert response.status_code == 302 and response["Location"] == "/console/characters/"
    assert not Character.objects.filter(pk=orin.pk).exists()


def test_validation_errors_are_shown_and_nothing_is_saved(operator_client, tenant, foreign):
    response = operator_client.post(
        "/console/characters/new/",
        {"name": "", "first_message": "x" * 20_001, "model_config": str(foreign["config"].pk)},
    )
    assert response.status_code == 200
    page = response.content.decode()
    assert "This field is required." in page
    assert "Ensure this value has at most 20000 characters" in page
    assert "Select a valid choice" in page  # another tenant's config is not a choice
    assert not Character.objects.filter(tenant=tenant).exists()


def test_model_config_choices_are_the_tenants_own(operator_client, model_config, foreign):
    page = operator_client.get("/console/characters/new/").content.decode()
    assert f'value="{model_config.pk}"' in page
    assert str(foreign["config"].pk) not in page


def test_delete_takes_conversations_and_their_messages(operator_client, tenant, conversation):
    message_store.save_message(tenant, conversation.session_id, role="user", content="hi")
    confirm = operator_client.get(f"/console/characters/{conversation.character.pk}/delete/")
    assert "1 conversation(s) and their messages" in confirm.content.decode()
    operator_client.post(f"/console/characters/{conversation.character.pk}/delete/")
    assert not Conversation.objects.filter(pk=conversation.pk).exists()
    from memory.models import Message

    assert not Message.objects.filter(tenant=tenant, session_id=conversation.session_id).exists()
