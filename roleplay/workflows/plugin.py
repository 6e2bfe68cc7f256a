"""A scenario's declared workflow in a turn, the turn plug-in ``workflow``
(``docs/workflows.md``): before the Actor, the workflow is planned again (a capability may
have been unregistered since the save), each capability it names is built for this run
(``registry.build`` with the turn's :class:`~.registry.RunScope`), the executor runs the
nodes with the player's words as the query and the turn's cancel, and the prompt compiler's
two regions are placed as blocks of the Actor's prompt:

- ``foundation_context`` (block ``workflow:foundation``): at the preset's
  ``{{outlet::foundation_context}}`` when it has one, else right after the character sheet
  (``TurnContext.place``, as the other capabilities' blocks), else above the latest messages;
- ``turn_context`` (block ``workflow:turn``): at ``{{outlet::turn_context}}`` when the
  preset has one, else after the last history message, just before the player's input
  (depth 0, a system message), where the seed's example puts the scene's requirements.

A failed workflow (a required node failed, or it no longer plans) fails the turn with
``workflow_failed`` naming the node, as the seed's Harness fails the run; a node that may
fail without failing the turn is declared ``required: false``. The seed's ``failurePolicy``
is about memory steps: ``memoryRecall: continue_without_memory`` makes the
``memory_recall`` nodes optional (``memoryIngest`` concerns no node: a workflow writes no
memory). An optional node's failure is in the trace (and the
run's record), its dependents still ran. Every run is a
:class:`~.models.WorkflowRun`: written after the reply (``after_reply``), or at once when
it fails the turn (a failed turn has no ``after_reply``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import asdict, dataclass, replace
from typing import Any

from console.db import run_db
from roleplay.models import TurnKind
from roleplay.turns.context import TurnContext
from roleplay.turns.phases import Phase, PhaseRun
from roleplay.turns.plugin import TurnPlugin
from roleplay.workflows import registry, services
from roleplay.workflows.checks import checked
from roleplay.workflows.engine.compiler import compile_context
from roleplay.workflows.engine.contracts import Plan
from roleplay.workflows.engine.executor import execute

from .errors import WorkflowFailed, WorkflowInvalid

KINDS = frozenset({TurnKind.CHAT, TurnKind.REGENERATE, TurnKind.EDIT_REGENERATE, TurnKind.CONTINUE})
DEADLINE_S = 120.0
# The executor stops this much before the phase's deadline, so the run's trace is kept.
MARGIN_S = 5.0
FOUNDATION_BLOCK = "workflow:foundation"
TURN_BLOCK = "workflow:turn"
MEMORY_RECALL = "memory_recall"
CONTINUE_WITHOUT_MEMORY = "continue_without_memory"


@dataclass
class WorkflowState:
    """The run this turn made (``ctx.slot(WorkflowState)``), written after the reply."""

    record: dict[str, Any] | None = None


def _applies(ctx: TurnContext) -> bool:
    return bool(ctx.scenario is not None and ctx.scenario.workflow)


def _scope(ctx: TurnContext) -> registry.RunScope:
    conversation = ctx.conversation
    return registry.RunScope(
        tenant_id=conversation.tenant_id,
        conversation_id=conversation.pk,
        scenario_id=ctx.scenario.pk if ctx.scenario is not None else None,
        player_id=conversation.player_id,
        turn_id=ctx.turn.pk,
        extra={"character_id": conversation.character_id, "session_id": conversation.session_id},
    )


async def _run(ctx: TurnContext, run: PhaseRun) -> None:
    scenario = ctx.scenario
    assert scenario is not None
    raw = scenario.workflow
    started = time.perf_counter()
    record: dict[str, Any] = {"scenario_id": scenario.pk, "nodes": [], "placed": {}}
    try:
        spec, plan = checked(raw, scenario.pk)
    except WorkflowInvalid as exc:
        error = {"code": exc.reason, "message": exc.text, "node": exc.node}
        return await _failed(ctx, record, error, started)
    plan = _with_policy(plan, spec.failure_policy.memory_recall)
    scope = _scope(ctx)
    capabilities = {n.capability: registry.build(n.capability, scope) for n in plan.nodes}
    query = ctx.user_input or ctx.continuing or ""
    running = asyncio.ensure_future(
        execute(plan, capabilities, query=query, cancel=run.cancel, timeout_s=DEADLINE_S - MARGIN_S)
    )
    try:
        result = await asyncio.shield(running)
    except asyncio.CancelledError:  # the player's cancel stops the phase: keep the run
        await _cancelled(ctx, record, running, started)
        raise
    record["nodes"] = [asdict(t) for t in result.traces]
    if run.cancel.is_set():  # the turn ends as cancelled, not failed
        await _cancelled(ctx, record, running, started)
        return
    if result.status != "succeeded":
        error = dict(result.error or {"code": "node_failed", "message": "a required node failed"})
        return await _failed(ctx, record, error, started)
    compiled = compile_context(plan, result)
    record["placed"] = _place(ctx, compiled.foundation_context, compiled.turn_context)
    _keep(ctx, record, "succeeded", None, started)


def _with_policy(plan: Plan, memory_recall: str) -> Plan:
    """``failurePolicy.memoryRecall: continue_without_memory`` (the seed's memory-step
    policy): a ``memory_recall`` node's failure does not fail the run, as if it were
    declared optional; ``fail_turn`` (the default) leaves each node as declared."""
    if memory_recall != CONTINUE_WITHOUT_MEMORY:
        return plan
    nodes = tuple(
        replace(n, required=False) if n.capability == MEMORY_RECALL else n for n in plan.nodes
    )
    return replace(plan, nodes=nodes)


async def _cancelled(ctx: TurnContext, record: dict, running: asyncio.Future, started) -> None:
    """The run as the executor ended it on the same cancel (its nodes' traces), kept."""
    try:
        result = await asyncio.wait_for(running, MARGIN_S)
        record["nodes"] = [asdict(t) for t in result.traces]
    except (TimeoutError, asyncio.CancelledError):
        running.cancel()
    _keep(ctx, record, "failed", {"code": "cancelled", "message": "cancelled"}, started)
    await _write_now(ctx)


async def _write_now(ctx: TurnContext) -> None:
    """The run's record written at once: a turn that ends here has no ``after_reply``."""
    state = ctx.slot(WorkflowState)
    if ctx.record and state.record is not None:
        await run_db(services.record_run, ctx.turn, state.record)
        state.record = None


async def _failed(ctx, record: dict, error: dict, started: float) -> None:
    """The run failed: written now, and the turn fails with ``workflow_failed`` naming the
    node."""
    error.setdefault("node", None)
    _keep(ctx, record, "failed", error, started)
    await _write_now(ctx)
    node = error.get("node")
    where = f"node {node!r}" if node else "the workflow"
    raise WorkflowFailed(
        f"{where} failed: {error.get('message') or error.get('code')}",
        node=node,
        reason=str(error.get("code")),
    )


def _keep(ctx: TurnContext, record: dict, status: str, error, started: float) -> None:
    record.update(
        status=status, error=error, duration_ms=round((time.perf_counter() - started) * 1000, 2)
    )
    ctx.trace["workflow"] = {
        "status": status,
        "error": error,
        "nodes": [
            {k: t.get(k) for k in ("node_id", "status", "output_bytes", "error")}
            for t in record["nodes"]
        ],
        "placed": record["placed"],
    }
    ctx.slot(WorkflowState).record = record


def _place(ctx: TurnContext, foundation: str, turn: str) -> dict[str, str | None]:
    """Both regions placed (module doc); where each went, None when it was empty."""
    outlets = ctx.placement_capabilities()
    placed: dict[str, str | None] = {"foundation_context": None, "turn_context": None}
    if foundation.strip():
        if "outlet:foundation_context" in outlets:
            placed["foundation_context"] = _outlet(
                ctx, FOUNDATION_BLOCK, foundation, "foundation_context"
            )
        else:
            placed["foundation_context"] = ctx.place(FOUNDATION_BLOCK, foundation, per_turn=False)
    if turn.strip():
        if "outlet:turn_context" in outlets:
            placed["turn_context"] = _outlet(ctx, TURN_BLOCK, turn, "turn_context")
        elif "at_depth" in outlets:
            ctx.blocks.append(
                {
                    "id": TURN_BLOCK,
                    "position": "at_depth",
                    "depth": 0,
                    "role": "system",
                    "content": turn,
                }
            )
            placed["turn_context"] = "at_depth"
        else:
            placed["turn_context"] = ctx.place(TURN_BLOCK, turn)
    return placed


def _outlet(ctx: TurnContext, block_id: str, content: str, name: str) -> str:
    ctx.blocks.append(
        {"id": block_id, "position": "outlet", "outlet_name": name, "content": content}
    )
    return f"outlet:{name}"


class WorkflowPlugin(TurnPlugin):
    name = "workflow"
    # After the worldbook's selection and Story's stage; before Compact counts the prompt
    # (so it counts these blocks too) and before the front loop drives the reply.
    after = ("worldbook", "story")
    before = ("compact", "frontloop")
    prepare = Phase(
        name="workflow",
        run=_run,
        kinds=KINDS,
        deadline_s=DEADLINE_S,
        required=True,
        applies=_applies,
    )

    def after_reply(self, ctx: TurnContext):
        record = ctx.slot(WorkflowState).record
        if record is None or not ctx.record:
            return None
        return lambda: services.record_run(ctx.turn, record)


PLUGIN = WorkflowPlugin()
