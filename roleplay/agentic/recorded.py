"""A planning run's recorded inputs, kept by reference where they are stored already.

A turn records its planning run in the transaction that commits its reply (the outbox,
``services.planning.start``), so every byte of the record is written, logged and compressed
beside every turn's commit. The state and the ledger entries the turn read are stored
already and never change: revisions are kept and numbered once, ledger entries are only
ever inserted (``services.agent_state``). So the record names them instead of copying them
(:func:`slim`): ``inputs.state`` is left out (``inputs.revision`` names it) and
``inputs.entries`` become ``inputs.entry_ids``, in the order the turn read them. A record
made before, or of a turn that read no stored state, keeps them inline.

:func:`restore` (and :func:`restore_all`, one read for many runs) puts them back on a run's
``snapshot``, so whoever reads the record (the task, the console, the API, auto-replies)
sees the inputs exactly as the turn read them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from roleplay.models import AgentLedgerEntry, AgentStateRevision, PlanningRun

ENTRY_IDS = "entry_ids"


def slim(inputs: dict[str, Any]) -> dict[str, Any]:
    """``inputs`` (``runner.Inputs.as_json``) with the stored state and entries named, not
    copied; as they are when there is nothing stored to name."""
    entries = inputs.get("entries") or []
    if int(inputs.get("revision") or 0) <= 0 or not all("id" in e for e in entries):
        return inputs
    named = {key: value for key, value in inputs.items() if key not in ("state", "entries")}
    named[ENTRY_IDS] = [entry["id"] for entry in entries]
    return named


def restore(run: PlanningRun) -> PlanningRun:
    """``run`` with its snapshot's state and entries back in its inputs."""
    restore_all([run])
    return run


def restore_all(runs: Iterable[PlanningRun]) -> None:
    """:func:`restore` for several runs, in two statements whatever their number."""
    named = [run for run in runs if ENTRY_IDS in _inputs(run)]
    if not named:
        return
    tenants = {run.tenant_id for run in named}
    states = {
        (conversation, scenario, revision): state
        for conversation, scenario, revision, state in AgentStateRevision.objects.filter(
            tenant_id__in=tenants,
            conversation_id__in={run.conversation_id for run in named},
            revision__in={int(_inputs(run)["revision"]) for run in named},
        ).values_list("conversation_id", "scenario_id", "revision", "state")
    }
    wanted = {entry_id for run in named for entry_id in _inputs(run)[ENTRY_IDS]}
    entries = {
        row["id"]: row
        for row in AgentLedgerEntry.objects.filter(tenant_id__in=tenants, pk__in=wanted).values(
            "id", "type", "key", "status", "payload", "conversation_id"
        )
    }
    for run in named:
        inputs = dict(_inputs(run))
        ids = inputs.pop(ENTRY_IDS)
        inputs["state"] = states.get((run.conversation_id, run.scenario_id, inputs["revision"]))
        inputs["entries"] = [
            _entry(entries[i])
            for i in ids
            if entries.get(i, {}).get("conversation_id") == run.conversation_id
        ]
        run.snapshot = {**run.snapshot, "inputs": inputs}


def _inputs(run: PlanningRun) -> dict[str, Any]:
    snapshot = run.snapshot if isinstance(run.snapshot, dict) else {}
    inputs = snapshot.get("inputs")
    return inputs if isinstance(inputs, dict) else {}


def _entry(row: dict[str, Any]) -> dict[str, Any]:
    return {key: row[key] for key in ("id", "type", "key", "status", "payload")}
