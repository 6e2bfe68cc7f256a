"""Auto-mode's rules, the same through every door (the socket's chain,
``roleplay.sockets.group_chain``, and the REST turn's ``auto``): how many replies may follow
one, and whether the chain may go on after a reply. A chain goes on only while the reply
it followed completed and is still the conversation's last message (a player's message
stored meanwhile, a cancel or a failure ends it). Each further turn's client id is
:func:`next_client_id` of the turn before, so two doors or processes following the same
reply start one turn, and a repeated REST call walks the same chain again."""

from __future__ import annotations

from memory import selectors as message_reads
from roleplay.groups.selectors import members_of
from roleplay.models import Conversation, GroupMode, Turn, TurnStatus


def chain_settings(conversation_id) -> tuple[Conversation, int] | None:
    """The conversation as it is now and how many replies may follow one (None: a
    one-character chat or a manual group, where nobody answers by itself)."""
    conversation = Conversation.objects.select_related("tenant", "character").get(
        pk=conversation_id
    )
    if conversation.group_mode == GroupMode.MANUAL or len(members_of(conversation)) < 2:
        return None
    return conversation, conversation.auto_turns


def may_follow(turn: Turn, conversation: Conversation) -> bool:
    """Whether ``turn`` completed and its reply is still the conversation's last message."""
    status = Turn.objects.filter(pk=turn.pk).values_list("status", flat=True).first()
    last = message_reads.last_message(conversation.tenant, conversation.session_id)
    return (
        status == TurnStatus.COMPLETE and last is not None and last.id == turn.assistant_message_id
    )


def next_client_id(turn: Turn) -> str:
    return f"auto:{turn.id}"


def followed_by(turn: Turn) -> Turn | None:
    """The turn auto-mode already ran after ``turn`` (through any door), or None."""
    return Turn.objects.filter(
        conversation_id=turn.conversation_id, client_message_id=next_client_id(turn)
    ).first()
