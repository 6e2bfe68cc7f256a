"""The memory table after a reply (seed 000): once a turn's messages are indexed (the
worker's ``memory.signals.messages_indexed``), the ``<tableEdit>`` calls of its reply are
applied to the conversation's table (``memory.engine.table``) and the table is replaced
only when something changed, by compare-and-set on the document's revision. A conflict (a
person or another reply changed it meanwhile) reads it again and retries once; a second
conflict leaves it and is logged. Nothing of this runs on the turn's path.
"""

from __future__ import annotations

import logging

from memory.configs.selectors import config_for
from memory.documents.selectors import read_document
from memory.documents.services import put_document
from memory.engine import table
from memory.errors import RevisionConflict
from memory.models import Message
from memory.signals import messages_indexed

logger = logging.getLogger(__name__)

ATTEMPTS = 2  # the write and one retry after a conflict


def apply_reply(tenant, session_id: str, reply: str) -> str:
    """Apply ``reply``'s edits: ``none`` (no edits), ``unchanged``, ``replaced`` or
    ``conflict``."""
    edits, _bad = table.parse_edits(reply)
    if not edits:
        return "none"
    for _attempt in range(ATTEMPTS):
        current = read_document(tenant, session_id, table.SLOT)
        before = {"tables": table.tables_of(current["memory"])}
        after, _applied, _ignored = table.apply(current["memory"], edits)
        if after == before:
            return "unchanged"
        try:
            put_document(tenant, session_id, table.SLOT, current["revision"], after,
                         origin="reply")  # fmt: skip
        except RevisionConflict:
            continue
        return "replaced"
    logger.warning("memory table of %s: still in conflict after a retry", session_id)
    return "conflict"


def on_indexed(sender, *, tenant, session_id, character_id, message_ids=(), **_) -> None:
    try:
        config = config_for(tenant, str(character_id))
        if not (config.enabled and config.memory_table):
            return
        replies = Message.objects.filter(
            tenant=tenant, session_id=session_id, pk__in=list(message_ids), role="assistant"
        ).values_list("content", flat=True)
        for reply in replies:
            if "<tableEdit>" in reply or "<tableedit>" in reply.lower():
                apply_reply(tenant, session_id, reply)
    except Exception:
        logger.warning("could not apply the memory table edits of %s", session_id, exc_info=True)


messages_indexed.connect(on_indexed, dispatch_uid="roleplay.memory_table")
