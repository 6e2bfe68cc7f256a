"""Getting to a chat: "Chat" on a character starts a conversation with the defaults and
opens the chat page; the dashboard's getting-started list; lists and pickers of characters,
players and model configs that can be searched and tell same-named items apart."""

from __future__ import annotations

import re

import pytest

from console.models import Player
from roleplay.conversations.services import conversations
from roleplay.models import Character, Conversation

pytestmark = pytest.mark.django_db


def chat(client, character, **data):
    return client.post(f"/console/characters/{character.pk}/chat/", data)


def test_chat_starts_a_conversation_as_me_and_opens_the_chat_page(
    operator_client, operator_user, character
):
    response = chat(operator_client, character)
    assert response.status_code == 302
    conversation = Conversation.objects.get(character=character)
    assert response["Location"] == f"/play/{conversation.pk}/"
    assert conversation.player.external_id == "console:op"
    assert conversation.player.user == operator_user
    assert conversation.greeting_index == 0
    assert (conversation.persona, conversation.model_config, conversation.scenario) == (
        None,
        None,
        None,
    )
    page = operator_client.get(response["Location"]).content.decode()
    assert ">Welcome.</div>" in page  # the card's first message opens it

    chat(operator_client, character)  # a second click: a second conversation, same player
    assert Conversation.objects.filter(character=character).count() == 2
    assert Player.objects.filter(external_id="console:op").count() == 1


def test_chat_as_a_chosen_player(operator_client, character, player):
    response = chat(operator_client, character, player=player.pk)
    assert response.status_code == 302
    assert Conversation.objects.get(character=character).player == player


def test_chat_refuses_another_tenants_player_and_character(operator_client, character, foreign):
    response = chat(operator_client, character, player=foreign["player"].pk)
    assert response.status_code == 302
    assert response["Location"] == f"/console/characters/{character.pk}/"
    assert not Conversation.objects.filter(character=character).exists()
    assert chat(operator_client, foreign["character"]).status_code == 404


def test_viewers_cannot_start_a_chat_and_get_is_not_a_door(
    viewer_client, operator_client, character
):
    assert chat(viewer_client, character).status_code == 403
    assert operator_client.get(f"/console/characters/{character.pk}/chat/").status_code == 405
    assert not Conversation.objects.exists()


@pytest.mark.parametrize(
    ("first", "alternates", "index"),
    [("Hello.", [], 0), ("", ["Hi there."], 1), ("  ", [], None)],
)
def test_the_default_opening(tenant, player, first, alternates, index):
    character = Character.objects.create(
        tenant=tenant, name="Lia", first_message=first, alternate_greetings=alternates
    )
    started = conversations.start_chat(tenant, character=character, player=player)
    assert started.greeting_index == index


def test_dashboard_lists_the_first_steps(operator_client, admin_client, character):
    page = operator_client.get("/console/").content.decode()
    steps = re.search(r'<section class="card getting-started".*?</section>', page, re.S).group(0)
    assert f'action="/console/characters/{character.pk}/chat/"' in steps
    assert 'href="/console/characters/import/"' in steps
    assert "Ask an admin to add a real model" in steps
    admin = admin_client.get("/console/").content.decode()
    assert 'href="/console/models/new/">Add a real model</a>' in admin


def test_dashboard_offers_the_demo_character(operator_client, tenant, character):
    demo = Character.objects.create(tenant=tenant, name="Mira", tags=["lighthouse", "demo"])
    page = operator_client.get("/console/").content.decode()
    assert f'action="/console/characters/{demo.pk}/chat/"' in page
    assert f'action="/console/characters/{character.pk}/chat/"' not in page


@pytest.fixture
def many_lias(tenant):
    rows = [
        Character(tenant=tenant, name="Lia", creator=f"maker{i}", tags=["elf"] if i == 7 else [])
        for i in range(24)
    ]
    return Character.objects.bulk_create(rows)


def test_characters_are_searched_and_told_apart(operator_client, many_lias):
    page = operator_client.get("/console/characters/").content.decode()
    assert page.count('class="characters"') == 1 and "maker23" in page
    found = operator_client.get("/console/characters/?q=MAKER7").content.decode()
    assert "maker7" in found and "maker8" not in found
    by_tag = operator_client.get("/console/characters/?q=elf").content.decode()
    assert by_tag.count('<tr id="character-') == 1
    none = operator_client.get("/console/characters/?q=nobody").content.decode()
    assert "No character matches “nobody”." in none


def test_the_new_conversation_pickers_say_who_is_who(
    operator_client, many_lias, player, model_config
):
    page = operator_client.get("/console/conversations/new/").content.decode()
    select = re.search(r'<select name="character"[^>]*>', page).group(0)
    assert "data-search" in select
    lia = many_lias[3]
    label = f"Lia · by maker3 · {lia.created_at:%Y-%m-%d} · {str(lia.pk)[:8]}"
    assert f'<option value="{lia.pk}">{label}</option>' in page
    assert f'<option value="{player.pk}">Ann (p-1)</option>' in page
    config = f"{model_config.name} · {model_config.provider} {model_config.model}"
    assert config in page
    assert re.search(r'<select name="player"[^>]*data-search', page)


def test_players_and_model_configs_are_searched(operator_client, tenant, player, model_config):
    Player.objects.create(tenant=tenant, external_id="discord:42", display_name="Bo")
    found = operator_client.get("/console/players/?q=discord").content.decode()
    assert "discord:42" in found and "p-1" not in found
    configs = operator_client.get(f"/console/models/?q={model_config.model}").content.decode()
    assert f'id="config-{model_config.pk}"' in configs
    assert 'id="config-' not in operator_client.get("/console/models/?q=zzz").content.decode()
