"""Writes of the message store (seed 001): save, clear, trim, edit, rollback, metadata."""

from __future__ import annotations

import json
import time
import uuid

from django.db import connection, transaction
from django.utils import timezone

from memory import forks
from memory.entries import evidence
from memory.models import MemoryMetadata, Message, MessageStatus
from memory.signals import after_commit, history_changed, messages_deleted

DELETE_BATCH = 500
UPDATE_RECENT_DEFAULT = 100
MAX_REASONING_CHARS = 100_000
TRUNCATED = "\n[… reasoning truncated]"


# The store's timestamp rule, in one place: a message's ``ts`` is the current time in ms,
# or one more than the session's latest, whichever is greater, so it is strictly increasing
# within the session. Computed in the INSERT itself (one round trip); a concurrent append
# that took the same ``ts`` makes this one insert nothing, and it is tried again.
_APPEND_SQL = """
INSERT INTO {table}
    (tenant_id, id, session_id, role, content, reasoning, kind, status, metadata, ts, archived,
     created_at)
SELECT %(tenant)s, %(id)s, %(session)s, %(role)s, %(content)s, %(reasoning)s, %(kind)s,
       %(status)s, %(metadata)s::jsonb,
       GREATEST(%(now_ms)s, COALESCE((SELECT MAX(x.ts) FROM {table} x
           WHERE x.tenant_id = %(tenant)s AND x.session_id = %(session)s), 0) + 1),
       false, %(created)s
ON CONFLICT ON CONSTRAINT message_ts_unique DO NOTHING
RETURNING ts
"""
_APPEND_ATTEMPTS = 5


def save_message(
    tenant,
    session_id: str,
    *,
    role: str,
    content: str,
    kind: str | None = None,
    status: str = MessageStatus.COMPLETE,
    metadata: dict | None = None,
    message_id=None,
    reasoning: str = "",
) -> Message:
    """Append a message; its ``ts`` is strictly increasing within the session (one
    statement, safe inside a caller's transaction: a lost race raises nothing).
    ``reasoning``: a reply's scratchpad, cut at ``MAX_REASONING_CHARS``."""
    reasoning = capped_reasoning(reasoning)
    fields = {
        "tenant": tenant.pk,
        "id": message_id or uuid.uuid4(),
        "session": session_id,
        "role": role,
        "content": content,
        "reasoning": reasoning,
        "kind": kind,
        "status": status,
        "metadata": json.dumps(metadata or {}),
        "created": timezone.now(),
    }
    statement = _APPEND_SQL.format(table=Message._meta.db_table)
    with connection.cursor() as cursor:
        for _attempt in range(_APPEND_ATTEMPTS):
            cursor.execute(statement, {**fields, "now_ms": int(time.time() * 1000)})
            row = cursor.fetchone()
            if row is not None:
                return _stored_message(
                    tenant_id=tenant.pk, id=fields["id"], session_id=session_id, role=role,
                    content=content, reasoning=reasoning, kind=kind, status=status,
                    metadata=metadata or {},
                    ts=row[0], archived=False, created_at=fields["created"],
                    selected_alternative=0, edited=False,
                )  # fmt: skip
    raise RuntimeError("could not allocate a message timestamp")


def capped_reasoning(reasoning: str) -> str:
    """A reply's reasoning as stored: at most ``MAX_REASONING_CHARS``, the marker included
    when it had to be cut."""
    if len(reasoning) <= MAX_REASONING_CHARS:
        return reasoning
    return reasoning[: MAX_REASONING_CHARS - len(TRUNCATED)] + TRUNCATED


def _stored_message(**values) -> Message:
    """The Message row just written, as Django builds one it read (``Model.from_db``)."""
    fields = Message._meta.concrete_fields
    return Message.from_db(
        connection.alias, [f.attname for f in fields], [values[f.attname] for f in fields]
    )


def finish_message(message: Message, *, content: str, status: str, metadata=None) -> None:
    """Final content and status of a streamed message."""
    message.content = content
    message.status = status
    if metadata:
        message.metadata = {**message.metadata, **metadata}
    message.save(update_fields=["content", "status", "metadata"])


