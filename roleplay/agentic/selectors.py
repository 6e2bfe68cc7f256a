"""Reads of a conversation's Agent V2 for the console: the scenario in force and whether it
runs Agent V2, the state's revisions with what each changed, the specialists' ledger, and
the planning runs with the model calls they made.

The state is kept per (conversation, scenario): the console shows the one of the scenario
the conversation runs now (``selectors.scenario_for``), as the turns read it. Planning runs
are the conversation's, whatever scenario each ran under. Every query is scoped to the
conversation's tenant.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from console.textdiff import line_diff
from roleplay.agentic.engine.ledger import TYPES as LEDGER_TYPES
from roleplay.models import (
    AgentLedgerEntry,
    AgentStateRevision,
    Conversation,
    ModelCall,
    PlanningRun,
    Scenario,
)
from roleplay.scenarios.selectors import agentic_config

MAX_REVISIONS = 50
MAX_LEDGER = 200
MAX_RUNS = 50
# The timings a run records, in the order the console shows them (others follow).
TIMING_KEYS = (
    "phase1_ms",
    "specialists_ms",
    "phase2_ms",
    "director_ms",
    "total_ms",
    "task_ms",
    "model_ms",
    "overhead_ms",
)


def runs_agent_v2(scenario: Scenario | None) -> bool:
    """Whether turns under ``scenario`` run Agent V2: ``agenticV2`` on, and ``storyV1``
    (which wins) not on; the turn's own rule (``roleplay.agentic.plugin``)."""
    try:
        return agentic_config(scenario) is not None
    except ValidationError:  # a config saved before a rule tightened: the turn refuses it too
        return False


@dataclass(frozen=True)
class RevisionRow:
    """One revision of the state, with its diff from the revision before it."""

    revision: AgentStateRevision
    diff: list[tuple[str, str]]


def _state_rows(conversation: Conversation, scenario: Scenario):
    return AgentStateRevision.objects.filter(
        tenant_id=conversation.tenant_id, conversation=conversation, scenario=scenario
    )


def state_history(
    conversation: Conversation, scenario: Scenario, limit: int = MAX_REVISIONS
) -> list[RevisionRow]:
    """The newest ``limit`` revisions, newest first, each diffed against the one before
    (the first revision against nothing)."""
    rows = list(_state_rows(conversation, scenario).order_by("-revision")[: limit + 1])
    history = []
    for n, row in enumerate(rows[:limit]):  # one more was read: the last one's diff base
        older = rows[n + 1].state if n + 1 < len(rows) else ""
        history.append(RevisionRow(row, line_diff(older, row.state)))
    return history


def ledger_type(value: str | None) -> str | None:
    """The ledger type a filter names, or None (every type) for none or an unknown one."""
    return value if value in LEDGER_TYPES else None


def ledger(
    conversation: Conversation,
    scenario: Scenario,
    *,
    type: str | None = None,  # noqa: A002 - the field's own name
    limit: int = MAX_LEDGER,
) -> list[AgentLedgerEntry]:
    """The newest ``limit`` ledger entries (of one type, if given), newest first."""
    rows = AgentLedgerEntry.objects.filter(
        tenant_id=conversation.tenant_id, conversation=conversation, scenario=scenario
    )
    if type is not None:
        rows = rows.filter(type=type)
    return list(rows.order_by("-revision", "-id")[:limit])


def planning_runs(conversation: Conversation, limit: int = MAX_RUNS) -> list[PlanningRun]:
    """The conversation's newest ``limit`` planning runs, newest first."""
    return list(
        PlanningRun.objects.filter(tenant_id=conversation.tenant_id, conversation=conversation)
        .select_related("scenario")
        .order_by("-created_at", "-id")[:limit]
    )


def timings(run: PlanningRun) -> list[tuple[str, Any]]:
    """The run's timings as ``(name, ms)`` rows: the known ones in order, then the rest."""
    recorded = run.timings if isinstance(run.timings, dict) else {}
    known = [(key, recorded[key]) for key in TIMING_KEYS if key in recorded]
    return known + sorted((k, v) for k, v in recorded.items() if k not in TIMING_KEYS)


def model_calls(run: PlanningRun) -> list[ModelCall]:
    """The ``ModelCall`` rows the run names, in the order it made them (of its tenant
    only; an id that is not a number, or names no row, is skipped)."""
    ids = []
    for value in run.model_calls if isinstance(run.model_calls, list) else []:
        try:
            ids.append(int(value))
        except (TypeError, ValueError):
            continue
    found = {
        call.pk: call
        for call in ModelCall.objects.filter(tenant_id=run.tenant_id, pk__in=ids).select_related(
            "config"
        )
    }
    return [found[pk] for pk in dict.fromkeys(ids) if pk in found]
