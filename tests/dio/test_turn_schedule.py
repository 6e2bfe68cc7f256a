"""``schedule_dio`` in the front tool loop (``roleplay.dio.plugin.schedule``): offered only
when the scenario's DIO is on, it submits the player's raw input of the turn with the
conversation's identity; the receipt goes back to the controller and ``dio.accepted`` to the
sockets; a second call in the same reply is refused."""

from __future__ import annotations

import json

import pytest

from roleplay.dio.identity import identity_for
from roleplay.llm.scripted_server import Reply
from roleplay.models import Turn
from tests.dio.turn_support import (
    CONTROLLER_MODEL,
    MemoryBackend,
    call,
    dio_scenario,
    installed,
    run,
)
from tests.ws.test_chat_socket import connect, receive_until

pytestmark = pytest.mark.django_db(transaction=True)

RAW = "From now on, Mira answers in short sentences."


@pytest.fixture
def backend():
    with installed(MemoryBackend()) as found:
        yield found


def controller_calls(llm) -> list[dict]:
    return [r for r in llm.requests if r["model"] == CONTROLLER_MODEL]


def receipt_of(request: dict) -> dict:
    return json.loads(request["messages"][-1]["content"])


def test_schedule_dio_submits_the_raw_input_and_answers_the_seed_s_receipt(
    api, tenant, conversation, model_config, llm, backend
):
    dio_scenario(tenant, conversation, model_config, llm)
    llm.enqueue(call("schedule_dio"), call("actor"), Reply(content="Understood."), call("over"))
    body = run(api, conversation, RAW, "d-1")
    turn_id = body["turn"]["id"]
    calls = controller_calls(llm)
    assert [t["function"]["name"] for t in calls[0]["tools"]] == [
        "actor",
        "schedule_dio",
        "over",
    ]
    [submitted] = backend.submitted
    assert submitted.instruction == RAW  # the player's words, not the controller's
    assert submitted.identity == identity_for(conversation)
    assert submitted.identity.target_prompt_id == str(conversation.character_id)
    assert submitted.turn_id == turn_id
    receipt = receipt_of(calls[1])
    assert receipt == {
        "tool": "schedule_dio",
        "accepted": True,
        "dioConversationId": f"dio_{conversation.pk}",
        "requestId": f"{turn_id}:dio",
        "taskMessageId": f"{turn_id}:dio:assistant",
        "appliesFrom": "next_turn",
    }
    turn = Turn.objects.get(pk=turn_id)
    assert turn.status == "complete" and body["reply"]["content"] == "Understood."
    assert turn.trace["dio"]["scheduled"]["requestId"] == f"{turn_id}:dio"
    assert turn.trace["front_loop"]["steps"] == 3


def test_a_second_schedule_dio_in_one_reply_is_refused(
    api, tenant, conversation, model_config, llm, backend
):
    dio_scenario(tenant, conversation, model_config, llm)
    llm.enqueue(
        call("schedule_dio"),
        call("schedule_dio"),
        call("actor"),
        Reply(content="Fine."),
        call("over"),
    )
    run(api, conversation, RAW, "d-2")
    assert len(backend.submitted) == 1
    second = receipt_of(controller_calls(llm)[2])
    assert second == {"tool": "schedule_dio", "accepted": False, "reason": "already_scheduled"}


def test_a_refusal_of_the_backend_is_a_receipt_with_its_code(
    api, tenant, conversation, model_config, llm, backend
):
    from roleplay.dio.engine.ports import DioError

    async def refuse(request):
        raise DioError("dio_identity_mismatch", "the service accepted another prompt")

    backend.schedule = refuse  # this backend's answer for the test
    dio_scenario(tenant, conversation, model_config, llm)
    llm.enqueue(call("schedule_dio"), call("actor"), Reply(content="Fine."), call("over"))
    body = run(api, conversation, RAW, "d-3")
    refused = receipt_of(controller_calls(llm)[1])
    assert refused["accepted"] is False and refused["reason"] == "dio_identity_mismatch"
    trace = Turn.objects.get(pk=body["turn"]["id"]).trace
    assert trace["dio"]["scheduled"] == {"accepted": False, "code": "dio_identity_mismatch"}


@pytest.mark.parametrize("dio", [None, {"mode": "off"}])
def test_schedule_dio_is_not_offered_when_dio_is_off(
    api, tenant, conversation, model_config, llm, backend, dio
):
    scenario = dio_scenario(tenant, conversation, model_config, llm, dio={"mode": "off"})
    scenario.dio = dio
    scenario.save(update_fields=["dio"])
    llm.enqueue(call("actor"), Reply(content="Fine."), call("over"))
    run(api, conversation, RAW, "d-4")
    tools = [t["function"]["name"] for t in controller_calls(llm)[0]["tools"]]
    assert tools == ["actor", "over"]
    assert backend.submitted == [] and backend.configs == []


def test_a_regenerate_does_not_offer_schedule_dio(
    api, tenant, conversation, model_config, llm, backend
):
    dio_scenario(tenant, conversation, model_config, llm)
    llm.enqueue(call("actor"), Reply(content="One."), call("over"))
    run(api, conversation, RAW, "d-5")
    llm.enqueue(call("actor"), Reply(content="Two."), call("over"))
    response = api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": "d-6", "kind": "regenerate"},
        format="json",
    )
    assert response.status_code == 201, response.content
    tools = [t["function"]["name"] for t in controller_calls(llm)[-2]["tools"]]
    assert tools == ["actor", "over"]


@pytest.mark.asyncio
async def test_the_socket_hears_dio_accepted_before_the_turn_completes(
    tenant, conversation, model_config, llm, backend
):
    from asgiref.sync import sync_to_async

    await sync_to_async(dio_scenario)(tenant, conversation, model_config, llm)
    llm.enqueue(call("schedule_dio"), call("actor"), Reply(content="Yes."), call("over"))
    comm = await connect(conversation)
    body = {"type": "user_message", "client_message_id": "d-7", "content": RAW}
    await comm.send_to(text_data=json.dumps(body))
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    [accepted] = [e for e in events if e["type"] == "dio.accepted"]
    turn_id = events[-1]["turn_id"]
    assert accepted == {
        "type": "dio.accepted",
        "turn_id": turn_id,
        "accepted": True,
        "dioConversationId": f"dio_{conversation.pk}",
        "requestId": f"{turn_id}:dio",
        "taskMessageId": f"{turn_id}:dio:assistant",
        "appliesFrom": "next_turn",
    }
    await comm.disconnect()


def test_a_receipt_naming_another_submission_is_not_taken_as_accepted(
    api, tenant, conversation, model_config, llm, backend
):
    from roleplay.dio.engine.ports import Receipt

    async def elsewhere(request):
        return Receipt("dio_other", "other-turn:dio", "other-turn:dio:assistant")

    backend.schedule = elsewhere
    dio_scenario(tenant, conversation, model_config, llm)
    llm.enqueue(call("schedule_dio"), call("actor"), Reply(content="Fine."), call("over"))
    body = run(api, conversation, RAW, "d-8")
    refused = receipt_of(controller_calls(llm)[1])
    assert refused["accepted"] is False and refused["reason"] == "dio_identity_mismatch"
    trace = Turn.objects.get(pk=body["turn"]["id"]).trace
    assert trace["dio"]["scheduled"]["code"] == "dio_identity_mismatch"
