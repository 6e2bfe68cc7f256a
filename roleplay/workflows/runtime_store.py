"""The bounded runtime's state store over ``WorkflowState``: one conversation's state
under one key, read as ``(state, revision)`` and written by compare-and-set.

A write over revision 0 creates the row (a concurrent creation loses on the unique
constraint); a write over revision N is one conditional UPDATE that matches only while the
row is still at N. Either way a writer that lost gets False (``stale_write_rejected``),
never a silent overwrite. Tenant and conversation are fixed when the store is made: a
runtime cannot read or write another conversation's state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import F

from console.db import run_db
from roleplay.workflows.engine.runtime import StateCandidate, StateSnapshot
from roleplay.workflows.state_models import WorkflowState

DEFAULT_KEY = "default"


def read(tenant_id: Any, conversation_id: Any, key: str) -> StateSnapshot:
    row = (
        WorkflowState.objects.filter(tenant_id=tenant_id, conversation_id=conversation_id, key=key)
        .values("state", "revision")
        .first()
    )
    if row is None:
        return StateSnapshot(None, 0)
    return StateSnapshot(row["state"], row["revision"])


def compare_and_set(
    tenant_id: Any, conversation_id: Any, key: str, expected: int, state: Any
) -> bool:
    """Write ``state`` over revision ``expected``; False when the revision moved."""
    if expected == 0:
        try:
            with transaction.atomic():
                WorkflowState.objects.create(
                    tenant_id=tenant_id,
                    conversation_id=conversation_id,
                    key=key,
                    state=state,
                    revision=1,
                )
        except IntegrityError:
            return False
        return True
    updated = WorkflowState.objects.filter(
        tenant_id=tenant_id, conversation_id=conversation_id, key=key, revision=expected
    ).update(state=state, revision=F("revision") + 1)
    return updated == 1


@dataclass(frozen=True)
class ConversationStateStore:
    """``StateStore`` for the runtime (async, on the database threads)."""

    tenant_id: Any
    conversation_id: Any
    key: str = DEFAULT_KEY

    async def get(self) -> StateSnapshot:
        return await run_db(read, self.tenant_id, self.conversation_id, self.key)

    async def compare_and_set(self, expected_revision: int, candidate: StateCandidate) -> bool:
        return await run_db(
            compare_and_set,
            self.tenant_id,
            self.conversation_id,
            self.key,
            expected_revision,
            candidate.state,
        )
