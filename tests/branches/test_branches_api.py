"""Branches through the REST API: create at a message, list, read the branch's messages, run
a turn in it (the scripted model receives the parent's history up to the fork and the
branch's own), and every refusal as a coded 4xx that changes nothing."""

from __future__ import annotations

import uuid

import pytest

from memory import alternatives
from memory import services as message_store
from roleplay.llm.scripted_server import Reply
from roleplay.models import Conversation
from tests.api.helpers import assert_error, db_snapshot, snapshot_diff
from tests.branches.conftest import base, say

pytestmark = pytest.mark.django_db(transaction=True)


def branch_of(api, conversation, message_id, **extra):
    body = {"message_id": str(message_id), **extra}
    return api.post(f"{base(conversation)}/branches/", body, format="json")


def shown(api, conversation) -> list[str]:
    response = api.get(f"{base(conversation)}/messages")
    assert response.status_code == 200, response.content
    return [m["content"] for m in response.json()["results"]]


def test_a_branch_is_a_new_conversation_sharing_the_history(api, conversation, history):
    response = branch_of(api, conversation, history[3].id)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["parent"] == str(conversation.id)
    assert body["fork_message_id"] == str(history[3].id)
    assert body["character"] == str(conversation.character_id)
    branch = Conversation.objects.get(pk=body["id"])
    assert shown(api, branch) == ["u0", "a1", "u2", "a3"]
    assert shown(api, conversation) == ["u0", "a1", "u2", "a3", "u4", "a5"]
    listed = api.get(f"{base(conversation)}/branches/").json()["results"]
    assert [b["id"] for b in listed] == [body["id"]]
    assert api.get(f"{base(branch)}/branches/").json()["results"] == []
    assert api.get(f"/api/v1/conversations/{branch.id}/").json()["parent"] == str(conversation.id)


def test_a_turn_in_a_branch_sends_the_shared_history(api, conversation, history, llm):
    branch = Conversation.objects.get(pk=branch_of(api, conversation, history[3].id).json()["id"])
    llm.enqueue(Reply(content="A branch reply.", chunks=2))
    ran = api.post(
        f"{base(branch)}/turns/run", {"client_message_id": "c1", "content": "b-u"}, format="json"
    )
    assert ran.status_code == 201, ran.content
    sent = [m["content"] for m in llm.requests[-1]["messages"] if m["role"] != "system"]
    said = "\n".join(sent)
    for text in ("u0", "a1", "u2", "a3", "b-u"):
        assert text in said, (text, sent)
    assert "u4" not in said and "a5" not in said
    assert shown(api, branch) == ["u0", "a1", "u2", "a3", "b-u", "A branch reply."]
    assert shown(api, conversation) == ["u0", "a1", "u2", "a3", "u4", "a5"]


def test_an_older_reply_s_other_alternative_makes_a_branch(api, tenant, conversation, history):
    alternatives.add_alternative(tenant, history[1].id, content="a1-bis", status="complete")
    alternatives.select_alternative(tenant, history[1].id, 0)
    response = branch_of(api, conversation, history[1].id, alternative=1)
    assert response.status_code == 201, response.content
    branch = Conversation.objects.get(pk=response.json()["id"])
    assert shown(api, branch) == ["u0", "a1-bis"]
    assert shown(api, conversation) == ["u0", "a1", "u2", "a3", "u4", "a5"]
    missing = branch_of(api, conversation, history[1].id, alternative=7)
    assert_error(missing, 422, "alternative_not_found")


def test_bad_branch_requests_are_coded_and_change_nothing(
    api, other_api, tenant, other_tenant, conversation, history, player, character
):
    other = Conversation.objects.create(tenant=tenant, player=player, character=character)
    elsewhere = say(tenant, other, "elsewhere")[0]
    before = db_snapshot()
    assert_error(branch_of(api, conversation, elsewhere.id), 404, "message_not_found")
    assert_error(branch_of(api, conversation, uuid.uuid4()), 404, "message_not_found")
    assert_error(branch_of(other_api, conversation, history[0].id), 404, "not_found")
    assert_error(
        api.post(f"{base(conversation)}/branches/", {"message_id": "x"}, format="json"),
        400,
        "validation_error",
    )
    body = {"message_id": str(history[0].id), "extra": 1}
    assert_error(api.post(f"{base(conversation)}/branches/", body, format="json"), 400,
                 "validation_error")  # fmt: skip
    assert snapshot_diff(before, db_snapshot()) == []
    # a message of the parent after the fork is not in the branch's history
    branch = Conversation.objects.get(pk=branch_of(api, conversation, history[1].id).json()["id"])
    assert_error(branch_of(api, branch, history[3].id), 404, "message_not_found")


def test_the_same_idempotency_key_replays_the_branch(api, conversation, history):
    url, body = f"{base(conversation)}/branches/", {"message_id": str(history[1].id)}
    first = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    again = api.post(url, body, format="json", HTTP_IDEMPOTENCY_KEY="k-1")
    assert first.status_code == again.status_code == 201
    assert first.json()["id"] == again.json()["id"]
    assert Conversation.objects.filter(parent=conversation).count() == 1


def test_shared_messages_are_frozen_and_a_parent_with_branches_stays(
    api, tenant, conversation, history
):
    branch = Conversation.objects.get(pk=branch_of(api, conversation, history[3].id).json()["id"])
    edit = {"content": "changed"}
    shared = api.patch(f"{base(conversation)}/messages/{history[2].id}", edit, format="json")
    assert_error(shared, 409, "message_shared")
    assert_error(api.delete(f"{base(conversation)}/messages/{history[3].id}"), 409,
                 "message_shared")  # fmt: skip
    rollback = {"message_id": str(history[1].id)}
    assert_error(api.post(f"{base(conversation)}/messages/rollback-to", rollback, format="json"),
                 409, "message_shared")  # fmt: skip
    # through the branch, the parent's messages are not its own to change
    through = api.patch(f"{base(branch)}/messages/{history[2].id}", edit, format="json")
    assert_error(through, 409, "message_shared")
    assert shown(api, branch) == ["u0", "a1", "u2", "a3"]
    # after the fork point the parent is free
    later = api.patch(f"{base(conversation)}/messages/{history[4].id}", edit, format="json")
    assert later.status_code == 200, later.content
    assert_error(api.delete(f"{base(conversation)}/"), 409, "has_branches")
    assert Conversation.objects.filter(pk=conversation.pk).exists()
    assert api.delete(f"{base(branch)}/").status_code == 204
    assert api.patch(f"{base(conversation)}/messages/{history[2].id}", edit,
                     format="json").status_code == 200  # fmt: skip
    assert api.delete(f"{base(conversation)}/").status_code == 204


def test_regenerating_a_reply_a_branch_shares_is_refused(api, tenant, conversation, history):
    branch_of(api, conversation, history[5].id)
    body = {"client_message_id": "r1", "kind": "regenerate"}
    refused = api.post(f"{base(conversation)}/turns/run", body, format="json")
    assert_error(refused, 409, "message_shared")
    message_store.save_message(tenant, conversation.session_id, role="user", content="u6")
