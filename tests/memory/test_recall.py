"""Recall over the stored transcript: indexing, the hybrid search with its range widening,
hard partitioning by tenant and player, deletions and edits, the API's refusals, and a
message found after a real turn through the socket and a real worker."""

from __future__ import annotations

import json
import time

import pytest
from asgiref.sync import sync_to_async

from console.models import Player
from memory import selectors as message_reads
from memory import services as message_store
from memory.models import RecallItem
from memory.recall import indexing
from roleplay.models import Conversation
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db(transaction=True)

LINES = [
    ("user", "Good evening. Is the lighthouse open tonight?"),
    ("assistant", "It is. Mind the wet stairs."),
    ("user", "I left my copper key with the harbour master last spring."),
    ("assistant", "Then you will need to fetch it before the gate closes."),
    ("user", "我把铜钥匙交给了港务长。"),
    ("assistant", "那就去港口取回它吧。"),
    ("user", "Let us talk about the weather instead."),
    ("assistant", "The fog will lift by dawn."),
]


def _conversation(tenant, player, character, lines=LINES):
    conversation = Conversation.objects.create(tenant=tenant, player=player, character=character)
    for role, text in lines:
        message_store.save_message(tenant, conversation.session_id, role=role, content=text)
    indexing.index_messages(
        tenant, session_id=conversation.session_id, player_id=player.pk,
        character_id=str(character.pk), conversation_id=conversation.pk,
    )  # fmt: skip
    return conversation


def _recall(api, player, **body):
    return api.post(f"/api/v1/players/{player.pk}/memory/recall", body, format="json")


def test_a_hit_comes_with_its_neighbours(api, tenant, player, character):
    _conversation(tenant, player, character)
    items = _recall(api, player, query="where is the copper key", k=3).json()["items"]
    top = items[0]
    assert top["kind"] == "message" and "copper key with the harbour master" in top["text"]
    lines = top["text"].split("\n")
    assert lines[0].startswith("assistant: It is.") and lines[-1].startswith("assistant: Then")
    assert len(top["message_ids"]) == 3 and top["id"] == top["message_ids"][1]


def test_chinese_text_is_found_by_its_characters(api, tenant, player, character):
    _conversation(tenant, player, character)
    top = _recall(api, player, query="铜钥匙在哪里", k=1).json()["items"][0]
    assert "铜钥匙交给了港务长" in top["text"]


def test_overlapping_hits_are_merged(api, tenant, player, character):
    _conversation(tenant, player, character)
    items = _recall(api, player, query="copper key harbour master gate", k=10).json()["items"]
    ids = [i for item in items for i in item["message_ids"]]
    hits = [item["id"] for item in items]
    assert len(set(hits)) == len(hits)
    assert all(hit not in ids[: ids.index(hit)] for hit in hits)  # no hit inside an earlier range


def test_another_players_or_tenants_text_never_comes_back(
    api, tenant, other_tenant, player, character
):
    from roleplay.models import Character

    mine = _conversation(tenant, player, character, LINES[:2])
    noise = [("user", f"the copper key of the harbour master, note {i}") for i in range(60)]
    neighbour = Player.objects.create(tenant=tenant, external_id="p-2")
    _conversation(tenant, neighbour, character, noise)
    foreign_player = Player.objects.create(tenant=other_tenant, external_id="p-1")
    foreign_character = Character.objects.create(tenant=other_tenant, name="Mira")
    _conversation(other_tenant, foreign_player, foreign_character, noise)
    body = _recall(api, player, query="the copper key of the harbour master", k=5).json()
    assert body["items"], body
    assert all(item["conversation_id"] == str(mine.pk) for item in body["items"])
    assert all("note" not in item["text"] for item in body["items"])


def test_the_owners_rows_fill_k_however_few_they_are(api, tenant, player, character):
    mine = [("user", f"my own line number {i}") for i in range(12)]
    _conversation(tenant, player, character, mine)
    crowd = Player.objects.create(tenant=tenant, external_id="crowd")
    _conversation(tenant, crowd, character, [("user", f"crowd {i}") for i in range(1500)])
    items = _recall(api, player, query="completely unrelated words", k=4).json()["items"]
    assert len(items) == 4  # exact search over the owner's rows, never a filtered-out ANN


def test_filters_by_conversation_kind_and_time(api, tenant, player, character):
    first = _conversation(tenant, player, character, LINES[:4])
    second = _conversation(tenant, player, character, LINES[4:])
    only = _recall(api, player, query="key", k=10, conversation=str(second.pk)).json()
    assert {item["conversation_id"] for item in only["items"]} == {str(second.pk)}
    entries_only = _recall(api, player, query="key", kinds=["entry"]).json()
    assert entries_only["items"] == []
    later = _recall(api, player, query="key", since="2999-01-01T00:00:00Z").json()
    assert later["items"] == []
    assert first.pk != second.pk


def test_active_memory_entries_are_recalled_too(api, tenant, player, character):
    from memory.entries import services as entries

    entries.add_entry(
        tenant, player, kind="preference", scope="shared", content="Prefers short replies.",
        status="active",
    )  # fmt: skip
    items = _recall(api, player, query="short replies", kinds=["entry"]).json()["items"]
    assert [item["text"] for item in items] == ["Prefers short replies."]


