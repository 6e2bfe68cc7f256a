"""The memory model's signals (seed 001's hook and events), sent after the change commits.

- ``messages_deleted(tenant, session_id, timestamps)``: stored messages were deleted (a
  rollback by timestamps, or ``timestamps=None``: the whole conversation, or every
  conversation when ``session_id`` is None too). Stores derived from messages (recall
  indexes) remove what they hold for them.
- ``history_changed(tenant, session_id, reason)``: a conversation's history changed shape
  (deleted, trimmed, edited): views and caches read it again. The signal is the kernel's
  (``console.history``), so a capability that reads the history (story) hears it without
  importing memory.
- ``messages_indexed(tenant, session_id, player_id, character_id, conversation_id,
  message_ids)``: a turn's messages were indexed for recall (the worker's
  ``memory.index_messages``, after the reply committed; once, by whichever task indexed
  them: a task that finds them indexed already sends nothing); work that follows a reply in
  the background (diaries, consolidation) starts here.
- ``consolidation_switched_on(tenant, character_ids)``: a settings change switched
  background consolidation on for these characters (off before: memory or consolidation);
  sent inside the change's transaction, so the conversations' cursors move past what was
  said while it was off together with the switch.
- ``memory_clear(tenant, scope, session_id, player)``: the forgetting orchestrator
  (``memory.forget``) asks every subsystem to clear what it holds for ``scope``; each
  receiver returns ``{"subsystem": name, **counts}``.
"""

from __future__ import annotations

from django.db import transaction
from django.dispatch import Signal

from console.history import history_changed

__all__ = [
    "after_commit",
    "consolidation_switched_on",
    "history_changed",
    "memory_clear",
    "messages_deleted",
    "messages_indexed",
]

messages_deleted = Signal()
memory_clear = Signal()
messages_indexed = Signal()
consolidation_switched_on = Signal()


def after_commit(signal: Signal, **kwargs) -> None:
    """Send ``signal`` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: signal.send(sender=None, **kwargs))
