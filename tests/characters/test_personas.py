"""Personas: a player's personas with one default (switched under a lock), the API at
``/api/v1/personas/``, a conversation's choice checked against its player, and
``persona_for`` falling back from the conversation's to the default to the player's name."""

from __future__ import annotations

import threading

import pytest
from django.db import connection

from console.models import Player
from roleplay.conversations.services import conversations
from roleplay.errors import FieldErrors
from roleplay.models import Conversation, Persona
from roleplay.players.selectors import persona_for
from roleplay.players.services import personas
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.characters.cardfiles import image_bytes

pytestmark = pytest.mark.django_db


def defaults(player) -> list[str]:
    return list(
        Persona.objects.filter(player=player, is_default=True).values_list("name", flat=True)
    )


def test_the_first_persona_is_the_default_and_a_switch_keeps_one(tenant, player):
    sailor = personas.create_persona(tenant, player=player, name="Sailor")
    scholar = personas.create_persona(tenant, player=player, name="Scholar")
    assert sailor.is_default and not scholar.is_default and defaults(player) == ["Sailor"]
    personas.make_default_persona(scholar)
    assert defaults(player) == ["Scholar"]
    personas.create_persona(tenant, player=player, name="Spy", is_default=True)
    assert defaults(player) == ["Spy"]
    personas.update_persona(Persona.objects.get(name="Spy"), is_default=False)
    assert defaults(player) == []


def test_a_first_persona_may_be_created_without_being_the_default(tenant, player):
    personas.create_persona(tenant, player=player, name="Spare", is_default=False)
    assert defaults(player) == []


@pytest.mark.django_db(transaction=True)
def test_concurrent_switches_leave_one_default(tenant, player):
    made = [personas.create_persona(tenant, player=player, name=f"P{i}") for i in range(6)]
    errors = []

    def switch(persona):
        try:
            personas.make_default_persona(persona)
        except Exception as exc:  # pragma: no cover - the assertion below shows it
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=switch, args=(p,)) for p in made]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == [] and len(defaults(player)) == 1


def test_the_services_check_their_fields(tenant, player, other_tenant):
    with pytest.raises(FieldErrors) as caught:
        personas.create_persona(tenant, player=player, name="", description="x" * 20_001)
    assert {"name", "description"} <= set(caught.value.by_field)
    stranger = Player.objects.create(tenant=other_tenant, external_id="x")
    with pytest.raises(FieldErrors):
        personas.create_persona(tenant, player=stranger, name="Stolen")
    sailor = personas.create_persona(tenant, player=player, name="Sailor")
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    with pytest.raises(FieldErrors) as caught:
        personas.update_persona(sailor, player=other)
    assert "player" in caught.value.by_field


def test_persona_for_falls_back_from_the_conversation_to_the_default_to_the_name(
    tenant, conversation
):
    player = conversation.player
    assert persona_for(conversation) == persona_for(conversation)
    plain = persona_for(conversation)
    assert (plain.name, plain.description, plain.source) == ("Ann", "", "player")
    player.display_name = ""
    player.save()
    assert persona_for(conversation).name == "p-1"
    default = personas.create_persona(tenant, player=player, name="Sailor", description="Salt.")
    assert (persona_for(conversation).name, persona_for(conversation).source) == (
        "Sailor",
        "default",
    )
    spy = personas.create_persona(tenant, player=player, name="Spy", description="Shadows.")
    conversations.update_conversation(conversation, persona=spy)
    chosen = persona_for(conversation)
    assert (chosen.name, chosen.description, chosen.source, chosen.persona_id) == (
        "Spy",
        "Shadows.",
        "conversation",
        str(spy.pk),
    )
    personas.delete_persona(spy)
    conversation.refresh_from_db()
    assert conversation.persona is None and persona_for(conversation).name == default.name


def test_a_conversation_takes_only_its_players_personas(tenant, conversation, character):
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    theirs = personas.create_persona(tenant, player=other, name="Theirs")
    with pytest.raises(FieldErrors) as caught:
        conversations.update_conversation(conversation, persona=theirs)
    assert "persona" in caught.value.by_field
    with pytest.raises(FieldErrors):
        conversations.start_conversation(
            tenant, character=character, player=conversation.player, persona=theirs
        )


