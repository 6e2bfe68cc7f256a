"""``fast+slow``: the bounded runtime beside the Actor, durable in Celery.

When its node runs (before the Actor, in the turn's workflow), :func:`start` reads the
state once and freezes the run's material — the player's input, the history, the saved
state and its revision, the node's config, its dependencies' results and the run's scope —
into a ``RuntimeRun`` row, committed on its own, then sends the Celery task
``roleplay.run_workflow_runtime``; the node answers at once (``{mode, runId, status:
"queued", revision}``) and the Actor goes on. The worker (:func:`execute`) runs the
runtime on that frozen snapshot, so it reads exactly what the Actor read, and its commit
compares with the frozen revision: a write that landed meanwhile makes it
``stale_write_rejected``. The result is kept on the row, and
``workflow_runtime.completed {run_id, turn_id, node_id, status, state_outcome, revision,
error_code}`` goes to the conversation's sockets.

Durable: the row is committed before its task is sent, and a send that fails (the broker
is down) leaves it for :func:`requeue_stalled` (every minute), which also sends again a
run queued :data:`STALLED_QUEUED` ago that never started, and one running
:data:`STALLED_RUNNING` ago (its worker died); a run sent :data:`MAX_DELIVERIES` times is
closed ``failed`` (``background_abandoned``). A delivery claims its row by one conditional
UPDATE (``queued`` → ``running``, its start time as the fencing token): a second delivery
of a claimed run does nothing, and only the delivery holding the claim closes the run. Two
deliveries of one run compare with the same frozen revision, so at most one of them writes
the state.

Cancel propagates (seed: an explicit cancel reaches both paths; a failed Actor alone does
not): the turn's cancel, set while the run may still be going, is forwarded to the run
(:func:`forward_cancel`, :func:`request_cancel`): a queued run is closed ``failed``
(``cancelled``) before it starts, a running one's worker sees the request within
:data:`CANCEL_POLL_S` and stops its model call or tools. What a tool already did stays done.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from datetime import timedelta
from typing import Any

from django.db.models import F, Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from console import task_send
from console.db import run_db
from roleplay.workflows import registry
from roleplay.workflows.engine.contracts import CapabilityError
from roleplay.workflows.engine.runtime import RuntimeResult, StateSnapshot
from roleplay.workflows.runtime_node import context_for, history_for, runtime_for
from roleplay.workflows.runtime_store import DEFAULT_KEY, read
from roleplay.workflows.state_models import RuntimeRun, RuntimeRunStatus

log = logging.getLogger(__name__)
TASK = "roleplay.run_workflow_runtime"
STALLED_QUEUED = timedelta(minutes=2)
STALLED_RUNNING = timedelta(minutes=16)  # past the longest run (timeoutMs ≤ 15 minutes)
MAX_DELIVERIES = 5
CANCEL_POLL_S = 0.5
CANCELLED = {
    "status": "failed",
    "error": {"code": "cancelled", "message": "the turn was cancelled"},
}
Announce = Callable[[Any, dict], Awaitable[None]]
"""Sends one event to a conversation's sockets (``roleplay.turns.hub.announce``)."""
_watchers: set[asyncio.Task] = set()  # held so they are not collected while they wait


def _scope_json(scope: registry.RunScope, history: list[dict[str, str]]) -> dict[str, Any]:
    def text(value: Any) -> str | None:
        return None if value is None else str(value)

    return {
        "tenant_id": text(scope.tenant_id),
        "conversation_id": text(scope.conversation_id),
        "scenario_id": text(scope.scenario_id),
        "player_id": text(scope.player_id),
        "turn_id": text(scope.turn_id),
        "history": history,
    }


def _record(
    scope: registry.RunScope,
    node_id: str,
    node: Mapping[str, Any],
    query: str,
    history: list[dict[str, str]],
    earlier: str,
) -> dict:
    key = node.get("stateKey") or DEFAULT_KEY
    frozen = read(scope.tenant_id, scope.conversation_id, key)
    row = RuntimeRun.objects.create(
        tenant_id=scope.tenant_id,
        conversation_id=scope.conversation_id,
        turn_id=scope.turn_id,
        node_id=node_id,
        state_key=key,
        deliveries=1,
        sent_at=timezone.now(),
        snapshot={
            "node": dict(node),
            "query": query,
            "earlier": earlier,
            "scope": _scope_json(scope, history),
            "state": frozen.state,
            "revision": frozen.revision,
        },
    )
    return {"runId": str(row.pk), "revision": frozen.revision}


async def start(
    scope: registry.RunScope, node_id: str, node: Mapping[str, Any], query: str, earlier: str = ""
) -> dict[str, Any]:
    """Freeze and record the run, send its task; the node's value. A send that fails
    leaves the run for the sweep: the node still answers ``queued``."""
    history = await history_for(scope, node, query)
    recorded = await run_db(_record, scope, node_id, node, query, history, earlier)
    try:
        task_send.send(task_send.named(TASK), recorded["runId"])
    except Exception:
        log.exception("workflow runtime run %s not sent; the sweep sends it", recorded["runId"])
        await run_db(_unsent, recorded["runId"])
    return {"mode": "fast+slow", "status": "queued", **recorded}


def request_cancel(run_id: str) -> None:
    """Cancel the run: closed now if it has not started, else flagged for its worker."""
    queued = RuntimeRun.objects.filter(pk=run_id, status=RuntimeRunStatus.QUEUED)
    if not queued.update(
        status=RuntimeRunStatus.FAILED, result=CANCELLED, finished_at=timezone.now()
    ):
        RuntimeRun.objects.filter(pk=run_id, status=RuntimeRunStatus.RUNNING).update(
            cancel_requested=True
        )


