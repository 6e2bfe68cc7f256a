"""Our prepare/commit memory service (seed 000's external runtime, authenticated):
``POST /v1/memory/prepare`` and ``POST /v1/memory/commit`` through the real API, with the
preference selection and recall behind the memory text, the round added to the
transcript once, idempotent commits, and every refusal's status and code."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memory import services as message_store
from memory.configs.services import put_settings
from memory.entries.services import add_entry
from memory.models import MemoryClaim, Message
from memory.recall import indexing

pytestmark = pytest.mark.django_db(transaction=True)

CHAT = [
    {"role": "system", "content": "You are Mira, a lighthouse keeper."},
    {"role": "user", "content": "Do you remember the copper key?"},
]


def _prepare(api, conversation, messages=CHAT, **extra):
    body = {"conversation_id": str(conversation.pk), "messages": messages, **extra}
    return api.post("/v1/memory/prepare", body, format="json")


def _commit(api, claim_id, user="Do you remember the copper key?", assistant="I do."):
    body = {"claim_id": claim_id, "user": user, "assistant": assistant}
    return api.post("/v1/memory/commit", body, format="json")


def test_prepare_answers_a_claim_and_the_memory_for_the_turn(
    tenant, player, conversation, api, llm
):
    add_entry(tenant, player, kind="preference", scope="shared", category_key="length",
              content="Keep replies brief.")  # fmt: skip
    other = message_store.save_message(tenant, "elsewhere", role="user", content="x")
    assert other  # another session: not this conversation's rounds
    message_store.save_message(tenant, conversation.session_id, role="user",
                               content="I hid the copper key under the third stair.")  # fmt: skip
    indexing.index_messages(
        tenant, session_id=conversation.session_id, player_id=player.pk,
        character_id=str(conversation.character_id), conversation_id=conversation.pk,
    )  # fmt: skip
    response = _prepare(api, conversation, request_id="r-1", scene_id="s-1", prompt_id="p-1")
    assert response.status_code == 200, response.content
    body = response.json()
    assert set(body) == {"claim_id", "memory", "turn", "state_through_round"}
    assert body["turn"] == 1 and body["state_through_round"] == 1
    assert "Keep replies brief." in body["memory"]
    claim = MemoryClaim.objects.get(pk=body["claim_id"])
    assert (claim.request_id, claim.scene_id, claim.prompt_id) == ("r-1", "s-1", "p-1")
    assert claim.status == "prepared" and claim.memory_chars == len(body["memory"])


def test_prepare_with_memory_off_answers_no_memory(tenant, player, conversation, api, llm):
    add_entry(tenant, player, kind="preference", scope="shared", content="Keep replies brief.")
    put_settings(tenant, {"enabled": False})
    body = _prepare(api, conversation).json()
    assert body["memory"] == "" and body["turn"] == 1


@pytest.mark.parametrize(
    "messages, code",
    [
        ([{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
         "last_message_not_user"),
        ([{"role": "system", "content": "sys"}], "last_message_not_user"),
        ([{"role": "user", "content": "a"}, {"role": "system", "content": "b"},
          {"role": "user", "content": "c"}], "invalid_chat"),
    ],
)  # fmt: skip
def test_a_chat_that_does_not_end_with_the_user_is_refused(conversation, api, messages, code):
    response = _prepare(api, conversation, messages)
    assert response.status_code == 422 and response.json()["error"]["code"] == code
    assert not MemoryClaim.objects.exists()


def test_bad_bodies_and_foreign_conversations_are_refused(
    tenant, conversation, api, api_client_for, other_tenant
):
    for body in ({}, {"conversation_id": str(conversation.pk), "messages": []},
                 {"conversation_id": str(conversation.pk), "messages": CHAT, "extra": 1},
                 {"conversation_id": 5, "messages": CHAT}):  # fmt: skip
        response = api.post("/v1/memory/prepare", body, format="json")
        assert response.status_code == 400, (body, response.content)
    foreign = _prepare(api_client_for(other_tenant, scopes=["play"]), conversation)
    assert foreign.status_code == 404
    assert foreign.json()["error"]["code"] == "conversation_not_found"
    assert _prepare(api_client_for(tenant, scopes=["content"]), conversation).status_code == 403
    from rest_framework.test import APIClient

    assert _prepare(APIClient(), conversation).status_code == 401
    assert not MemoryClaim.objects.exists()


def test_commit_adds_the_round_once_and_repeats_answer_the_same(
    tenant, conversation, api, api_client_for, other_tenant, llm
):
    claim_id = _prepare(api, conversation).json()["claim_id"]
    first = _commit(api, claim_id)
    assert first.status_code == 200 and first.json() == {"committed": True}
    stored = list(
        Message.objects.filter(session_id=conversation.session_id)
        .order_by("ts")
        .values_list("role", "content", "metadata")
    )
    assert [(r, c) for r, c, _ in stored] == [
        ("user", "Do you remember the copper key?"), ("assistant", "I do.")
    ]  # fmt: skip
    assert stored[0][2] == {"source": "memory_commit", "claim_id": claim_id}
    assert _commit(api, claim_id).json() == {"committed": True}  # idempotent
    assert Message.objects.filter(session_id=conversation.session_id).count() == 2
    conflict = _commit(api, claim_id, assistant="Something else.")
    assert conflict.status_code == 409 and conflict.json()["error"]["code"] == "claim_conflict"
    foreign = _commit(api_client_for(other_tenant, scopes=["play"]), claim_id)
    assert foreign.status_code == 404 and foreign.json()["error"]["code"] == "claim_not_found"
    assert _commit(api, "not-a-claim").status_code == 404
    next_claim = _prepare(
        api,
        conversation,
        [
            *CHAT,
            {"role": "assistant", "content": "I do."},
            {"role": "user", "content": "Where is it?"},
        ],
    )
    assert next_claim.json()["turn"] == 2 and next_claim.json()["state_through_round"] == 1


def test_a_round_already_in_the_transcript_is_not_added_again(tenant, conversation, api, llm):
    message_store.save_message(tenant, conversation.session_id, role="user", content="Hello.")
    message_store.save_message(tenant, conversation.session_id, role="assistant", content="Hi!")
    claim_id = _prepare(api, conversation, [{"role": "user", "content": "Hello."}]).json()[
        "claim_id"
    ]
    assert _commit(api, claim_id, user="Hello.", assistant="Hi!").json() == {"committed": True}
    assert Message.objects.filter(session_id=conversation.session_id).count() == 2


def test_an_expired_claim_is_a_conflict_and_writes_nothing(tenant, conversation, api, llm):
    claim_id = _prepare(api, conversation).json()["claim_id"]
    MemoryClaim.objects.filter(pk=claim_id).update(expires_at=timezone.now() - timedelta(1))
    response = _commit(api, claim_id)
    assert response.status_code == 409 and response.json()["error"]["code"] == "claim_expired"
    assert not Message.objects.filter(session_id=conversation.session_id).exists()


def test_unstorable_text_is_refused(conversation, api, llm):
    claim_id = _prepare(api, conversation).json()["claim_id"]
    raw = '{"claim_id": "CLAIM", "user": "hi", "assistant": "bad \\ud800 text"}'
    raw = raw.replace("CLAIM", claim_id)
    response = api.post("/v1/memory/commit", raw, content_type="application/json")
    assert response.status_code in (400, 422), response.content
    assert MemoryClaim.objects.get(pk=claim_id).status == "prepared"