# --- API ---------------------------------------------------------------------------------


def test_the_api_manages_personas(play_api, player, tenant):
    created = play_api.post(
        "/api/v1/personas/",
        {"player": player.pk, "name": "Sailor", "description": "Salt."},
        format="json",
    )
    assert created.status_code == 201, created.content
    sailor = created.json()
    assert sailor["is_default"] is True and sailor["has_avatar"] is False
    second = play_api.post(
        "/api/v1/personas/", {"player": player.pk, "name": "Spy", "is_default": True}, format="json"
    ).json()
    assert second["is_default"] is True
    assert play_api.get(f"/api/v1/personas/{sailor['id']}/").json()["is_default"] is False
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    play_api.post("/api/v1/personas/", {"player": other.pk, "name": "Else"}, format="json")
    listed = play_api.get(f"/api/v1/personas/?player={player.pk}").json()["results"]
    assert [row["name"] for row in listed] == ["Spy", "Sailor"]
    assert play_api.get("/api/v1/personas/").json()["count"] == 3
    assert_error(play_api.get("/api/v1/personas/?player=nope"), 400, "validation_error")


def test_the_api_refuses_a_move_and_a_foreign_player(play_api, player, tenant, other_tenant):
    persona = personas.create_persona(tenant, player=player, name="Sailor")
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    response = play_api.patch(
        f"/api/v1/personas/{persona.pk}/", {"player": other.pk}, format="json"
    )
    assert_error(response, 400, "validation_error")
    stranger = Player.objects.create(tenant=other_tenant, external_id="x")
    before = db_snapshot()
    response = play_api.post(
        "/api/v1/personas/", {"player": stranger.pk, "name": "Stolen"}, format="json"
    )
    assert_error(response, 400, "validation_error")
    assert snapshot_diff(before, db_snapshot()) == []


def test_another_tenants_persona_is_not_found(other_api, player, tenant):
    persona = personas.create_persona(tenant, player=player, name="Sailor")
    assert_error(other_api.get(f"/api/v1/personas/{persona.pk}/"), 404, "not_found")
    assert_error(other_api.get(f"/api/v1/personas/{persona.pk}/avatar"), 404, "not_found")


def test_a_persona_avatar(play_api, player, tenant):
    persona = personas.create_persona(tenant, player=player, name="Sailor")
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("a.webp", image_bytes("WEBP", (10, 10)))
    response = play_api.put(
        f"/api/v1/personas/{persona.pk}/avatar", {"file": upload}, format="multipart"
    )
    assert response.status_code == 204
    image = play_api.get(f"/api/v1/personas/{persona.pk}/avatar")
    assert image["Content-Type"] == "image/png" and image["X-Avatar-Generated"] == "false"
    assert play_api.get(f"/api/v1/personas/{persona.pk}/").json()["has_avatar"] is True


def test_a_conversation_picks_a_persona_in_the_api(play_api, player, character, tenant):
    persona = personas.create_persona(tenant, player=player, name="Sailor")
    body = {"player": player.pk, "character": str(character.pk), "persona": str(persona.pk)}
    created = play_api.post("/api/v1/conversations/", body, format="json")
    assert created.status_code == 201 and created.json()["persona"] == str(persona.pk)
    other = Player.objects.create(tenant=tenant, external_id="p-2")
    theirs = personas.create_persona(tenant, player=other, name="Theirs")
    response = play_api.patch(
        f"/api/v1/conversations/{created.json()['id']}/",
        {"persona": str(theirs.pk)},
        format="json",
    )
    assert_error(response, 400, "validation_error")
    cleared = play_api.patch(
        f"/api/v1/conversations/{created.json()['id']}/", {"persona": None}, format="json"
    )
    assert cleared.status_code == 200 and cleared.json()["persona"] is None


