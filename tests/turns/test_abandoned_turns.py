"""A running turn whose process stopped beating is abandoned at the conversation's next
message, with the text it had flushed kept as a ``failed`` reply; a turn whose process
beats keeps the conversation; the late end of an abandoned turn writes nothing."""

from __future__ import annotations

import pytest

from console import redis_sync
from memory.models import Message
from roleplay import turns
from roleplay.errors import TurnInProgress
from roleplay.models import Conversation, Turn, TurnStatus
from roleplay.turns import heartbeat

pytestmark = pytest.mark.django_db


@pytest.fixture
def conv(conversation):
    return Conversation.objects.select_related("tenant").get(pk=conversation.pk)


def test_a_turn_of_a_beating_process_keeps_the_conversation(conv):
    start = turns.begin_turn(conv, "c1", "Hello")
    assert start.turn.owner == heartbeat.owner_id() != ""
    with pytest.raises(TurnInProgress):
        turns.begin_turn(conv, "c2", "Still there?")


def test_a_turn_of_a_silent_process_is_abandoned_at_once_and_keeps_its_text(conv):
    start = turns.begin_turn(conv, "c1", "Hello")
    # Its process never beat (or stopped): the lease alone would hold it 30 s more.
    Turn.objects.filter(pk=start.turn.pk).update(
        owner="gone-host:1:dead", partial_reply="Once upon a"
    )
    nxt = turns.begin_turn(conv, "c2", "Hello again")
    assert not nxt.duplicate and nxt.turn.status == TurnStatus.RUNNING
    dead = Turn.objects.get(pk=start.turn.pk)
    assert (dead.status, dead.error_code) == (TurnStatus.FAILED, "turn_abandoned")
    kept = Message.objects.get(pk=dead.assistant_message_id)
    assert (kept.role, kept.status, kept.content) == ("assistant", "failed", "Once upon a")
    # The process was only slow: its end comes late and changes nothing.
    assert not turns.finish_turn(dead, content="Once upon a time.", status=TurnStatus.COMPLETE)
    kept.refresh_from_db()
    assert (kept.status, kept.content) == ("failed", "Once upon a")
    assert Turn.objects.get(pk=dead.pk).status == TurnStatus.FAILED


def test_without_redis_the_lease_decides(conv, settings):
    start = turns.begin_turn(conv, "c1", "Hello")
    Turn.objects.filter(pk=start.turn.pk).update(owner="gone-host:1:dead")
    good = settings.REDIS_URL
    settings.REDIS_URL = "unix:///nonexistent/redis.sock"  # a Redis nobody answers at
    redis_sync.client.cache_clear()
    try:
        with pytest.raises(TurnInProgress):
            turns.begin_turn(conv, "c2", "Hello again")
    finally:
        settings.REDIS_URL = good
        redis_sync.client.cache_clear()
    assert Turn.objects.get(pk=start.turn.pk).status == TurnStatus.RUNNING


def test_the_sweep_keeps_nothing_when_nothing_streamed(conv):
    start = turns.begin_turn(conv, "c1", "Hello")
    Turn.objects.filter(pk=start.turn.pk).update(owner="gone-host:1:dead")
    assert turns.expire_abandoned() == 1
    dead = Turn.objects.get(pk=start.turn.pk)
    assert dead.error_code == "turn_abandoned"
    assert not Message.objects.filter(pk=dead.assistant_message_id).exists()
    assert turns.expire_abandoned() == 0
