"""Writes that change a stored message: alternatives (swipes), continuation, edits.

A message's ``content`` is always the text every reader of the history sees: its selected
alternative. The first time a message gets a second alternative, its current text becomes
alternative 0, so nothing generated is ever lost; selecting another one copies that text
into ``content``. An edit by a person is recorded (who, when, hashes before and after) so
capabilities can tell edited prose from generated prose. Every write locks the message row
first, so two writers of one message queue up instead of losing one another's change.
"""

from __future__ import annotations

import hashlib

from django.db import transaction

from memory import forks
from memory.errors import MessageNotFound, NoSuchAlternative
from memory.models import Message, MessageAlternative, MessageEdit, MessageStatus
from memory.services import capped_reasoning
from memory.signals import after_commit, history_changed

MAX_ALTERNATIVES = 100


def text_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _locked(tenant, message_id) -> Message:
    message = Message.objects.select_for_update().filter(tenant=tenant, pk=message_id).first()
    if message is None:
        raise MessageNotFound("message_not_found", "no such message")
    forks.refuse_shared(tenant, message.session_id, message.ts)  # frozen while shared
    return message


def _ensure_first(message: Message) -> int:
    """Make the current text alternative 0 if it has none; the number of alternatives."""
    count = MessageAlternative.objects.filter(message=message).count()
    if count == 0:
        MessageAlternative.objects.create(
            tenant_id=message.tenant_id,
            message=message,
            index=0,
            content=message.content,
            reasoning=message.reasoning,
            status=message.status,
            metadata={k: v for k, v in message.metadata.items() if k in ("turn_id", "error")},
        )
        count = 1
    return count


@transaction.atomic
def add_alternative(
    tenant,
    message_id,
    *,
    content: str,
    status: str,
    metadata: dict | None = None,
    reasoning: str = "",
) -> MessageAlternative:
    """A new alternative of the message, with its own ``reasoning``. A complete one becomes
    the selected text; a failed or cancelled one is kept beside the others without
    replacing what the history shows."""
    message = _locked(tenant, message_id)
    index = _ensure_first(message)
    if index >= MAX_ALTERNATIVES:
        MessageAlternative.objects.filter(message=message, index=1).delete()
        for alternative in MessageAlternative.objects.filter(message=message, index__gt=1):
            MessageAlternative.objects.filter(pk=alternative.pk).update(index=alternative.index - 1)
        index -= 1
    alternative = MessageAlternative.objects.create(
        tenant_id=message.tenant_id,
        message=message,
        index=index,
        content=content,
        reasoning=capped_reasoning(reasoning),
        status=status,
        metadata=metadata or {},
    )
    if status == MessageStatus.COMPLETE:
        _show(message, alternative)
    return alternative


def _show(message: Message, alternative: MessageAlternative) -> None:
    Message.objects.filter(pk=message.pk).update(
        content=alternative.content,
        reasoning=alternative.reasoning,
        status=alternative.status,
        selected_alternative=alternative.index,
    )


@transaction.atomic
def select_alternative(tenant, message_id, index: int) -> Message:
    """Make alternative ``index`` the message's text (the reply history and capabilities see).
    A message never regenerated has one alternative, 0: its own text."""
    message = _locked(tenant, message_id)
    if index == 0:
        _ensure_first(message)
    alternative = MessageAlternative.objects.filter(message=message, index=index).first()
    if alternative is None:
        raise NoSuchAlternative(
            "alternative_not_found",
            f"the message has no alternative {index}",
            {"index": index},
        )
    _show(message, alternative)
    message.refresh_from_db()
    after_commit(
        history_changed, tenant=tenant, session_id=message.session_id, reason="alternative"
    )
    return message


@transaction.atomic
def extend_message(
    tenant, message_id, text: str, *, status: str, metadata=None, reasoning: str = ""
) -> Message:
    """Append ``text`` to the message (a continued reply), and to its selected alternative
    when it has alternatives; the continuation's ``reasoning`` after the reply's own."""
    message = _locked(tenant, message_id)
    message.content += text
    message.status = status
    if reasoning:
        joined = f"{message.reasoning}\n\n{reasoning}" if message.reasoning else reasoning
        message.reasoning = capped_reasoning(joined)
    if metadata:
        message.metadata = {**message.metadata, **metadata}
    message.save(update_fields=["content", "reasoning", "status", "metadata"])
    MessageAlternative.objects.filter(message=message, index=message.selected_alternative).update(
        content=message.content, reasoning=message.reasoning, status=status
    )
    return message


@transaction.atomic
def edit_message(tenant, message_id, content: str, *, editor: str) -> Message:
    """Replace the message's text by a person's, recording the edit; the selected
    alternative follows, so switching away and back shows the edited text."""
    message = _locked(tenant, message_id)
    if content == message.content:
        return message
    MessageEdit.objects.create(
        tenant_id=message.tenant_id,
        message=message,
        editor=editor[:200],
        previous_hash=text_hash(message.content),
        new_hash=text_hash(content),
    )
    message.content = content
    message.edited = True
    message.save(update_fields=["content", "edited"])
    MessageAlternative.objects.filter(message=message, index=message.selected_alternative).update(
        content=content
    )
    after_commit(history_changed, tenant=tenant, session_id=message.session_id, reason="edited")
    return message