def test_deleted_messages_leave_the_index(api, tenant, player, character):
    conversation = _conversation(tenant, player, character)
    rows = message_reads.get_history(tenant, conversation.session_id)
    message_store.delete_messages_by_timestamps(
        tenant, conversation.session_id, [m.ts for m in rows[2:4]]
    )
    assert not RecallItem.objects.filter(message_id__in=[m.pk for m in rows[2:4]]).exists()
    items = _recall(api, player, query="copper key harbour master", k=10).json()["items"]
    assert all("harbour master last spring" not in item["text"] for item in items)


def test_an_edited_message_is_indexed_again(tenant, player, character):
    conversation = _conversation(tenant, player, character)
    message = message_reads.get_history(tenant, conversation.session_id)[2]
    message.content = "I gave the silver ring to the innkeeper."
    message.save(update_fields=["content"])
    assert indexing.reconcile(tenant, conversation.session_id) == 1
    text = RecallItem.objects.get(message_id=message.pk).text
    assert text == "I gave the silver ring to the innkeeper."
    assert indexing.reconcile(tenant, conversation.session_id) == 0  # nothing changed since


def test_fetch_by_ids_leaves_out_foreign_ones(api, tenant, player, character):
    conversation = _conversation(tenant, player, character)
    other = Player.objects.create(tenant=tenant, external_id="other")
    theirs = _conversation(tenant, other, character)
    mine = message_reads.get_history(tenant, conversation.session_id)[0]
    foreign = message_reads.get_history(tenant, theirs.session_id)[0]
    body = {"ids": [str(mine.pk), str(foreign.pk)]}
    items = api.post(f"/api/v1/players/{player.pk}/memory/fetch", body, format="json").json()
    assert [item["id"] for item in items["items"]] == [str(mine.pk)]


def test_bad_requests_are_refused(api, tenant, player, character, other_tenant):
    other = Player.objects.create(tenant=tenant, external_id="other")
    theirs = _conversation(tenant, other, character, LINES[:2])
    for body in (
        {},
        {"query": ""},
        {"query": "x", "k": 0},
        {"query": "x", "k": 51},
        {"query": "x", "kinds": ["dream"]},
        {"query": "x", "kinds": []},
        {"query": "x", "since": "yesterday"},
        {"query": "x", "extra": True},
        {"query": ["x"]},
    ):
        assert_error(_recall(api, player, **body), 400, "validation_error")
    assert_error(_recall(api, player, query="x", conversation=str(theirs.pk)), 404, "not_found")
    foreign = Player.objects.create(tenant=other_tenant, external_id="f")
    assert_error(_recall(api, foreign, query="x"), 404, "not_found")


@pytest.mark.asyncio
async def test_a_turns_messages_are_searchable_moments_after_it(
    celery_worker, api, conversation, llm, player
):
    from tests.ws.test_chat_socket import connect, receive_until

    comm = await connect(conversation)
    await comm.send_to(
        text_data=json.dumps(
            {
                "type": "user_message",
                "client_message_id": "r1",
                "content": "Remember: the violet lantern hangs above the north door.",
            }
        )  # fmt: skip
    )
    await receive_until(comm, "turn.completed")
    await comm.disconnect()
    found = []
    deadline = time.monotonic() + 30
    while not found and time.monotonic() < deadline:
        response = await sync_to_async(_recall)(api, player, query="violet lantern", k=1)
        found = [i for i in response.json()["items"] if "violet lantern" in i["text"]]
        if not found:
            time.sleep(0.2)
    assert found, "the turn's message never became searchable"


def test_an_edit_through_the_api_reaches_the_index(celery_worker, api, tenant, player, character):
    conversation = _conversation(tenant, player, character)
    message = message_reads.get_history(tenant, conversation.session_id)[-1]
    path = f"/api/v1/conversations/{conversation.pk}/messages/{message.pk}"
    response = api.patch(path, {"content": "The violet fog will lift by noon."}, format="json")
    assert response.status_code == 200, response.content
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        text = RecallItem.objects.filter(message_id=message.pk).values_list("text", flat=True)
        if list(text) == ["The violet fog will lift by noon."]:
            break
        time.sleep(0.2)
    assert list(text) == ["The violet fog will lift by noon."]


def test_forgetting_a_conversation_empties_its_index(tenant, player, character):
    from memory.forget import forget

    conversation = _conversation(tenant, player, character)
    kept = _conversation(tenant, player, character, LINES[:2])
    forget(tenant, scope="session", session_id=conversation.session_id)
    assert not RecallItem.objects.filter(session_id=conversation.session_id).exists()
    assert RecallItem.objects.filter(session_id=kept.session_id).count() == 2


def test_fetch_returns_the_entries_recall_named(api, tenant, player, character):
    from memory.entries.services import add_entry

    conversation = _conversation(tenant, player, character, LINES[:2])
    message = message_reads.get_history(tenant, conversation.session_id)[0]
    mine = add_entry(tenant, player, kind="fact", scope="shared", content="Ann keeps bees.")
    other = Player.objects.create(tenant=tenant, external_id="other")
    theirs = add_entry(tenant, other, kind="fact", scope="shared", content="Bo keeps goats.")
    recalled = _recall(api, player, query="bees", kinds=["entry"]).json()["items"]
    assert [item["id"] for item in recalled] == [str(mine.pk)]
    body = {"ids": [str(message.pk), str(mine.pk), str(theirs.pk)]}
    items = api.post(f"/api/v1/players/{player.pk}/memory/fetch", body, format="json").json()
    assert [(item["kind"], item["id"]) for item in items["items"]] == [
        ("message", str(message.pk)),
        ("entry", str(mine.pk)),
    ]
    assert items["items"][1]["text"] == "Ann keeps bees."
