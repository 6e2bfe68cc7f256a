"""A quota at each door a turn comes by: the REST turn run (429 with the same code and
details), the chat socket (an ``error`` event) and the auto-reply frame; tokens charged from
the recorded usage of the turn's model calls; the plan's caps on what the turn asks."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async

from memory.models import Message
from roleplay.llm.scripted_server import Reply
from roleplay.models import ModelCall, Turn
from roleplay.prompting.assembly import SAFETY_MARGIN_TOKENS
from roleplay.quotas.models import QuotaCounter
from roleplay.quotas.selectors import usage_summary
from tests.ws.test_chat_socket import connect, receive_until


def _run(api, conversation, client_id, content="Hello"):
    return api.post(
        f"/api/v1/conversations/{conversation.pk}/turns/run",
        {"client_message_id": client_id, "content": content},
        format="json",
    )


@pytest.mark.django_db(transaction=True)
def test_rest_turns_charge_tokens_and_the_next_one_over_the_plan_is_a_429(
    api, player, give_plan, conversation, llm
):
    give_plan(player, messages_per_day=1, max_reply_tokens=40, max_context_tokens=2000)
    llm.enqueue(Reply(content="The lamp is lit.", usage={"prompt_tokens": 70,
                      "completion_tokens": 5, "total_tokens": 75}))  # fmt: skip
    first = _run(api, conversation, "c-1")
    assert first.status_code == 201, first.content[:300]
    assert llm.requests[-1]["max_tokens"] == 40  # the plan's cap, not the config's 256
    turn = Turn.objects.get(conversation=conversation)
    # the window is the plan's 2000 (not the config's 4096), less the reply and the margin
    assert turn.trace["prompt"]["budget"] == 2000 - 40 - SAFETY_MARGIN_TOKENS
    calls = ModelCall.objects.filter(turn__conversation=conversation)
    charged = sum(c.total_tokens for c in calls)
    assert charged >= 75
    day = QuotaCounter.objects.get(player=player, period="day")
    month = QuotaCounter.objects.get(player=player, period="month")
    assert (day.messages, day.tokens, month.tokens) == (1, charged, charged)

    second = _run(api, conversation, "c-2")
    assert second.status_code == 429
    assert second["Retry-After"].isdigit() and int(second["Retry-After"]) > 0
    error = second.json()["error"]
    assert error["code"] == "quota_exceeded"
    assert (error["details"]["limit"], error["details"]["used"]) == (1, 1)
    assert error["details"]["retry_at"].endswith("Z")
    assert Turn.objects.filter(conversation=conversation).count() == 1
    contents = Message.objects.filter(session_id=str(conversation.id), role="user")
    assert [m.content for m in contents] == ["Hello"]


@pytest.mark.django_db(transaction=True)
def test_a_model_config_the_plan_does_not_allow_is_refused(
    api, tenant, player, give_plan, conversation, llm
):
    from roleplay.models import ModelConfig

    other = ModelConfig.objects.create(
        tenant=tenant, name="big", provider="openai_compatible", model="big",
        base_url=llm.base_url,
    )  # fmt: skip
    give_plan(player, model_configs=[other.pk])
    answer = _run(api, conversation, "c-1")
    assert answer.status_code == 422
    assert answer.json()["error"]["code"] == "model_config_not_allowed"
    assert not Turn.objects.filter(conversation=conversation).exists()
    assert usage_summary(player).messages_today.used == 0


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_the_socket_answers_a_refused_turn_with_a_quota_error_event(
    player, give_plan, conversation, llm
):
    await sync_to_async(give_plan)(player, messages_per_day=1)
    comm = await connect(conversation)
    frame = {"type": "user_message", "client_message_id": "c1", "content": "Hi"}
    await comm.send_to(text_data=json.dumps(frame))
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    await comm.send_to(text_data=json.dumps({**frame, "client_message_id": "c2"}))
    error = json.loads(await comm.receive_from(timeout=10))
    assert error["type"] == "error" and error["code"] == "quota_exceeded"
    assert (error["limit"], error["used"]) == (1, 1)
    assert error["client_message_id"] == "c2" and error["retry_at"].endswith("Z")
    await comm.send_to(text_data=json.dumps({"type": "regenerate", "client_message_id": "c3"}))
    error = json.loads(await comm.receive_from(timeout=10))
    assert error["code"] == "quota_exceeded"
    turns = await sync_to_async(Turn.objects.filter(conversation=conversation).count)()
    assert turns == 1
    await comm.disconnect()
