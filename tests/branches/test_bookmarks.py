"""Named checkpoints (bookmarks) through the REST API and the play page: create, list,
delete, unique names, limits, and a branch from one."""

from __future__ import annotations

import pytest
from django.urls import reverse

from roleplay.models import Conversation
from tests.api.helpers import assert_error
from tests.branches.conftest import base

pytestmark = pytest.mark.django_db(transaction=True)


def mark(api, conversation, message_id, name):
    body = {"message_id": str(message_id), "name": name}
    return api.post(f"{base(conversation)}/bookmarks/", body, format="json")


def test_bookmarks_are_created_listed_unique_and_deleted(api, other_api, conversation, history):
    created = mark(api, conversation, history[1].id, "The gate")
    assert created.status_code == 201, created.content
    assert created.json()["message_id"] == str(history[1].id)
    assert_error(mark(api, conversation, history[3].id, "The gate"), 409, "duplicate")
    assert_error(mark(api, conversation, history[3].id, "x" * 101), 400, "validation_error")
    assert_error(mark(api, conversation, history[3].id, "   "), 400, "validation_error")
    listed = api.get(f"{base(conversation)}/bookmarks/").json()["results"]
    assert [b["name"] for b in listed] == ["The gate"]
    bookmark = created.json()["id"]
    assert_error(other_api.delete(f"{base(conversation)}/bookmarks/{bookmark}/"), 404, "not_found")
    assert api.delete(f"{base(conversation)}/bookmarks/{bookmark}/").status_code == 204
    assert_error(api.delete(f"{base(conversation)}/bookmarks/{bookmark}/"), 404,
                 "bookmark_not_found")  # fmt: skip
    assert api.get(f"{base(conversation)}/bookmarks/").json()["results"] == []


def test_a_branch_keeps_bookmarks_on_shared_messages_and_branches_from_one(
    api, conversation, history
):
    first = api.post(
        f"{base(conversation)}/branches/", {"message_id": str(history[3].id)}, format="json"
    ).json()
    branch = Conversation.objects.get(pk=first["id"])
    assert mark(api, branch, history[1].id, "Shared start").status_code == 201
    assert_error(mark(api, branch, history[5].id, "After the fork"), 404, "message_not_found")
    checkpoint = api.get(f"{base(branch)}/bookmarks/").json()["results"][0]
    again = api.post(
        f"{base(branch)}/branches/", {"message_id": checkpoint["message_id"]}, format="json"
    )
    assert again.status_code == 201
    shown = api.get(f"/api/v1/conversations/{again.json()['id']}/messages").json()["results"]
    assert [m["content"] for m in shown] == ["u0", "a1"]


def test_the_play_page_shows_the_tree_and_branches(client, operator_user, conversation, history):
    client.force_login(operator_user)
    page = client.get(reverse("play", args=[conversation.pk]))
    assert page.status_code == 200 and b"Branch from here" in page.content
    made = client.post(
        reverse("play_branch", args=[conversation.pk]), {"message_id": str(history[3].id)}
    )
    branch = Conversation.objects.get(parent=conversation)
    assert made.status_code == 302 and made["Location"] == reverse("play", args=[branch.pk])
    page = client.get(reverse("play", args=[branch.pk])).content.decode()
    assert "Back to the parent" in page and reverse("play", args=[conversation.pk]) in page
    assert page.count('data-shared="1"') == 4  # the four shared messages
    client.post(
        reverse("play_bookmarks", args=[branch.pk]),
        {"message_id": str(history[1].id), "name": "Before the storm"},
    )
    page = client.get(reverse("play", args=[branch.pk])).content.decode()
    assert "Before the storm" in page
    parent = client.get(reverse("play", args=[conversation.pk])).content.decode()
    assert reverse("play", args=[branch.pk]) in parent  # listed among its branches
    refused = client.post(reverse("play_branch", args=[conversation.pk]), {"message_id": "x"})
    assert refused.status_code == 302
    assert Conversation.objects.filter(parent=conversation).count() == 1
