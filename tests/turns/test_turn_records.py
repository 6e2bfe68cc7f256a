"""A turn's start and finish: the rows they write, the context generation reads, the two
turn rules (one turn per client id, one running turn per conversation), and the sweep."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memory.models import Message
from roleplay import turns
from roleplay.models import Conversation, ModelConfig, Turn, TurnStatus

pytestmark = pytest.mark.django_db(transaction=True)


def socket_conversation(conversation) -> Conversation:
    """The conversation as a socket holds it: loaded once, with its tenant."""
    return Conversation.objects.select_related("tenant").get(pk=conversation.pk)


def test_start_stores_the_message_and_the_turn_and_reads_the_context(conversation):
    conv = socket_conversation(conversation)
    for client_id, text in (("c0", "Hello"), ("c1", "And you?")):
        start, ctx = turns.begin_and_load(conv, client_id, text)
        turns.finish_turn(
            start.turn, content=f"reply to {text}", status=TurnStatus.COMPLETE, config=ctx.config
        )
    start, ctx = turns.begin_and_load(conv, "c2", "Third")
    assert not start.duplicate
    turn = Turn.objects.get(pk=start.turn.pk)
    assert (turn.status, turn.client_message_id) == ("running", "c2")
    assert turn.lease_expires_at is not None and turn.tenant_id == conversation.tenant_id
    user = Message.objects.get(pk=turn.user_message_id)
    assert (user.role, user.content, user.kind, user.status) == (
        "user",
        "Third",
        "chat",
        "complete",
    )
    assert user.metadata == {"client_message_id": "c2"}
    # Read again later, the turn has the same context.
    reference = turns.load_context(turn)
    assert ctx.history == reference.history
    assert all(m.id and m.ts for m in ctx.history)  # ids and timestamps reach the phases
    assert ctx.chat_history() == [
        {"role": "user", "content": "Hello"},
        {"role": "assistant", "content": "reply to Hello"},
        {"role": "user", "content": "And you?"},
        {"role": "assistant", "content": "reply to And you?"},
    ]
    assert ctx.character == reference.character and ctx.greeting == reference.greeting == "Welcome."
    assert ctx.user_input == reference.user_input == "Third"
    assert ctx.user_name == reference.user_name
    assert ctx.config == reference.config and ctx.config is not None
    # Timestamps strictly increase within the session.
    stamps = list(
        Message.objects.filter(session_id=conv.session_id)
        .order_by("ts")
        .values_list("ts", flat=True)
    )
    assert stamps == sorted(set(stamps)) and len(stamps) == 5


def test_a_repeated_client_id_and_a_running_turn(conversation):
    conv = socket_conversation(conversation)
    first, _ = turns.begin_and_load(conv, "same", "Hello")
    again, ctx = turns.begin_and_load(conv, "same", "Hello again")
    assert again.duplicate and again.turn.pk == first.turn.pk and ctx is None
    with pytest.raises(turns.TurnInProgress):
        turns.begin_and_load(conv, "other", "Are you there?")
    assert Message.objects.filter(session_id=conv.session_id).count() == 1


def test_an_abandoned_turn_gives_way_and_the_sweep_fails_it(conversation):
    conv = socket_conversation(conversation)
    first, _ = turns.begin_and_load(conv, "c0", "Hello")
    Turn.objects.filter(pk=first.turn.pk).update(lease_expires_at=timezone.now())
    second, ctx = turns.begin_and_load(conv, "c1", "Anyone?")
    assert not second.duplicate and ctx.user_input == "Anyone?"
    abandoned = Turn.objects.get(pk=first.turn.pk)
    assert (abandoned.status, abandoned.error_code) == ("failed", "turn_abandoned")
    Turn.objects.filter(pk=second.turn.pk).update(lease_expires_at=timezone.now())
    assert turns.expire_abandoned() == 1


def test_the_model_config_follows_edits(conversation, model_config):
    conv = socket_conversation(conversation)
    start, ctx = turns.begin_and_load(conv, "c0", "Hello")
    assert ctx.config.context_limit == model_config.context_limit
    turns.finish_turn(start.turn, content="hi", status=TurnStatus.COMPLETE, config=ctx.config)
    ModelConfig.objects.filter(pk=model_config.pk).update(
        context_limit=model_config.context_limit + 1
    )
    fresh = ModelConfig.objects.get(pk=model_config.pk)
    fresh.save()  # a console edit bumps updated_at
    _, ctx = turns.begin_and_load(conv, "c1", "Hello again")
    assert ctx.config.context_limit == model_config.context_limit + 1


@pytest.mark.parametrize(
    ("status", "content", "stored"),
    [
        (TurnStatus.COMPLETE, "All done.", "complete"),
        (TurnStatus.CANCELLED, "Half a", "cancelled"),
        (TurnStatus.FAILED, "", None),
    ],
)
def test_finish_stores_the_reply_and_closes_the_turn(conversation, status, content, stored):
    conv = socket_conversation(conversation)
    start, ctx = turns.begin_and_load(conv, "c0", "Hello")
    error = None if status == TurnStatus.COMPLETE else "turn_cancelled"
    turns.finish_turn(
        start.turn,
        content=content,
        status=status,
        usage={"output_tokens": 3},
        error_code=error,
        trace={"prompt": {"messages": 2}},
        config=ctx.config,
    )
    turn = Turn.objects.get(pk=start.turn.pk)
    assert (turn.status, turn.error_code, turn.usage) == (status, error, {"output_tokens": 3})
    assert turn.trace == {"prompt": {"messages": 2}} and turn.finished_at is not None
    assert turn.model_config_id == ctx.config.pk
    reply = Message.objects.filter(pk=turn.assistant_message_id).first()
    if stored is None:
        assert reply is None
    else:
        assert (reply.role, reply.content, reply.status) == ("assistant", content, stored)
        assert reply.metadata["turn_id"] == str(turn.pk)
        assert reply.ts > Message.objects.get(pk=turn.user_message_id).ts
