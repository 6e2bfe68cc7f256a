"""A player's change of covered history reaches the compaction checkpoint at once (seed 002,
Compact: a summary that can no longer be shown to join the current history is not a
reliable prefix any more).

A turn checks the newest checkpoint against the 200 messages it reads; a covered message
older than those (a long conversation) escapes that check, and the summary would go on
carrying a fact the player edited away. So when the message store says a conversation's
history changed (``history_changed``: an edit, a chosen alternative, a rollback or a
delete), the newest active version of each of the conversation's checkpoints is checked
against the whole stored conversation (``checkpoint.intact``). One that no longer holds is
invalidated, and the newest earlier version the change left intact (the summary from
before that message) is saved again as the next version (``audit.restored_from``), by the
same compare-and-set as every version; with none, the next turn reads the history whole
and compacts it again. Any prepared next checkpoint is dropped: it was made over the old
history. Trimming (archiving) changes no text and is left to the turn's own check.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import replace

from django.db import transaction

from memory.signals import history_changed
from roleplay.compact import selectors as reads
from roleplay.compact.engine import checkpoint as cp
from roleplay.compact.services import checkpoints as store
from roleplay.models import CompactCheckpoint, CompactPreparation, Conversation

logger = logging.getLogger(__name__)

CHANGES = frozenset({"edited", "alternative", "deleted"})
RESTORED = "restored_after_history_change"


def settle(conversation: Conversation) -> list[dict]:
    """Check the newest version of each of ``conversation``'s checkpoints against its
    stored history; what was done, one item per version that no longer held."""
    scenario_ids = (
        CompactCheckpoint.objects.filter(conversation=conversation)
        .values_list("scenario_id", flat=True)
        .distinct()
    )
    scenario_ids = list(scenario_ids)
    if not scenario_ids:
        return []
    history = reads.stored_chat(conversation)
    ids = [str(m.id) for m in history]
    done = []
    for scenario_id in scenario_ids:
        outcome = _settle(conversation, scenario_id, history, ids)
        if outcome is not None:
            done.append(outcome)
    if done:
        CompactPreparation.objects.filter(conversation=conversation).delete()
    return done


def _settle(conversation, scenario_id, history: list, ids: list[str]) -> dict | None:
    key = {"conversation": conversation, "scenario_id": scenario_id}
    with transaction.atomic():
        locked = CompactCheckpoint.objects.select_for_update().filter(**key)
        rows = list(locked.order_by("-version"))
        newest = rows[0]
        if newest.status != "active":
            return None
        versions = {row.version: store.as_checkpoint(row) for row in rows}
        verdict = cp.intact(versions[newest.version], history, versions.get, ids)
        if verdict.ok:
            return None
        newest.status, newest.reason = "invalidated", verdict.reason
        newest.save(update_fields=["status", "reason"])
        earlier = next(
            (
                row
                for row in rows[1:]
                if row.status == "active"
                and cp.intact(versions[row.version], history, versions.get, ids).ok
            ),
            None,
        )
        outcome = {"scenario": str(scenario_id), "invalidated": newest.version}
        if earlier is not None:
            restored = _restore(conversation, newest, earlier, versions[earlier.version])
            outcome["restored"] = restored.version
        return outcome


def _restore(conversation, newest, earlier, checkpoint: cp.Checkpoint) -> CompactCheckpoint:
    """``earlier``'s summary saved again as the version after ``newest``."""
    again = replace(checkpoint, version=newest.version + 1, chain=earlier.version)
    audit = {**earlier.audit, "restored_from": earlier.version, "reason": RESTORED}
    return store.save(
        conversation.tenant_id,
        conversation.pk,
        newest.scenario_id,
        again,
        expected=newest.version,
        audit=audit,
    )


def _history_changed(sender, *, tenant, session_id, reason=None, **_) -> None:
    if reason not in CHANGES:
        return
    try:
        conversation_id = uuid.UUID(str(session_id))
    except ValueError:  # every conversation (None), or a store session of no conversation
        return
    conversation = Conversation.objects.filter(tenant=tenant, pk=conversation_id).first()
    if conversation is None:
        return
    try:
        for outcome in settle(conversation):
            logger.info("compact checkpoint after a history change: %s", outcome)
    except Exception:  # the turn's own check still refuses what it can see
        logger.exception("could not check the compact checkpoints of %s", conversation_id)


history_changed.connect(_history_changed, dispatch_uid="roleplay.compact_history")
