"""A player's own characters: only when the tenant allows them; private to the player,
made or imported (card import reused), edited and deleted only by them."""

from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from roleplay.accounts.models import PlayerApp
from roleplay.models import Character, Conversation
from tests.characters.cardfiles import as_json, png_card, v2_card

pytestmark = pytest.mark.django_db

FIELDS = {
    "name": "Pocket Sage",
    "description": "Small and wise.",
    "first_message": "Ask me.",
    "tags_text": "wise, tiny, wise",
    "content_rating": "sfw",
}


@pytest.fixture
def allowed(app_tenant):
    PlayerApp.objects.update_or_create(tenant=app_tenant, defaults={"player_characters": True})


def test_refused_unless_the_tenant_allows_it(player_client):
    assert player_client.get("/app/characters/new/").status_code == 403
    assert player_client.post("/app/characters/new/", FIELDS).status_code == 403
    assert player_client.post("/app/characters/import/").status_code == 403
    assert not Character.objects.exists()


def test_create_edit_delete_ones_own(allowed, player_client, other_client):
    response = player_client.post("/app/characters/new/", FIELDS)
    mine = Character.objects.get()
    assert response["Location"] == f"/app/characters/{mine.pk}/"
    assert mine.owner_player_id == player_client.account.player_id
    assert mine.visibility == "private" and mine.tags == ["wise", "tiny"]
    assert "Pocket Sage" in player_client.get("/app/library/").content.decode()
    assert "Pocket Sage" not in other_client.get("/app/library/").content.decode()
    assert other_client.get(f"/app/characters/{mine.pk}/").status_code == 404
    assert other_client.post(f"/app/characters/{mine.pk}/edit/", FIELDS).status_code == 404
    assert other_client.post(f"/app/characters/{mine.pk}/delete/").status_code == 404

    edited = {**FIELDS, "name": "Pocket Sage II"}
    assert player_client.post(f"/app/characters/{mine.pk}/edit/", edited).status_code == 302
    mine.refresh_from_db()
    assert mine.name == "Pocket Sage II" and mine.visibility == "private"

    player_client.post(f"/app/characters/{mine.pk}/start/")
    assert Conversation.objects.filter(character=mine).count() == 1
    assert player_client.post(f"/app/characters/{mine.pk}/delete/").status_code == 302
    assert not Character.objects.exists() and not Conversation.objects.exists()


def test_bad_fields_are_a_form_error(allowed, player_client):
    bad = {**FIELDS, "name": "", "tags_text": ",".join(f"t{i}" for i in range(500))}
    response = player_client.post("/app/characters/new/", bad)
    assert response.status_code == 400
    assert not Character.objects.exists()


def test_an_operators_character_is_not_editable(allowed, player_client, make_character):
    listed = make_character("Operators Own")
    assert player_client.get(f"/app/characters/{listed.pk}/edit/").status_code == 404
    assert player_client.post(f"/app/characters/{listed.pk}/delete/").status_code == 404
    assert Character.objects.filter(pk=listed.pk).exists()


def test_import_a_card_as_ones_own_copy(allowed, player_client, app_tenant):
    from roleplay.characters.services.card_import import import_card

    data = png_card(v2_card("Mira", tags=["card"]))
    operators = import_card(app_tenant, "mira.png", data).character  # the same file, earlier
    upload = SimpleUploadedFile("mira.png", data, content_type="image/png")
    response = player_client.post("/app/characters/import/", {"file": upload})
    mine = Character.objects.exclude(pk=operators.pk).get()
    assert response["Location"] == f"/app/characters/{mine.pk}/"
    assert mine.owner_player_id == player_client.account.player_id
    assert mine.visibility == "private" and mine.name == "Mira"
    assert player_client.get(f"/app/characters/{mine.pk}/avatar/").status_code == 200


def test_a_broken_card_is_a_form_error(allowed, player_client):
    upload = SimpleUploadedFile("bad.json", b"{not json", content_type="application/json")
    response = player_client.post("/app/characters/import/", {"file": upload})
    assert response.status_code == 400
    empty = SimpleUploadedFile("x.json", as_json({"spec": "nope"}), content_type="text/json")
    assert player_client.post("/app/characters/import/", {"file": empty}).status_code == 400
    assert not Character.objects.exists()
