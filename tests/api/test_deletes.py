"""Deletes through the API: a conversation with a reply in flight is not deleted under it."""

from __future__ import annotations

import uuid
from datetime import timedelta

import pytest
from django.utils import timezone

from memory.models import Message
from roleplay.models import Conversation, Turn, TurnStatus
from tests.api.helpers import assert_error, db_snapshot

DELETES = [
    ("conversations", lambda world: world.conversation.id),
    ("characters", lambda world: world.character.id),
    ("players", lambda world: world.player.id),
]


def _running_turn(conversation, lease: timedelta) -> Turn:
    return Turn.objects.create(
        tenant=conversation.tenant,
        conversation=conversation,
        client_message_id="in-flight",
        user_message_id=uuid.uuid4(),
        assistant_message_id=uuid.uuid4(),
        status=TurnStatus.RUNNING,
        lease_expires_at=timezone.now() + lease,
    )


@pytest.mark.parametrize(("resource", "pk"), DELETES, ids=[r for r, _ in DELETES])
def test_a_turn_in_flight_blocks_the_delete_and_nothing_goes(api, own, resource, pk):
    _running_turn(own.conversation, timedelta(seconds=30))
    before = db_snapshot()
    response = api.delete(f"/api/v1/{resource}/{pk(own)}/")
    error = assert_error(response, 409, "turn_in_progress")
    assert error["details"] == {"conversation_id": str(own.conversation.id)}
    assert db_snapshot() == before


@pytest.mark.parametrize(("resource", "pk"), DELETES, ids=[r for r, _ in DELETES])
def test_an_abandoned_turn_does_not_block(api, own, resource, pk):
    _running_turn(own.conversation, timedelta(seconds=-1))  # its process died
    assert api.delete(f"/api/v1/{resource}/{pk(own)}/").status_code == 204
    assert not Conversation.objects.filter(pk=own.conversation.pk).exists()
    assert not Message.objects.filter(session_id=own.conversation.session_id).exists()


def test_another_tenants_turn_blocks_nothing_here(api, own, foreign):
    _running_turn(foreign.conversation, timedelta(seconds=30))
    assert api.delete(f"/api/v1/characters/{own.character.id}/").status_code == 204
    assert Conversation.objects.filter(pk=foreign.conversation.pk).exists()
