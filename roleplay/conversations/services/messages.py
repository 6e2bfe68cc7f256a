"""A conversation's stored messages changed by a person: edit, pick an alternative, delete
one message, a message and all after it, or the last exchange.

Each checks the message belongs to the conversation (a foreign or unknown id is a 404) and
refuses while a reply is being generated in it (409 ``turn_in_progress``): the turn would
commit against a history that moved under it. The conversation row is locked for the
check, the way deleting conversations does, so a turn cannot start meanwhile. The writes
themselves are the message store's (``memory.alternatives``, ``memory.services``). An edit or
a chosen alternative also withdraws, in the same transaction, the Agent V2 state built from
the message (``agent_state.withdraw_from``; a delete does it on the store's signal).
"""

from __future__ import annotations

from django.db import transaction

from console.scoping import LOOKUP_MISSES
from memory import alternatives, forks
from memory import services as message_store
from memory.errors import MessageShared
from memory.models import Message
from roleplay.agentic.services import agent_state
from roleplay.errors import NotFound, TurnInProgress
from roleplay.models import Conversation
from roleplay.players.selectors import persona_for
from roleplay.regex_scripts.selectors import for_conversation
from roleplay.regex_scripts.turns import stored_text
from roleplay.turns.records import live_turns


def quiet(conversation: Conversation) -> None:
    """Lock the conversation; refuse if a turn is live in it (a dead one does not count)."""
    Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
    if live_turns().filter(conversation=conversation).exists():
        raise TurnInProgress(
            message="a reply is being generated in this conversation; retry when it ends",
            details={"conversation_id": str(conversation.id)},
        )


def message_in_history(conversation: Conversation, message_id) -> Message:
    """The message ``message_id`` of the conversation's history: its own, or one shared with
    the conversation it was branched from up to the fork point (else a 404)."""
    try:
        message = forks.find(conversation.tenant, conversation.session_id, message_id)
    except LOOKUP_MISSES:  # a malformed id is just another unknown one
        message = None
    if message is None:
        raise NotFound("message_not_found", "no such message in this conversation's history")
    return message


def message_of(conversation: Conversation, message_id) -> Message:
    """The conversation's own message ``message_id`` (missing, foreign or malformed: 404;
    one a branch shares with its parent: 409 ``message_shared``)."""
    message = message_in_history(conversation, message_id)
    if message.session_id != conversation.session_id:  # shared by the conversation's parent
        raise MessageShared(
            "message_shared",
            "this message is shared with the conversation this one was branched from: "
            "branch from it to change it",
            details={"conversation_id": str(conversation.id)},
        )
    return message


@transaction.atomic
def edit_message(conversation: Conversation, message_id, content: str, *, editor: str) -> Message:
    """Replace a user's or assistant's text, recording who changed it and when."""
    quiet(conversation)
    message = message_of(conversation, message_id)
    # the scripts marked runOnEdit, on the new text as it is stored (``regex_scripts``)
    scripts = for_conversation(conversation, persona_for(conversation).name)
    content = stored_text(scripts, content, message.role, edit=True)
    edited = alternatives.edit_message(conversation.tenant, message.id, content, editor=editor)
    if edited.content != message.content:
        agent_state.withdraw_from(conversation.tenant_id, conversation.pk, message.ts)
    return edited


@transaction.atomic
def select_alternative(conversation: Conversation, message_id, index: int) -> Message:
    """Make alternative ``index`` the reply that history and every capability see."""
    quiet(conversation)
    message = message_of(conversation, message_id)
    chosen = alternatives.select_alternative(conversation.tenant, message.id, index)
    if chosen.content != message.content:
        agent_state.withdraw_from(conversation.tenant_id, conversation.pk, message.ts)
    return chosen


@transaction.atomic
def delete_message(conversation: Conversation, message_id) -> list[str]:
    """Delete the message alone (with its alternatives and edit records); the messages
    before and after it stay as they are. Its id, in a list like the other deletes."""
    quiet(conversation)
    message = message_of(conversation, message_id)
    message_store.delete_messages_by_timestamps(
        conversation.tenant, conversation.session_id, [message.ts]
    )
    return [str(message.id)]


@transaction.atomic
def rollback_to(conversation: Conversation, message_id) -> list[str]:
    """Delete the message and every later one of the conversation; their ids."""
    quiet(conversation)
    return _delete_from(conversation, message_of(conversation, message_id))


@transaction.atomic
def delete_last_exchange(conversation: Conversation) -> list[str]:
    """Delete the last player message and everything after it (its replies); their ids.
    With no player message, the last message alone."""
    quiet(conversation)
    latest = Message.objects.filter(
        tenant=conversation.tenant, session_id=conversation.session_id, archived=False
    ).order_by("-ts")
    target = latest.filter(role="user").first() or latest.first()
    return [] if target is None else _delete_from(conversation, target)


def _delete_from(conversation: Conversation, message: Message) -> list[str]:
    doomed = Message.objects.filter(
        tenant=conversation.tenant, session_id=conversation.session_id, ts__gte=message.ts
    ).values_list("id", "ts")
    rows = list(doomed)
    message_store.delete_messages_by_timestamps(
        conversation.tenant, conversation.session_id, [ts for _, ts in rows]
    )
    return [str(pk) for pk, _ in rows]
