"""Writes of workflow runs: one :class:`~.models.WorkflowRun` per run, recorded after the
turn's reply (the plug-in's deferred write) or when the run fails the turn."""

from __future__ import annotations

import json
from typing import Any

from roleplay.models import Turn
from roleplay.workflows.models import WorkflowRun

MAX_NODES = 200


def record_run(turn: Turn, record: dict[str, Any]) -> WorkflowRun:
    """Store ``record`` (``{status, nodes, error, placed, duration_ms, scenario_id}``) for
    ``turn``, in the turn's tenant and conversation."""
    return WorkflowRun.objects.create(
        tenant_id=turn.tenant_id,
        conversation_id=turn.conversation_id,
        turn_id=turn.pk,
        scenario_id=record.get("scenario_id"),
        status=record["status"],
        nodes=_stored(list(record.get("nodes") or [])[:MAX_NODES]),
        error=_stored(record.get("error")),
        placed=_stored(record.get("placed") or {}),
        duration_ms=float(record.get("duration_ms") or 0),
    )


def _stored(value: Any) -> Any:
    """``value`` as JSON PostgreSQL's jsonb holds (any object as its text, no NUL)."""
    text = json.dumps(value, default=str, ensure_ascii=False).replace("\\u0000", "")
    return json.loads(text)
