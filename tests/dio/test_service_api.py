"""DIO through HTTP in one process: the REST routes of a conversation (submit, versions,
revert, off with compare-and-set) and the seed's protocol endpoints (``/v1/chat``, a task by
request id, the active prompt), each tenant-scoped: another tenant's conversation, task or
prompt is a 404."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

from roleplay.dio import compiling
from roleplay.dio.identity import identity_for
from roleplay.dio.models import DioTask
from roleplay.llm.scripted_server import Reply

pytestmark = pytest.mark.django_db

SHORT = "From now on, Mira answers in short sentences."


def _compile(llm, request_id: str, text: str) -> None:
    llm.enqueue(Reply(content=json.dumps({"compiledPrompt": text, "changeset": []})))
    compiling.run(str(DioTask.objects.get(request_id=request_id).pk))


def _chat_body(conversation, request_id="turn-9:dio", **extra):
    return {
        "userId": conversation.player.external_id,
        "rpConversationId": str(conversation.pk),
        "targetPromptId": str(conversation.character_id),
        "instruction": SHORT,
        "requestId": request_id,
        **extra,
    }


def test_rest_submit_answers_the_seeds_receipt_and_refuses_a_duplicate(api, conversation):
    url = f"/api/v1/conversations/{conversation.pk}/dio/"
    body = {"instruction": SHORT, "requestId": "turn-1:dio"}
    response = api.post(url, body, format="json")
    assert response.status_code == 202, response.content
    assert response.json() == {
        "accepted": True,
        "dioConversationId": f"dio_{conversation.pk}",
        "requestId": "turn-1:dio",
        "taskMessageId": "turn-1:dio:assistant",
        "appliesFrom": "next_turn",
    }
    again = api.post(url, body, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "dio_duplicate"
    task = DioTask.objects.get()
    assert task.instruction == SHORT and task.user_id == conversation.player.external_id
    generated = api.post(url, {"instruction": "Be terse."}, format="json").json()
    assert generated["requestId"].endswith(":dio")
    for bad in ({}, {"instruction": ""}, {"instruction": 5}, {"instruction": "x" * 8001},
                {"instruction": "ok", "extra": 1}):  # fmt: skip
        answer = api.post(url, bad, format="json")
        assert answer.status_code == 400, (bad, answer.content)


def test_versions_revert_and_off_by_compare_and_set(api, conversation, llm):
    base = f"/api/v1/conversations/{conversation.pk}/dio"
    for n in (1, 2):
        api.post(f"{base}/", {"instruction": f"rule {n}", "requestId": f"t{n}:dio"}, format="json")
        _compile(llm, f"t{n}:dio", f"Prompt {n}.")
    listing = api.get(f"{base}/versions/").json()
    assert listing["currentVersion"] == 2 and listing["active"] is True
    assert listing["originalPrompt"] == "A lighthouse keeper."
    assert [v["compiledPrompt"] for v in listing["versions"]] == ["Prompt 2.", "Prompt 1."]
    assert [t["status"] for t in listing["tasks"]] == ["succeeded", "succeeded"]
    stale = api.post(f"{base}/revert/", {"version": 1, "expectedVersion": 1}, format="json")
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "version_conflict"
    assert stale.json()["error"]["details"]["currentVersion"] == 2
    missing = api.post(f"{base}/revert/", {"version": 9, "expectedVersion": 2}, format="json")
    assert missing.status_code == 404
    done = api.post(f"{base}/revert/", {"version": 1, "expectedVersion": 2}, format="json")
    assert done.status_code == 200 and done.json()["versions"][0]["kind"] == "revert"
    off = api.post(f"{base}/off/", {"expectedVersion": 3}, format="json").json()
    assert off["currentVersion"] == 4 and off["active"] is False
    to_off = api.post(f"{base}/revert/", {"version": 4, "expectedVersion": 4}, format="json")
    assert to_off.status_code == 422 and to_off.json()["error"]["code"] == "dio_revert_to_off"
    for bad in ({"expectedVersion": -1}, {"expectedVersion": "two"}, {}):
        assert api.post(f"{base}/off/", bad, format="json").status_code == 400


def test_the_protocol_endpoints(api, conversation, llm):
    body = _chat_body(conversation, language="en")
    accepted = api.post("/v1/chat", body, format="json")
    assert accepted.status_code == 202, accepted.content
    assert accepted.json()["conversationId"] == f"dio_{conversation.pk}"
    assert accepted.json()["taskMessageId"] == "turn-9:dio:assistant"
    duplicate = api.post("/v1/chat", body, format="json")
    assert duplicate.status_code == 409 and duplicate.json()["error"]["code"] == "dio_duplicate"
    task = api.get("/v1/director/tasks/by-request/turn-9:dio").json()
    assert task["status"] == "processing" and task["promptChanged"] is False
    query = {"userId": body["userId"], "conversationId": f"dio_{conversation.pk}",
             "targetPromptId": body["targetPromptId"]}  # fmt: skip
    none = api.get("/v1/director/active-prompt", query)
    assert none.status_code == 404 and none.json()["error"]["code"] == "no_active_prompt"
    _compile(llm, "turn-9:dio", "Mira, terse.")
    task = api.get("/v1/director/tasks/by-request/turn-9%3Adio").json()
    assert task["status"] == "succeeded" and task["promptChanged"] is True
    active = api.get("/v1/director/active-prompt", query).json()
    assert active["compiledPrompt"] == "Mira, terse." and active["version"] == 1
    assert task["compiledPromptSha256"] == active["sha256"]
    assert api.get("/v1/director/tasks/by-request/nope").status_code == 404
    assert api.get("/v1/director/active-prompt", {"userId": "u"}).status_code == 400
    bad = api.post("/v1/chat", {**body, "requestId": "x" * 201}, format="json")
    assert (
        bad.status_code == 400 and bad.json()["error"]["details"]["errors"][0]["loc"] == "requestId"
    )
    assert api.post("/v1/chat", [1], format="json").status_code == 400


def test_a_token_without_play_scope_cannot_submit(api_client_for, tenant, conversation):
    content = api_client_for(tenant, scopes=("content",))
    assert content.post("/v1/chat", _chat_body(conversation), format="json").status_code == 403
    assert content.get(f"/api/v1/conversations/{conversation.pk}/dio/versions/").status_code == 200


def test_another_tenants_dio_is_not_found(api_client_for, other_tenant, conversation, llm, api):
    api.post("/v1/chat", _chat_body(conversation), format="json")
    _compile(llm, "turn-9:dio", "Mira, terse.")
    foreign = api_client_for(other_tenant)
    base = f"/api/v1/conversations/{conversation.pk}/dio"
    assert foreign.post(f"{base}/", {"instruction": SHORT}, format="json").status_code == 404
    assert foreign.get(f"{base}/versions/").status_code == 404
    assert foreign.post(f"{base}/off/", {"expectedVersion": 1}, format="json").status_code == 404
    chat = foreign.post("/v1/chat", _chat_body(conversation, "other:dio"), format="json")
    assert chat.status_code == 404 and chat.json()["error"]["code"] == "conversation_not_found"
    assert foreign.get("/v1/director/tasks/by-request/turn-9:dio").status_code == 404
    identity = identity_for(conversation)
    query = {"userId": identity.user_id, "conversationId": identity.conversation_id,
             "targetPromptId": identity.target_prompt_id}  # fmt: skip
    assert foreign.get("/v1/director/active-prompt", query).status_code == 404
    assert api.get("/v1/director/active-prompt", query).status_code == 200
    anonymous = APIClient().get("/v1/director/active-prompt", query)
    assert anonymous.status_code in (401, 403)
