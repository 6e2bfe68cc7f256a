"""Conversation pages: list with counts, new conversation, the transcript with turn traces."""

from __future__ import annotations

import uuid

import pytest

from console.models import Player
from memory import services as message_store
from roleplay.models import Conversation, Turn

pytestmark = pytest.mark.django_db


def _say(tenant, conversation, role, content):
    return message_store.save_message(tenant, conversation.session_id, role=role, content=content)


def test_list_shows_character_player_status_and_message_count(
    operator_client, tenant, conversation
):
    for i in range(3):
        _say(tenant, conversation, "user", f"line {i}")
    message_store.trim_history(tenant, conversation.session_id, keep_recent=1)
    page = operator_client.get("/console/conversations/").content.decode()
    row = page[page.index(f'id="conversation-{conversation.pk}"') :]
    row = row[: row.index("</tr>")]
    assert "Mira" in row and "Ann" in row and "active" in row
    assert '<td class="num">3</td>' in row  # archived messages count too
    assert f'href="/play/{conversation.pk}/"' in row


def test_list_filters_by_status_and_character(operator_client, tenant, conversation, player):
    from roleplay.models import Character

    other = Character.objects.create(tenant=tenant, name="Orin")
    archived = Conversation.objects.create(
        tenant=tenant, player=player, character=other, title="Old chat", status="archived"
    )
    page = operator_client.get("/console/conversations/?status=archived").content.decode()
    assert f"conversation-{archived.pk}" in page and f"conversation-{conversation.pk}" not in page
    page = operator_client.get(f"/console/conversations/?character={other.pk}").content.decode()
    assert f"conversation-{archived.pk}" in page and f"conversation-{conversation.pk}" not in page
    page = operator_client.get("/console/conversations/?status=bogus").content.decode()
    assert f"conversation-{archived.pk}" in page and f"conversation-{conversation.pk}" in page


def test_new_conversation_as_me_creates_my_player_once(
    operator_client, operator_user, tenant, character
):
    for _ in range(2):
        response = operator_client.post(
            "/console/conversations/new/", {"character": str(character.pk), "title": "Hi"}
        )
        assert response.status_code == 302
    players = Player.objects.filter(tenant=tenant, external_id="console:op")
    assert players.count() == 1 and players.get().user == operator_user
    conversations = Conversation.objects.filter(tenant=tenant, player=players.get())
    assert conversations.count() == 2
    newest = conversations.order_by("-created_at").first()
    assert response["Location"] == f"/console/conversations/{newest.pk}/"
    assert newest.character == character and newest.title == "Hi"


def test_new_conversation_for_a_chosen_player(operator_client, tenant, character, player):
    operator_client.post(
        "/console/conversations/new/",
        {"character": str(character.pk), "player": str(player.pk)},
    )
    assert Conversation.objects.filter(tenant=tenant, player=player, character=character).exists()
    assert not Player.objects.filter(tenant=tenant, external_id="console:op").exists()


def test_new_conversation_may_start_without_an_opening(operator_client, tenant, character, player):
    response = operator_client.post(
        "/console/conversations/new/",
        {"character": str(character.pk), "player": str(player.pk), "greeting_index": "none"},
    )
    assert response.status_code == 302
    conversation = Conversation.objects.get(tenant=tenant, player=player)
    assert conversation.greeting_index is None
    page = operator_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert "None: the conversation starts with its own first message" in page


def test_new_conversation_may_choose_its_scenario(operator_client, tenant, character, player):
    from roleplay.models import ModelConfig
    from roleplay.scenarios.services import create_scenario

    config = ModelConfig.objects.create(tenant=tenant, name="a", provider="llama_cpp", model="m")
    scenario = create_scenario(tenant, name="Mystery", model_config=config)
    page = operator_client.get("/console/conversations/new/").content.decode()
    assert "Mystery" in page
    operator_client.post(
        "/console/conversations/new/",
        {"character": str(character.pk), "player": str(player.pk), "scenario": str(scenario.pk)},
    )
    made = Conversation.objects.get(tenant=tenant, player=player)
    assert made.scenario == scenario


def test_new_conversation_rejects_foreign_and_missing_choices(operator_client, tenant, foreign):
    response = operator_client.post(
        "/console/conversations/new/",
        {"character": str(foreign["character"].pk), "player": str(foreign["player"].pk)},
    )
    assert response.status_code == 200
    assert response.content.decode().count("Select a valid choice") == 2
    response = operator_client.post("/console/conversations/new/", {})
    assert "This field is required." in response.content.decode()
    assert not Conversation.objects.filter(tenant=tenant).exists()


def test_new_conversation_form_offers_me_and_preselects_character(operator_client, character):
    page = operator_client.get(f"/console/conversations/new/?character={character.pk}")
    html = page.content.decode()
    assert "Me (console:op)" in html
    assert f'<option value="{character.pk}" selected>' in html


def test_transcript_shows_archived_messages_and_turn_traces(
    operator_client, tenant, conversation, model_config
):
    first = _say(tenant, conversation, "user", "An old question")
    _say(tenant, conversation, "assistant", "An old answer")
    message_store.trim_history(tenant, conversation.session_id, keep_recent=0)
    user = _say(tenant, conversation, "user", "Where is the <lamp>?")
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="Upstairs.", status="failed"
    )
    Turn.objects.create(
        tenant=tenant,
        conversation=conversation,
        client_message_id="c-1",
        user_message_id=user.id,
        assistant_message_id=reply.id,
        status="failed",
        model_config=model_config,
        error_code="model_server_error",
        trace={
            "read": {"history_messages": 2, "model_config": str(model_config.pk)},
            "prompt": {"tokens": 321, "budget": 3000, "dropped_history": 0},
            "model": {"model": "scripted-model", "attempts": 3},
            "error": "model_server_error",
            "worldbook": {"selected": ["lighthouse"]},
        },
    )
    Turn.objects.create(
        tenant=tenant,
        conversation=conversation,
        client_message_id="c-0",
        user_message_id=uuid.uuid4(),
        assistant_message_id=uuid.uuid4(),
        status="complete",
    )
    response = operator_client.get(f"/console/conversations/{conversation.pk}/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "An old question" in page and "An old answer" in page
    assert page.count('class="badge archived"') == 2
    assert f'id="message-{first.id}" class="msg-row user complete archived"' in page
    assert "Where is the &lt;lamp&gt;?" in page  # content is escaped
    assert 'class="badge failed">failed' in page
    assert f'href="/play/{conversation.pk}/"' in page
    # The trace, in a collapsible panel, with every section.
    assert "<details" in page and "Trace (read, prompt, model, error, worldbook)" in page
    assert "&quot;history_messages&quot;: 2" in page
    assert "&quot;tokens&quot;: 321" in page and "&quot;attempts&quot;: 3" in page
    assert "model_server_error" in page and "lighthouse" in page
    assert "No trace recorded." in page  # the second turn has none
    # Messages link to their turn.
    assert page.count('href="#turn-1"') == 2


def test_transcript_of_an_empty_conversation(viewer_client, conversation):
    page = viewer_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert "No messages yet." in page and "No turns yet." in page


def test_open_in_play_target_still_renders(operator_client, conversation, foreign):
    page = operator_client.get(f"/play/{conversation.pk}/")
    assert page.status_code == 200 and 'id="play"' in page.content.decode()
    assert operator_client.get(f"/play/{foreign['conversation'].pk}/").status_code == 404
