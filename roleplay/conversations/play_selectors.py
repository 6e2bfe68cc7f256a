"""Reads of the play page: the transcript with what its message controls need, whether the
last reply was cut short, and the turn running in the conversation, if any.

The history rule (which messages, in which order) stays ``memory.selectors.get_history``'s;
this module only adds, per message, how many alternatives (swipes) it has, so the page can
show ``2/3`` without a request per message. The page renders the same partial on load and
when it re-reads the transcript after an event it could not apply by itself (another tab's
message, a turn that ended in an error, a reconnect), so both go through here.
"""

from __future__ import annotations

from django.db.models import Count

from images import signing
from images.selectors import slots_by_message
from memory import selectors as message_reads
from memory.models import Message, MessageAlternative
from roleplay.models import Conversation, Turn, TurnKind, TurnStatus
from roleplay.scenarios.selectors import auto_reply_config, scenario_for
from roleplay.turns.records import live_turns

TRANSCRIPT_LIMIT = message_reads.DEFAULT_HISTORY_LIMIT


def transcript(conversation: Conversation, limit: int = TRANSCRIPT_LIMIT) -> list[Message]:
    """The conversation's history as the turn sees it (ascending), each message with
        ``alternative_count``: its stored alternatives, 0 for a message that never had a second
        one (its text is then its only version). Three queries whatever the length (the
    session's lineage, its messages, their alternatives)."""
    messages = message_reads.get_history(conversation.tenant, conversation.session_id, limit)
    counts = dict(
        MessageAlternative.objects.filter(message_id__in=[m.id for m in messages])
        .values("message_id")
        .annotate(n=Count("id"))
        .values_list("message_id", "n")
    )
    for message in messages:
        message.alternative_count = counts.get(message.id, 0)
    return messages


def attach_pictures(conversation: Conversation, messages: list[Message]) -> None:
    """Set ``pictures`` on each reply: its image slots (``images``), each with its status and,
    when drawn, signed links for the console page. One query."""
    replies = [m.id for m in messages if m.role == "assistant"]
    by_message = slots_by_message(conversation.tenant, replies) if replies else {}
    for message in messages:
        message.pictures = [
            {
                "index": slot.index,
                "status": slot.status,
                "code": slot.code,
                "url": signing.console_url_for(slot.tenant_id, slot.file),
                "thumbnail_url": signing.console_url_for(
                    slot.tenant_id, slot.thumbnail or slot.file
                ),
            }
            for slot in by_message.get(message.id, ())
        ]


def mark_cut_short(conversation: Conversation, messages: list[Message]) -> None:
    """Set ``cut_short`` on the last message when it is a reply whose latest turn stopped at
    the model's token limit (finish reason ``length``, kept in the turn's trace): the page
    offers Continue. A regenerate's verdict holds only while its alternative is shown. One
    query, for the last reply only: Continue works on nothing else."""
    last = messages[-1] if messages else None
    if last is None or last.role != "assistant":
        return
    turn = (
        Turn.objects.filter(
            conversation=conversation, assistant_message_id=last.id, finished_at__isnull=False
        )
        .order_by("-finished_at")
        .values("kind", "status", "trace__model__finish_reason")
        .first()
    )
    if turn is None or turn["trace__model__finish_reason"] != "length":
        return
    rewrote = turn["kind"] in (TurnKind.REGENERATE, TurnKind.EDIT_REGENERATE)
    shown = not rewrote or last.selected_alternative + 1 >= last.alternative_count
    last.cut_short = shown and turn["status"] == TurnStatus.COMPLETE and not last.edited


def running_turn(conversation: Conversation) -> Turn | None:
    """The turn generating a reply now, if any. A running turn whose lease ran out was
    abandoned by a dead process and blocks nothing (the same rule the message services
    apply), so the page does not show it as busy."""
    running = live_turns().filter(conversation=conversation)
    return running.only("id", "kind", "assistant_message_id").first()


def offers_auto_reply(conversation) -> bool:
    """Whether the play page shows the suggestion row: the conversation's scenario runs
    Agent V2 with an ``autoReply`` model config (``services.auto_replies``)."""
    return auto_reply_config(scenario_for(conversation)) is not None