def forward_cancel(cancel: asyncio.Event, run_id: str, within_s: float) -> None:
    """Forward ``cancel`` (the turn's) to the run if it is set within ``within_s`` (the
    run's own deadline, after which there is nothing left to stop)."""

    async def watch() -> None:
        try:
            await asyncio.wait_for(cancel.wait(), timeout=within_s)
        except TimeoutError:
            return
        await run_db(request_cancel, run_id)

    task = asyncio.ensure_future(watch())
    _watchers.add(task)
    task.add_done_callback(_watchers.discard)


async def _watch_requests(run_id: Any, cancel: asyncio.Event) -> None:
    """In the worker: set the run's ``cancel`` once a cancel is requested."""
    while not cancel.is_set():
        await asyncio.sleep(CANCEL_POLL_S)
        flagged = RuntimeRun.objects.filter(pk=run_id, cancel_requested=True)
        if await run_db(flagged.exists):
            cancel.set()


def _unsent(run_id: str) -> None:
    RuntimeRun.objects.filter(pk=run_id).update(sent_at=None, deliveries=F("deliveries") - 1)


def requeue_stalled() -> dict[str, int]:
    """The sweep (``roleplay.requeue_workflow_runtime_runs``, module doc)."""
    now = timezone.now()
    stalled = RuntimeRun.objects.alias(since=Coalesce("sent_at", "created_at")).filter(
        Q(status=RuntimeRunStatus.QUEUED, sent_at__isnull=True)
        | Q(status=RuntimeRunStatus.QUEUED, since__lt=now - STALLED_QUEUED)
        | Q(status=RuntimeRunStatus.RUNNING, started_at__lt=now - STALLED_RUNNING)
    )
    abandoned = {"code": "background_abandoned", "message": "its task was lost too often"}
    given_up = stalled.filter(deliveries__gte=MAX_DELIVERIES).update(
        status=RuntimeRunStatus.FAILED,
        result={"status": "failed", "error": abandoned},
        finished_at=now,
    )
    sent = 0
    for run_id in stalled.filter(deliveries__lt=MAX_DELIVERIES).values_list("pk", flat=True)[:500]:
        RuntimeRun.objects.filter(pk=run_id).update(
            status=RuntimeRunStatus.QUEUED, sent_at=now, deliveries=F("deliveries") + 1
        )
        task_send.send(task_send.named(TASK), str(run_id))
        sent += 1
    return {"requeued": sent, "abandoned": given_up}


def _claim(run_id: str) -> RuntimeRun | None:
    claim = timezone.now()
    claimed = RuntimeRun.objects.filter(pk=run_id, status=RuntimeRunStatus.QUEUED).update(
        status=RuntimeRunStatus.RUNNING, started_at=claim
    )
    return RuntimeRun.objects.get(pk=run_id) if claimed else None


async def _run(row: RuntimeRun) -> RuntimeResult:
    frozen = row.snapshot
    saved = frozen["scope"]
    scope = registry.RunScope(
        tenant_id=saved["tenant_id"],
        conversation_id=saved["conversation_id"],
        scenario_id=saved["scenario_id"],
        player_id=saved["player_id"],
        turn_id=saved["turn_id"],
        extra={"history": saved["history"]},
    )
    runtime, _store = await runtime_for(frozen["node"], scope, frozen.get("earlier", ""))
    snapshot = StateSnapshot(frozen["state"], frozen["revision"])
    context = context_for(frozen["query"], saved["history"], scope)
    cancel = asyncio.Event()
    watcher = asyncio.ensure_future(_watch_requests(row.pk, cancel))
    try:
        return await runtime.run(context, cancel, snapshot=snapshot)
    finally:
        watcher.cancel()


def execute(run_id: str, announce: Announce | None = None) -> str:
    """The task's body: run the frozen run once; its status (``skipped`` when another
    delivery has it, ``superseded`` when the sweep gave it to another meanwhile). Once it
    closes, ``announce`` (the task passes the socket hub's) tells the conversation's sockets
    ``workflow_runtime.completed``: a service never imports the socket layer."""
    row = _claim(run_id)
    if row is None:
        return "skipped"
    try:
        result = asyncio.run(_run(row)).as_json()
    except CapabilityError as exc:
        result = {"status": "failed", "error": {"code": exc.code, "message": exc.message}}
    except Exception as exc:  # a bug must still close the run, not leave it running
        log.exception("workflow runtime run %s failed", run_id)
        result = {"status": "failed", "error": {"code": "internal_error", "message": str(exc)}}
    if not _close(row, result):
        return "superseded"
    if announce is not None:
        asyncio.run(announce(row.conversation_id, completed_event(row, result)))
    return result["status"]


def completed_event(row: RuntimeRun, result: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "workflow_runtime.completed",
        "run_id": str(row.pk),
        "turn_id": str(row.turn_id) if row.turn_id else None,
        "node_id": row.node_id,
        "status": result["status"],
        "state_outcome": result.get("stateOutcome", "unchanged"),
        "revision": result.get("revision"),
        "error_code": (result.get("error") or {}).get("code"),
    }


def _close(row: RuntimeRun, result: dict[str, Any]) -> bool:
    """Keep ``result`` on the run, if this delivery still holds its claim."""
    status = (
        RuntimeRunStatus.COMPLETED if result["status"] == "completed" else RuntimeRunStatus.FAILED
    )
    closed = RuntimeRun.objects.filter(
        pk=row.pk, status=RuntimeRunStatus.RUNNING, started_at=row.started_at
    ).update(status=status, result=result, finished_at=timezone.now())
    return closed == 1
