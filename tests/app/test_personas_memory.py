"""Personas (create, edit, default, delete) and what the characters remember (pin, delete),
through the services the console uses; another player's are not found."""

from __future__ import annotations

import pytest

from memory.entries.services import add_entry
from memory.models import MemoryEntry
from roleplay.models import Persona

pytestmark = pytest.mark.django_db


def test_personas_create_edit_default_delete(player_client, other_client):
    first = player_client.post("/app/personas/", {"name": "Wren", "description": "A traveller"})
    assert first.status_code == 302
    player_client.post("/app/personas/", {"name": "Ash"})
    wren, ash = Persona.objects.get(name="Wren"), Persona.objects.get(name="Ash")
    assert wren.is_default and not ash.is_default  # the first one is the default

    player_client.post(f"/app/personas/{ash.pk}/default/")
    wren.refresh_from_db(), ash.refresh_from_db()
    assert ash.is_default and not wren.is_default

    edit = player_client.post(f"/app/personas/{wren.pk}/edit/", {"name": "Wren the Bold"})
    assert edit.status_code == 302
    wren.refresh_from_db()
    assert wren.name == "Wren the Bold"

    for path in ("edit/", "default/", "delete/"):
        assert other_client.post(f"/app/personas/{wren.pk}/{path}").status_code == 404
    assert "Wren" not in other_client.get("/app/personas/").content.decode()

    player_client.post(f"/app/personas/{wren.pk}/delete/")
    assert list(Persona.objects.values_list("name", flat=True)) == ["Ash"]


def test_an_empty_persona_is_a_form_error(player_client):
    assert player_client.post("/app/personas/", {"name": ""}).status_code == 400
    assert not Persona.objects.exists()


def test_memory_lists_active_entries_and_pins_and_deletes(player_client, other_client):
    account = player_client.account
    kept = add_entry(
        account.tenant, account.player, kind="fact", scope="shared", content="Likes tea"
    )
    add_entry(
        account.tenant,
        account.player,
        kind="fact",
        scope="shared",
        content="Maybe likes coffee",
        status="candidate",
    )
    theirs = add_entry(
        account.tenant, other_client.account.player, kind="fact", scope="shared", content="Bob"
    )
    page = player_client.get("/app/memory/").content.decode()
    assert "Likes tea" in page and "Maybe likes coffee" not in page and "Bob" not in page

    player_client.post(f"/app/memory/{kept.pk}/pin/", {"version": kept.version, "pinned": "1"})
    kept.refresh_from_db()
    assert kept.pinned
    stale = player_client.post(f"/app/memory/{kept.pk}/delete/", {"version": "1"})
    assert stale.status_code == 302 and MemoryEntry.objects.filter(pk=kept.pk).exists()

    for action in ("pin", "delete"):
        assert player_client.post(f"/app/memory/{theirs.pk}/{action}/").status_code == 404
    player_client.post(f"/app/memory/{kept.pk}/delete/", {"version": kept.version})
    assert not MemoryEntry.objects.filter(pk=kept.pk).exists()
    assert MemoryEntry.objects.filter(pk=theirs.pk).exists()
