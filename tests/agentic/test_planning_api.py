"""``planning-runs/`` and ``auto-replies`` over REST: the run record, and every way an
auto-reply request can fail (not configured, not ready, a model that will not give three
valid options, bad input), none of which writes anything."""

from __future__ import annotations

import uuid

import pytest

from memory import services as message_store
from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall, PlanningRun, Turn
from tests.agentic.world import make_world
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def other_api(api_client_for, other_tenant):
    return api_client_for(other_tenant)


@pytest.fixture
def world(tenant, player, character, llm):
    scenario, configs, conversation = make_world(tenant, player, character, llm)
    user = message_store.save_message(
        tenant, conversation.session_id, role="user", content="Can you help me?"
    )
    reply = message_store.save_message(
        tenant, conversation.session_id, role="assistant", content="Of course, traveller."
    )
    turn = Turn.objects.create(
        tenant=tenant, conversation=conversation, client_message_id="t1",
        user_message_id=user.pk, assistant_message_id=reply.pk, status="complete",
    )  # fmt: skip
    return scenario, conversation, reply, turn


def _run(tenant, scenario, conversation, reply, turn, **fields):
    return PlanningRun.objects.create(
        tenant=tenant, turn=turn, conversation=conversation, scenario=scenario,
        assistant_message_id=reply.pk, source_turn=1, status="done", outcome="no_tools",
        snapshot={"revision": 0, "guidance": "GUIDE: the lamp is lit"}, **fields,
    )  # fmt: skip


def _ask(api, conversation, **body):
    return api.post(f"/api/v1/conversations/{conversation.pk}/auto-replies", body, format="json")


def test_planning_runs_list_and_detail(api, tenant, world):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn, tools_run=["judge_npc"])
    listed = api.get(f"/api/v1/conversations/{conversation.pk}/planning-runs/").json()
    assert [r["turn_id"] for r in listed["results"]] == [str(turn.pk)]
    one = api.get(f"/api/v1/conversations/{conversation.pk}/planning-runs/{turn.pk}/").json()
    assert one["outcome"] == "no_tools" and one["tools_run"] == ["judge_npc"]
    assert one["snapshot_revision"] == 0 and one["guidance"].startswith("GUIDE")
    for bad in (uuid.uuid4(), "not-a-uuid"):
        response = api.get(f"/api/v1/conversations/{conversation.pk}/planning-runs/{bad}/")
        assert_error(response, 404, "not_found")


def test_a_foreign_tenant_sees_no_runs(other_api, tenant, world):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn)
    path = f"/api/v1/conversations/{conversation.pk}/planning-runs/{turn.pk}/"
    assert_error(other_api.get(path), 404, "not_found")
    body = {"assistant_message_id": str(reply.pk), "language": "en"}
    assert_error(_ask(other_api, conversation, **body), 404, "not_found")


def test_auto_replies_use_the_recorded_guidance(api, tenant, world, llm):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn)
    llm.enqueue(Reply(content='```json\n["1. 走吧", "2. 你还好吗？", "3. 看看四周"]\n```'))
    before = Message.objects.count()
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="zh-CN")
    assert response.status_code == 200, response.content
    assert response.json()["options"] == ["走吧", "你还好吗？", "看看四周"]
    request = llm.requests[-1]
    assert "GUIDE: the lamp is lit" in request["messages"][-1]["content"]
    assert "zh-CN" in request["messages"][0]["content"]
    assert Message.objects.count() == before
    assert ModelCall.objects.filter(purpose="auto_reply").count() == 1


def test_fewer_than_three_valid_options_is_retried_then_502(api, tenant, world, llm):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn)
    llm.enqueue(*[Reply(content='["Go on.", "Go on."]')] * 3)  # English, not Japanese
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="ja")
    error = assert_error(response, 502, "auto_reply_failed")
    assert error["details"]["attempts"] == 3
    assert ModelCall.objects.filter(purpose="auto_reply").count() == 3


def test_options_from_several_attempts_add_up(api, tenant, world, llm):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn)
    llm.enqueue(Reply(content='{"options": ["Wait."]}'), Reply(content='["Run.", "Hide."]'))
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="en")
    assert response.json()["options"] == ["Wait.", "Run.", "Hide."]
    assert response.json()["usage"]["total_tokens"] > 0


def test_no_recorded_snapshot_is_503_retryable(api, world):
    _scenario, conversation, reply, _turn = world
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="en", wait_ms=0)
    error = assert_error(response, 503, "turn_start_snapshot_not_ready")
    assert error["details"]["retryable"] is True


def test_bad_input_is_rejected(api, world, character):
    scenario, conversation, reply, _turn = world
    cases = [
        {"language": "en"},
        {"assistant_message_id": "nope", "language": "en"},
        {"assistant_message_id": str(reply.pk), "language": ""},
        {"assistant_message_id": str(reply.pk), "language": "x" * 41},
        {"assistant_message_id": str(reply.pk), "language": "en", "wait_ms": -1},
        {"assistant_message_id": str(reply.pk), "language": "en", "wait_ms": 120001},
        {"assistant_message_id": str(reply.pk), "language": "en", "extra": 1},
    ]
    for body in cases:
        assert_error(_ask(api, conversation, **body), 400, "validation_error")
    unknown = _ask(api, conversation, assistant_message_id=str(uuid.uuid4()), language="en")
    assert_error(unknown, 404, "not_found")


def test_a_scenario_without_auto_reply_is_422(api, world):
    scenario, conversation, reply, _turn = world
    scenario.agentic_v2 = {**scenario.agentic_v2, "modelConfigs": {
        **scenario.agentic_v2["modelConfigs"], "autoReply": None}}  # fmt: skip
    scenario.save(update_fields=["agentic_v2"])
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="en")
    assert_error(response, 422, "auto_reply_not_configured")


def test_the_material_includes_the_character_description(api, tenant, world, character, llm):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn)
    llm.enqueue(Reply(content='["Go on.", "Are you well?", "Look around."]'))
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="en")
    assert response.status_code == 200, response.content
    assert character.description in llm.requests[-1]["messages"][-1]["content"]


def test_a_content_filtered_answer_ends_the_attempts_at_once(api, tenant, world, llm):
    scenario, conversation, reply, turn = world
    _run(tenant, scenario, conversation, reply, turn)
    llm.enqueue(*[Reply(content="", finish_reason="content_filter")] * 3)
    response = _ask(api, conversation, assistant_message_id=str(reply.pk), language="en")
    error = assert_error(response, 502, "auto_reply_failed")
    assert error["details"]["attempts"] == 1
    assert error["details"]["model_error"] == "model_content_filtered"
    assert ModelCall.objects.filter(purpose="auto_reply").count() == 1
