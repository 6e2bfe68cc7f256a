"""``/api/v1/players/{id}/memory/entries/``: seed 004's management actions over REST."""

from __future__ import annotations

import pytest

from console.models import Player
from memory.models import MemoryEntry
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db


def _base(player):
    return f"/api/v1/players/{player.pk}/memory/entries/"


def _add(api, player, **body):
    body = {"kind": "preference", "scope": "shared", "content": "be brief", **body}
    return api.post(_base(player), body, format="json")


def test_create_list_change_and_delete(api, player, character, conversation):
    first = _add(api, player, category_key="name", content="call me Sam")
    assert first.status_code == 201, first.content
    entry = first.json()
    assert (entry["status"], entry["version"], entry["origin"]) == ("active", 1, "manual")
    assert entry["character"] is None and entry["conversation"] is None
    second = _add(
        api, player, category_key="name", content="call me Sammy", scope="session",
        conversation=str(conversation.pk), character=str(character.pk), tags=["name"],
    ).json()  # fmt: skip
    assert (second["conversation"], second["character"]) == (
        str(conversation.pk),
        str(character.pk),
    )
    listed = api.get(_base(player)).json()["results"]
    assert {e["content"] for e in listed} == {"call me Sam", "call me Sammy"}
    only = api.get(_base(player), {"scope": "session", "conversation": str(conversation.pk)})
    assert [e["id"] for e in only.json()["results"]] == [second["id"]]

    url = f"{_base(player)}{entry['id']}/"
    changed = api.patch(url, {"version": 1, "content": "call me Samwise"}, format="json")
    assert changed.status_code == 200 and changed.json()["version"] == 2
    stale = api.patch(url, {"version": 1, "content": "late"}, format="json")
    assert assert_error(stale, 409, "version_conflict")["details"]["current_version"] == 2
    pinned = api.post(f"{url}pin/", {"version": 2}, format="json").json()
    assert pinned["pinned"] and pinned["version"] == 3
    assert api.post(f"{url}unpin/", {"version": 3}, format="json").json()["pinned"] is False
    assert_error(api.delete(url, {"version": 1}, format="json"), 409, "version_conflict")
    assert api.delete(url, {"version": 4}, format="json").status_code == 204
    assert_error(api.get(url), 404, "memory_entry_not_found")


def test_candidates_are_accepted_or_rejected(api, player):
    active = _add(api, player, category_key="length").json()
    candidate = _add(api, player, category_key="length", status="candidate", content="be terse")
    candidate = candidate.json()
    url = f"{_base(player)}{candidate['id']}/"
    accepted = api.post(f"{url}accept/", {"version": 1}, format="json").json()
    assert accepted["status"] == "active" and accepted["supersedes"] == active["id"]
    assert MemoryEntry.objects.get(pk=active["id"]).status == "superseded"
    assert_error(api.post(f"{url}reject/", {"version": 2}, format="json"), 409, "invalid_state")
    other = _add(api, player, status="candidate", content="use emoji").json()
    rejected = api.post(f"{_base(player)}{other['id']}/reject/", {"version": 1}, format="json")
    assert rejected.json()["status"] == "rejected"


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"kind": "gossip"}, 400, "validation_error"),
        ({"content": "x" * 241}, 422, "content_too_long"),
        ({"scope": "persona"}, 422, "scope_needs_character"),
        ({"scope": "session"}, 422, "scope_needs_conversation"),
        ({"category_key": "Not Valid"}, 422, "invalid_category"),
        ({"status": "superseded"}, 400, "validation_error"),
        ({"extra": 1}, 400, "validation_error"),
        ({"content": 5}, 400, "validation_error"),
        ({"character": "not-a-uuid"}, 400, "validation_error"),
    ],
)
def test_bad_entries_are_refused_and_write_nothing(api, player, body, status, code):
    before = MemoryEntry.objects.count()
    assert_error(_add(api, player, **body), status, code)
    assert MemoryEntry.objects.count() == before


def test_owners_and_tenants_are_apart(api, player, tenant, api_client_for, other_tenant, llm):
    from roleplay.models import Character, Conversation

    other = Player.objects.create(tenant=tenant, external_id="other")
    theirs = _add(api, other, content="theirs").json()
    assert_error(api.get(f"{_base(player)}{theirs['id']}/"), 404, "memory_entry_not_found")
    mine = _add(api, player).json()
    stranger = api_client_for(other_tenant)
    assert stranger.get(_base(player)).status_code == 404
    assert (
        stranger.post(
            f"{_base(player)}{mine['id']}/pin/", {"version": 1}, format="json"
        ).status_code
        == 404
    )
    # A conversation of another player is refused; another tenant's character is not found.
    character = Character.objects.create(tenant=tenant, name="Guide")
    conversation = Conversation.objects.create(tenant=tenant, player=other, character=character)
    res = _add(api, player, scope="session", conversation=str(conversation.pk))
    assert_error(res, 422, "conversation_not_players")
    foreign = Character.objects.create(tenant=other_tenant, name="Stranger")
    assert_error(
        _add(api, player, scope="persona", character=str(foreign.pk)), 400, "validation_error"
    )
    assert MemoryEntry.objects.filter(player=player).count() == 1


def test_an_idempotency_key_replays_the_create(api, player):
    first = api.post(
        _base(player), {"kind": "preference", "scope": "shared", "content": "be brief"},
        format="json", HTTP_IDEMPOTENCY_KEY="k",
    )  # fmt: skip
    again = api.post(
        _base(player), {"kind": "preference", "scope": "shared", "content": "be brief"},
        format="json", HTTP_IDEMPOTENCY_KEY="k",
    )  # fmt: skip
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    assert MemoryEntry.objects.count() == 1


def test_an_entry_carries_its_evidence(api, tenant, player, conversation):
    from memory import services as message_store
    from memory.entries import evidence
    from memory.entries.services import add_entry

    said = message_store.save_message(
        tenant, conversation.session_id, role="user", content="From now on, call me Sam."
    )
    entry = add_entry(tenant, player, kind="preference", scope="shared", content="call me Sam")
    proof = evidence.attach(tenant, entry, said, 13, 24)
    url = f"{_base(player)}{entry.pk}/"
    assert api.get(url).json()["evidence"] == [
        {
            "message_id": str(said.pk),
            "quote": "call me Sam",
            "created_at": proof.created_at.isoformat().replace("+00:00", "Z"),
        }
    ]
    bare = _add(api, player, content="be brief").json()
    assert api.get(f"{_base(player)}{bare['id']}/").json()["evidence"] == []
