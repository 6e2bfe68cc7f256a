"""Bursts: sign-ups per address and chat turns per player, 429 with ``Retry-After``."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import sync_to_async
from django.test import Client

from memory.models import Message
from roleplay.models import Turn
from tests.ws.test_chat_socket import connect, receive_until


def test_sign_ups_from_one_address_are_limited(app_tenant, settings):
    from roleplay.accounts import services
    from roleplay.accounts.models import PlayerAccount

    services.set_app_settings(app_tenant, signup_policy="open")
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "signup_address": (2, 3600)}
    client = Client(REMOTE_ADDR="198.51.100.23")
    for i in range(2):
        answer = client.post(
            "/app/signup/",
            {"email": f"p{i}@example.com", "password": "pw-player-123456",
             "password_again": "pw-player-123456"},
        )  # fmt: skip
        assert answer.status_code in (200, 302), answer.status_code
    over = client.post(
        "/app/signup/",
        {"email": "p9@example.com", "password": "pw-player-123456",
         "password_again": "pw-player-123456"},
    )  # fmt: skip
    assert over.status_code == 429
    assert 0 < int(over["Retry-After"]) <= 3600
    assert not PlayerAccount.objects.filter(email="p9@example.com").exists()
    other = Client(REMOTE_ADDR="198.51.100.24").get("/app/signup/")
    assert other.status_code == 200  # another address, and a GET, are not counted


@pytest.mark.asyncio
@pytest.mark.django_db(transaction=True)
async def test_a_burst_of_turns_from_one_player_is_refused_with_retry_after(
    conversation, llm, settings
):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat_account": (1, 3600)}
    comm = await connect(conversation)
    frame = {"type": "user_message", "client_message_id": "r1", "content": "Hi"}
    await comm.send_to(text_data=json.dumps(frame))
    events = await receive_until(comm, "turn.completed")
    assert events[-1]["type"] == "turn.completed"
    await comm.send_to(text_data=json.dumps({**frame, "client_message_id": "r2"}))
    error = json.loads(await comm.receive_from(timeout=10))
    assert error["type"] == "error" and error["code"] == "rate_limited"
    assert 0 < error["retry_after"] <= 3600 and error["client_message_id"] == "r2"
    count = await sync_to_async(Turn.objects.filter(conversation=conversation).count)()
    assert count == 1
    await comm.disconnect()


@pytest.mark.django_db(transaction=True)
def test_a_burst_of_rest_turns_from_one_token_is_a_429_that_stores_nothing(
    api, api_client_for, tenant, conversation, llm, settings
):
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "chat_token": (1, 3600)}
    path = f"/api/v1/conversations/{conversation.pk}/turns/run"
    first = api.post(path, {"client_message_id": "t1", "content": "Hi"}, format="json")
    assert first.status_code == 201, first.content[:300]
    messages = Message.objects.filter(session_id=str(conversation.pk)).count()
    over = api.post(path, {"client_message_id": "t2", "content": "Again"}, format="json")
    assert over.status_code == 429, over.content[:300]
    assert over.json()["error"]["code"] == "rate_limited"
    assert 0 < int(over["Retry-After"]) <= 3600
    assert Turn.objects.filter(conversation=conversation).count() == 1
    assert Message.objects.filter(session_id=str(conversation.pk)).count() == messages
    # Another token of the tenant has a window of its own.
    other = api_client_for(tenant)
    fresh = other.post(path, {"client_message_id": "t3", "content": "Hi"}, format="json")
    assert fresh.status_code == 201, fresh.content[:300]
