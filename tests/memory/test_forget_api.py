"""``POST /api/v1/players/{id}/memory/clear``: a player's memory forgotten over REST."""

from __future__ import annotations

import pytest

from console.models import Player
from memory import services as store
from memory.documents.services import put_document
from memory.entries import services as entries
from memory.models import MemoryEntry, Message
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db


def test_clear_forgets_the_players_memory_and_answers_counts(api, tenant, player, conversation):
    entries.add_entry(tenant, player, kind="preference", scope="shared", content="be brief")
    entries.add_entry(tenant, player, kind="fact", scope="shared", content="Has a cat.")
    put_document(tenant, conversation.session_id, "default", 0, {"scene": "gate"}, origin="api")
    store.save_message(tenant, conversation.session_id, role="user", content="hello")
    other = Player.objects.create(tenant=tenant, external_id="someone-else")
    kept = entries.add_entry(tenant, other, kind="preference", scope="shared", content="be kind")

    response = api.post(f"/api/v1/players/{player.pk}/memory/clear/", {}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["counts"] == {
        "entries": 2,
        "evidence": 0,
        "handoffs": 0,
        "documents": 1,
        "proposals": 0,
    }
    assert [r["subsystem"] for r in body["results"]] == ["memory"]
    assert not MemoryEntry.objects.filter(player=player).exists()
    assert MemoryEntry.objects.filter(pk=kept.pk).exists()
    assert Message.objects.filter(session_id=conversation.session_id).count() == 1


def test_clear_refuses_unknown_fields_and_foreign_players(api, player, other_tenant):
    stranger = Player.objects.create(tenant=other_tenant, external_id="x")
    response = api.post(f"/api/v1/players/{stranger.pk}/memory/clear/", {}, format="json")
    assert_error(response, 404, "not_found")
    kept = entries.add_entry(player.tenant, player, kind="fact", scope="shared", content="cat")
    response = api.post(
        f"/api/v1/players/{player.pk}/memory/clear/", {"scope": "all"}, format="json"
    )
    assert_error(response, 400, "validation_error")
    assert MemoryEntry.objects.filter(pk=kept.pk).exists()
