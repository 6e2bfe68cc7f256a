"""``/api/v1/conversations/{id}/members/`` and the group's settings on the conversation."""

from __future__ import annotations

import pytest

from roleplay.models import Character, ConversationMember
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db


def url(conversation, member=None) -> str:
    base = f"/api/v1/conversations/{conversation.id}/members/"
    return f"{base}{member}/" if member else base


def test_members_are_listed_added_changed_and_removed(api, conversation, jon, ada):
    listed = api.get(url(conversation)).json()["results"]
    assert [(m["name"], m["position"]) for m in listed] == [("Mira", 0)]
    added = api.post(url(conversation), {"character": str(jon.pk)}, format="json")
    assert added.status_code == 201, added.content
    assert added.json() == {"character": str(jon.pk), "name": "Jon", "position": 1,
                            "muted": False, "talkativeness": 0.5}  # fmt: skip
    api.post(url(conversation), {"character": str(ada.pk), "talkativeness": 0.9}, format="json")
    moved = api.patch(url(conversation, ada.pk), {"position": 1, "muted": True}, format="json")
    assert moved.status_code == 200 and moved.json()["muted"] is True
    names = [m["name"] for m in api.get(url(conversation)).json()["results"]]
    assert names == ["Mira", "Ada", "Jon"]
    assert api.delete(url(conversation, jon.pk)).status_code == 204
    assert [m["name"] for m in api.get(url(conversation)).json()["results"]] == ["Mira", "Ada"]


def test_bad_input_is_a_coded_error_and_changes_nothing(api, conversation, jon, other_tenant):
    api.post(url(conversation), {"character": str(jon.pk)}, format="json")
    before = list(ConversationMember.objects.values_list("character_id", "position", "muted"))
    assert_error(api.post(url(conversation), {"character": str(jon.pk)}, format="json"),
                 409, "member_exists")  # fmt: skip
    foreign = Character.objects.create(tenant=other_tenant, name="Spy")
    assert_error(api.post(url(conversation), {"character": str(foreign.pk)}, format="json"),
                 400, "validation_error")  # fmt: skip
    assert_error(api.patch(url(conversation, jon.pk), {"talkativeness": 3}, format="json"),
                 400, "validation_error")  # fmt: skip
    assert_error(api.patch(url(conversation, jon.pk), {"position": 0}, format="json"),
                 422, "member_fixed")  # fmt: skip
    assert_error(api.delete(url(conversation, conversation.character_id)), 422, "member_fixed")
    assert_error(api.delete(url(conversation, "nope")), 404, "member_not_found")
    after = list(ConversationMember.objects.values_list("character_id", "position", "muted"))
    assert before == after


def test_another_tenants_conversation_is_a_404(api_client_for, other_tenant, conversation, jon):
    other_api = api_client_for(other_tenant)
    assert_error(other_api.get(url(conversation)), 404, "not_found")
    body = {"character": str(jon.pk)}
    assert_error(other_api.post(url(conversation), body, format="json"), 404, "not_found")
    assert not ConversationMember.objects.exists()


def test_group_settings_are_fields_of_the_conversation(api, conversation):
    path = f"/api/v1/conversations/{conversation.id}/"
    body = api.get(path).json()
    assert (body["group_mode"], body["join_cards"], body["auto_turns"]) == ("natural", False, 0)
    changed = api.patch(path, {"group_mode": "pooled", "auto_turns": 3, "auto_delay_ms": 500},
                        format="json")  # fmt: skip
    assert changed.status_code == 200 and changed.json()["group_mode"] == "pooled"
    assert_error(api.patch(path, {"auto_turns": 11}, format="json"), 400, "validation_error")
    assert_error(api.patch(path, {"group_mode": "chaos"}, format="json"), 400, "validation_error")