def test_players_no_longer_have_a_persona_field(play_api):
    response = play_api.post(
        "/api/v1/players/", {"external_id": "x", "persona": "A sailor."}, format="json"
    )
    assert "persona" in {
        e["loc"] for e in assert_error(response, 400, "validation_error")["details"]["errors"]
    }


# --- console -----------------------------------------------------------------------------


def test_the_console_lists_players_and_manages_their_personas(operator_client, player, tenant):
    from django.core.files.uploadedfile import SimpleUploadedFile

    players = operator_client.get("/console/players/").content.decode()
    assert f'href="/console/players/{player.pk}/personas/"' in players
    assert 'href="/console/players/"' in players  # in the navigation

    url = f"/console/players/{player.pk}/personas/"
    response = operator_client.post(
        url,
        {
            "name": "Sailor",
            "description": "Salt and rope.",
            "avatar": SimpleUploadedFile("s.png", image_bytes()),
        },
    )
    assert response.status_code == 302
    sailor = Persona.objects.get(player=player, name="Sailor")
    assert sailor.is_default and sailor.avatar is not None
    operator_client.post(url, {"name": "Spy", "is_default": "on"})
    assert defaults(player) == ["Spy"]
    operator_client.post(f"/console/personas/{sailor.pk}/default/")
    assert defaults(player) == ["Sailor"]

    page = operator_client.get(url).content.decode()
    assert "Sailor" in page and "Spy" in page and "default" in page
    edit = operator_client.post(
        f"/console/personas/{sailor.pk}/",
        {"name": "Old sailor", "description": "Salt.", "is_default": "on", "remove_avatar": "on"},
    )
    assert edit.status_code == 302
    sailor.refresh_from_db()
    assert (sailor.name, sailor.avatar) == ("Old sailor", None)
    image = operator_client.get(f"/console/personas/{sailor.pk}/avatar/")
    assert image["Content-Type"] == "image/png"

    operator_client.post(f"/console/personas/{sailor.pk}/delete/")
    assert not Persona.objects.filter(pk=sailor.pk).exists()


def test_the_console_shows_the_services_errors(operator_client, player):
    response = operator_client.post(
        f"/console/players/{player.pk}/personas/", {"name": "", "description": "x"}
    )
    assert response.status_code == 200 and not Persona.objects.filter(player=player).exists()


def test_a_viewer_reads_personas_but_cannot_change_them(viewer_client, player, tenant):
    persona = personas.create_persona(tenant, player=player, name="Sailor")
    assert viewer_client.get(f"/console/players/{player.pk}/personas/").status_code == 200
    page = viewer_client.get(f"/console/personas/{persona.pk}/").content.decode()
    assert "Read only" in page
    assert viewer_client.post(f"/console/personas/{persona.pk}/default/").status_code == 403


def test_the_conversation_page_shows_and_changes_the_persona(operator_client, conversation, tenant):
    spy = personas.create_persona(tenant, player=conversation.player, name="Spy")
    page = operator_client.get(f"/console/conversations/{conversation.pk}/").content.decode()
    assert 'id="conversation-persona"' in page and "Spy" in page
    url = f"/console/conversations/{conversation.pk}/persona/"
    assert operator_client.post(url, {"persona": str(spy.pk)}).status_code == 302
    conversation.refresh_from_db()
    assert conversation.persona == spy
    operator_client.post(url, {"persona": "not-a-uuid"})
    conversation.refresh_from_db()
    assert conversation.persona == spy
    operator_client.post(url, {"persona": ""})
    conversation.refresh_from_db()
    assert conversation.persona is None


def test_a_new_conversation_can_pick_a_persona(operator_client, player, character, tenant):
    spy = personas.create_persona(tenant, player=player, name="Spy")
    page = operator_client.get(
        f"/console/conversations/new/?character={character.pk}&player={player.pk}"
    ).content.decode()
    assert f'value="{spy.pk}"' in page
    response = operator_client.post(
        "/console/conversations/new/",
        {"character": str(character.pk), "player": str(player.pk), "persona": str(spy.pk)},
    )
    assert response.status_code == 302
    assert Conversation.objects.get(tenant=tenant, player=player).persona == spy
