"""Operators publish characters to players from the console's character form: visibility
and content rating are on it, and what they set is what the library shows."""

from __future__ import annotations

import pytest
from django.test import Client

from console.services import ensure_console_user

pytestmark = pytest.mark.django_db


def test_the_console_form_lists_a_character_for_players(app_tenant, player_client):
    from roleplay.characters.services.characters import create_character

    character = create_character(app_tenant, name="Shy Sol")
    user, _ = ensure_console_user(app_tenant, "op-visibility", None, "operator")
    operator = Client()
    operator.force_login(user)
    page = operator.get(f"/console/characters/{character.pk}/").content.decode()
    assert 'name="visibility"' in page and 'name="content_rating"' in page
    assert "Shy Sol" not in player_client.get("/app/library/").content.decode()

    response = operator.post(
        f"/console/characters/{character.pk}/",
        {"name": "Shy Sol", "visibility": "listed", "content_rating": "sfw"},
    )
    assert response.status_code == 302, response.content[:500]
    character.refresh_from_db()
    assert (character.visibility, character.content_rating) == ("listed", "sfw")
    assert "Shy Sol" in player_client.get("/app/library/").content.decode()
