"""A turn's rows: the player's message and the running turn at its start, the reply and the
turn's end at its finish, and the sweep of turns whose process died.

The database enforces the two turn rules: one running turn per conversation and one turn per
``client_message_id`` (see ``Turn``). A start is one transaction of two statements: the
message store's append (which carries the store's timestamp rule) and the turn's insert;
either rule broken shows as a unique violation, and only then is anything else read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from memory import services as message_store
from memory.models import MessageStatus
from roleplay.errors import TurnInProgress
from roleplay.models import Conversation, Turn, TurnStatus

MAX_CONTENT_BYTES = 16 * 1024
LEASE = timedelta(seconds=30)

_MESSAGE_STATUS = {
    TurnStatus.COMPLETE: MessageStatus.COMPLETE,
    TurnStatus.FAILED: MessageStatus.FAILED,
    TurnStatus.CANCELLED: MessageStatus.CANCELLED,
}


@dataclass(frozen=True)
class TurnStart:
    """The turn a player's message started, or the earlier turn of the same client id."""

    turn: Turn
    duplicate: bool


def begin_turn(conversation: Conversation, client_message_id: str, content: str) -> TurnStart:
    """Store the user message and a running turn, or return the turn of this client id.
    A turn still running raises ``TurnInProgress`` unless its lease ran out."""
    try:
        return _insert_turn(conversation, client_message_id, content)
    except TurnInProgress:
        if not expire_abandoned(conversation):
            raise
        return _insert_turn(conversation, client_message_id, content)


def _insert_turn(conversation: Conversation, client_message_id: str, content: str) -> TurnStart:
    try:
        with transaction.atomic():
            user_message = message_store.save_message(
                conversation.tenant,
                conversation.session_id,
                role="user",
                content=content,
                kind="chat",
                metadata={"client_message_id": client_message_id},
            )
            turn = Turn.objects.create(
                tenant=conversation.tenant,
                conversation=conversation,
                client_message_id=client_message_id,
                user_message_id=user_message.id,
                assistant_message_id=uuid.uuid4(),
                lease_expires_at=timezone.now() + LEASE,
            )
            return TurnStart(turn, duplicate=False)
    except IntegrityError as exc:
        again = Turn.objects.filter(
            conversation=conversation, client_message_id=client_message_id
        ).first()
        if again is not None:
            return TurnStart(again, duplicate=True)
        raise TurnInProgress(
            "turn_in_progress", "a reply is still being generated in this conversation"
        ) from exc


def finish_turn(
    turn: Turn, *, content: str, status: str, usage=None, error_code=None, trace=None, config=None
) -> None:
    """Store the assistant message (partial text kept on failure) and close the turn."""
    with transaction.atomic():
        if content or status == TurnStatus.COMPLETE:
            message_store.save_message(
                turn.tenant,
                str(turn.conversation_id),
                role="assistant",
                content=content,
                kind="chat",
                status=_MESSAGE_STATUS[status],
                metadata={"turn_id": str(turn.id), **({"error": error_code} if error_code else {})},
                message_id=turn.assistant_message_id,
            )
        Turn.objects.filter(pk=turn.pk).update(
            status=status,
            model_config=config,
            usage=usage or {},
            error_code=error_code,
            trace=trace or {},
            finished_at=timezone.now(),
        )


def expire_abandoned(conversation: Conversation | None = None) -> int:
    """Fail running turns whose lease ran out (their process died), of one conversation or
    of all (the periodic sweep, ``roleplay.tasks.expire_abandoned_turns``)."""
    running = Turn.objects.filter(status=TurnStatus.RUNNING, lease_expires_at__lt=timezone.now())
    if conversation is not None:
        running = running.filter(conversation=conversation)
    return running.update(
        status=TurnStatus.FAILED, error_code="turn_abandoned", finished_at=timezone.now()
    )