def _deleted_messages(result: tuple[int, dict]) -> int:
    """Messages a ``delete()`` removed (its total counts their alternatives and edits too)."""
    return result[1].get(Message._meta.label, 0)


def _delete(tenant, messages, session_id: str | None, timestamps: list[int] | None) -> int:
    """Delete ``messages`` (a queryset); entries learned only from them lose their source
    (``source_missing``), and the store's two events go out once the change commits."""
    with transaction.atomic():
        learned_from = evidence.entries_of_messages(messages)
        deleted = _deleted_messages(messages.delete())
        evidence.mark_orphans(learned_from)
        if deleted:
            after_commit(
                messages_deleted, tenant=tenant, session_id=session_id, timestamps=timestamps
            )
            after_commit(history_changed, tenant=tenant, session_id=session_id, reason="deleted")
    return deleted


def clear_session(tenant, session_id: str) -> int:
    messages = Message.objects.filter(tenant=tenant, session_id=session_id)
    return _delete(tenant, messages, session_id, None)


def clear_all(tenant) -> int:
    """Every conversation's messages and archive, and the metadata side store (seed 001's
    ``clearAll``; ``memory.forget.clear_all`` clears the rest of memory with it)."""
    with transaction.atomic():
        MemoryMetadata.objects.filter(tenant=tenant).delete()
        return _delete(tenant, Message.objects.filter(tenant=tenant), None, None)


def trim_history(tenant, session_id: str, keep_recent: int) -> int:
    """Archive all but the latest ``keep_recent`` active messages; returns how many."""
    keep_recent = max(int(keep_recent), 0)
    active = Message.objects.filter(tenant=tenant, session_id=session_id, archived=False)
    keep_ids = list(active.order_by("-ts").values_list("id", flat=True)[:keep_recent])
    archived = active.exclude(id__in=keep_ids).update(archived=True)
    if archived:
        after_commit(history_changed, tenant=tenant, session_id=session_id, reason="trimmed")
    return archived


def delete_messages_by_timestamps(tenant, session_id: str, timestamps) -> int:
    """Rollback of a whole turn: delete by store timestamps, in batches of 500."""
    stamps = sorted({int(t) for t in timestamps})
    deleted = 0
    if stamps:  # a message a branch shares is frozen while the branch lives
        forks.refuse_shared(tenant, session_id, stamps[0])
    with transaction.atomic():
        for i in range(0, len(stamps), DELETE_BATCH):
            batch = stamps[i : i + DELETE_BATCH]
            messages = Message.objects.filter(tenant=tenant, session_id=session_id, ts__in=batch)
            deleted += _delete(tenant, messages, session_id, batch)
    return deleted


def update_message_content(
    tenant, session_id: str, old_text: str, new_text: str, recent_limit: int | None = None
) -> int:
    """Replace ``old_text`` in the latest ``recent_limit`` (default 100) messages."""
    if not old_text:
        return 0
    limit = UPDATE_RECENT_DEFAULT if recent_limit is None else max(int(recent_limit), 0)
    recent = list(
        Message.objects.filter(tenant=tenant, session_id=session_id).order_by("-ts")[:limit]
    )
    changed = 0
    for message in recent:
        if old_text in message.content:
            message.content = message.content.replace(old_text, new_text)
            message.save(update_fields=["content"])
            changed += 1
    if changed:
        after_commit(history_changed, tenant=tenant, session_id=session_id, reason="edited")
    return changed


def hide_message(message: Message, note: dict) -> None:
    """Take ``message`` out of the history (archived: no prompt reads it) and say why in
    its metadata under ``hidden``; its text is kept for whoever reviews it."""
    metadata = {**(message.metadata or {}), "hidden": note}
    Message.objects.filter(pk=message.pk).update(archived=True, metadata=metadata)
    message.archived, message.metadata = True, metadata
    after_commit(
        history_changed, tenant=message.tenant, session_id=message.session_id, reason="hidden"
    )


def save_metadata(tenant, namespace: str, key: str, data: dict) -> None:
    MemoryMetadata.objects.update_or_create(
        tenant=tenant, namespace=namespace, key=key, defaults={"data": data}
    )


def delete_metadata(tenant, namespace: str, key: str) -> None:
    MemoryMetadata.objects.filter(tenant=tenant, namespace=namespace, key=key).delete()
