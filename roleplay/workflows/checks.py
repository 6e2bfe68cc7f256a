"""A scenario's ``workflow`` checked: parsed (``engine.spec.parse_workflow``, field rules)
and planned (``engine.planner``) against the capabilities registered now, with the
scenario's id as the profile id. The one place both the save (``roleplay.scenarios.services``)
and each run (``roleplay.workflows.plugin``) go through, so a workflow saved valid whose
capability was unregistered since is refused before it runs, never skipped; and what the
console's editor shows beside each node (:func:`problems_by_node`).
"""

from __future__ import annotations

from typing import Any

from roleplay.workflows import registry
from roleplay.workflows.engine import planner
from roleplay.workflows.engine.contracts import Plan
from roleplay.workflows.engine.errors import PlanError
from roleplay.workflows.engine.errors import WorkflowInvalid as SpecInvalid
from roleplay.workflows.engine.spec import WorkflowSpec, parse_workflow

from .errors import WorkflowInvalid

__all__ = ["WorkflowInvalid", "checked", "problems_by_node"]

FIELD = "workflow"
NODES = f"{FIELD}.executionGraph.nodes"


def checked(raw: Any, scenario_id: Any) -> tuple[WorkflowSpec, Plan]:
    """(the parsed workflow, its plan), or :class:`WorkflowInvalid` naming the field and the
    node to blame (the first problem; ``details.errors`` has every field error)."""
    try:
        spec = parse_workflow(raw, FIELD)
    except SpecInvalid as exc:
        first = exc.errors[0]
        raise WorkflowInvalid(
            first.path,
            first.message,
            reason=first.code,
            node=first.node,
            errors=[e.to_json() for e in exc.errors],
        ) from None
    try:
        plan = planner.plan(spec, **_profile(scenario_id))
    except PlanError as exc:
        raise _planned(exc) from None
    return spec, plan


def _profile(scenario_id: Any) -> dict[str, Any]:
    return {
        "profile_id": str(scenario_id),
        "scenario_id": str(scenario_id),
        "registered": registry.registered(),
    }


def _planned(exc: PlanError) -> WorkflowInvalid:
    field = f"{NODES}.{exc.node}" if exc.node else FIELD
    return WorkflowInvalid(field, exc.message, reason=exc.code, node=exc.node)


def problems_by_node(raw: Any, scenario_id: Any) -> tuple[dict[str, list[str]], list[str]]:
    """Every problem of ``raw`` for the editor: (messages by node id, messages of the
    workflow as a whole). Empty when it plans."""
    by_node: dict[str, list[str]] = {}
    general: list[str] = []

    def note(node: str | None, text: str) -> None:
        if node:
            by_node.setdefault(node, []).append(text)
        else:
            general.append(text)

    try:
        spec = parse_workflow(raw, FIELD)
    except SpecInvalid as exc:
        for error in exc.errors:
            note(error.node, f"{error.path}: {error.message}")
        return by_node, general
    for problem in planner.problems(spec, **_profile(scenario_id)):
        note(problem.node, f"{problem.code}: {problem.message}")
    return by_node, general
