"""Agent V2's background runs: one per turn, durable, committed once (seed 002).

- :func:`start` (the turn's context hook) records the turn's run with its snapshot: the
  run's inputs, the config and the head revision to compare with, in the transaction that
  commits the turn's reply. The row is unique per turn (a database constraint). It is an
  outbox row: the turn sends no task. :func:`dispatch_pending` (the relay,
  ``roleplay.agentic.relay``, woken by the insert's NOTIFY) sends the Celery task of every
  run not sent yet once the turn has committed, and :func:`requeue_stalled` (every minute)
  sends again what was sent and never started, or never sent at all.
- :func:`execute` (the task, ``acks_late``) claims the run, runs it
  (``roleplay.agentic.engine.runner``) with real model calls, and in one transaction commits the
  state (compare-and-set against the snapshot's head) and closes the run. A delivery that
  finds its run done does nothing; a redelivery after a killed worker takes the run over
  and the first close wins, so a run never makes two revisions.
- Then ``planning.completed {turn_id, outcome, revision}`` goes to the conversation's
  sockets.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from console import rows, task_send
from roleplay.agentic import recorded
from roleplay.agentic.engine import runner
from roleplay.agentic.gateway import TenantModels
from roleplay.agentic.services import agent_state
from roleplay.models import PlanningRun, PlanningStatus, Scenario, Turn, TurnStatus
from roleplay.scenarios.config import AgenticV2

logger = logging.getLogger(__name__)

REPLY_WAIT_POLL_S = 0.25
SKIPPED = "skipped"
RELAY_BATCH = 100
# A queued run not started after this long lost its task; a running one not finished after
# its deadline (or this) lost its worker. Each is sent again, at most MAX_DELIVERIES in all.
STALLED_QUEUED = timedelta(minutes=2)
STALLED_RUNNING = timedelta(minutes=15)
MAX_DELIVERIES = 5


def start(
    turn: Turn,
    scenario: Scenario,
    config: AgenticV2,
    given: runner.Inputs,
    *,
    head: int,
) -> PlanningRun | None:
    """Record ``turn``'s planning run (its task is sent by the relay once the record
    commits); None if it has one. The guidance (the block the Actor read) is not stored: it
    is made from the inputs again (``inputs.recorded_guidance``), which keeps every turn's
    INSERT a third smaller; nor are the state and the ledger entries the turn read, which
    are stored already (``recorded``)."""
    snapshot = {
        "inputs": recorded.slim(given.as_json()),  # the stored state named, not copied
        "config": config.model_dump(mode="json"),
        "head": head,
        "revision": given.revision,
    }
    row = PlanningRun(
        tenant_id=turn.tenant_id,
        turn=turn,
        conversation_id=turn.conversation_id,
        scenario=scenario,
        assistant_message_id=turn.assistant_message_id,
        source_turn=given.turn,
        snapshot=snapshot,
    )
    # One statement of its own (the ORM's save costs more than it takes to run, in the
    # turn's commit on a busy machine); a second run for the turn is left alone.
    if not rows.insert(row, unique="turn_id"):
        return None
    return row


Announce = Callable[[Any, dict], Awaitable[None]]
"""Sends one event to a conversation's sockets (``roleplay.turns.hub.announce``)."""


def enqueue(run_id) -> None:
    task_send.send(task_send.named("roleplay.run_planning"), str(run_id))


def dispatch_pending(limit: int = RELAY_BATCH) -> int:
    """The relay's step: send the task of each committed run not sent yet, oldest first, at
    most ``limit``; how many were sent. The runs are taken ``FOR UPDATE SKIP LOCKED`` and
    marked sent in one transaction, so relays beside each other never send one twice; the
    tasks go out once it commits. A crash in between leaves them marked and unsent, for
    :func:`requeue_stalled`; a send that fails (the broker is down) unmarks the rest, for
    the next step, and raises."""
    with transaction.atomic():
        ids = list(
            PlanningRun.objects.select_for_update(skip_locked=True)
            .filter(status=PlanningStatus.QUEUED, dispatched_at__isnull=True)
            .order_by("created_at")
            .values_list("pk", flat=True)[:limit]
        )
        if not ids:
            return 0
        PlanningRun.objects.filter(pk__in=ids).update(dispatched_at=timezone.now())
    for sent, run_id in enumerate(ids):
        try:
            enqueue(run_id)
        except Exception:
            PlanningRun.objects.filter(pk__in=ids[sent:], status=PlanningStatus.QUEUED).update(
                dispatched_at=None
            )
            raise
    return len(ids)


def execute(run_id: str, announce: Announce | None = None) -> str:
    """Run a planning run to its end (the task's body); its outcome, or ``skipped``. Once it
    closes, ``announce`` (the task passes the socket hub's) tells the conversation's sockets
    ``planning.completed``: a service never imports the socket layer."""
    started, claim = time.perf_counter(), uuid.uuid4()
    run = _claim(run_id, claim)
    if run is None:
        return SKIPPED
    given = runner.Inputs.from_json(recorded.restore(run).snapshot["inputs"])
    config = AgenticV2.model_validate(run.snapshot["config"], strict=False)
    models = TenantModels(run.tenant, config, turn_id=run.turn_id)
    try:
        result = asyncio.run(_run(config, given, models))
    except Exception:  # a bug must still close the run, not leave it running for ever
        logger.exception("planning run %s failed", run.pk)
        result = runner.Result(outcome=runner.FAILED, error_code="internal_error")
    if result.outcome == runner.UPDATED and config.commitPolicy == "reply_completed":
        waited = time.perf_counter()
        if _reply_status(run, config) != TurnStatus.COMPLETE:
            result.outcome, result.error_code = runner.UNCHANGED, "reply_not_completed"
        started += time.perf_counter() - waited  # waiting for the reply is not our cost
    result.timings["task_ms"] = round((time.perf_counter() - started) * 1000, 1)
    outcome, revision = _close(run, claim, given, result, models)
    if outcome is None:
        return SKIPPED
    if announce is not None:
        event = {
            "type": "planning.completed",
            "turn_id": str(run.turn_id),
            "outcome": outcome,
            "revision": revision,
        }
        asyncio.run(announce(run.conversation_id, event))
    return outcome


def requeue_stalled() -> dict:
    """Send the stalled runs again (``roleplay.requeue_planning_runs``): queued ones whose
    task went out (or should have: no relay sent it) :data:`STALLED_QUEUED` ago, running
    ones started :data:`STALLED_RUNNING` ago; a run delivered :data:`MAX_DELIVERIES` times
    is closed as ``failed`` (``background_abandoned``)."""
    now = timezone.now()
    queued_since = Coalesce("dispatched_at", "created_at")
    stalled = PlanningRun.objects.alias(queued_since=queued_since).filter(
        Q(status=PlanningStatus.QUEUED, queued_since__lt=now - STALLED_QUEUED)
        | Q(status=PlanningStatus.RUNNING, started_at__lt=now - STALLED_RUNNING)
    )
    given_up = stalled.filter(deliveries__gte=MAX_DELIVERIES).update(
        status=PlanningStatus.DONE,
        outcome=runner.FAILED,
        error_code="background_abandoned",
        finished_at=now,
    )
    sent = 0
    for run_id in stalled.filter(deliveries__lt=MAX_DELIVERIES).values_list("pk", flat=True)[:500]:
        PlanningRun.objects.filter(pk=run_id).update(dispatched_at=timezone.now())
        enqueue(run_id)
        sent += 1
    return {"requeued": sent, "abandoned": given_up}


def _claim(run_id: str, claim: uuid.UUID) -> PlanningRun | None:
    with transaction.atomic():
        run = (
            PlanningRun.objects.select_for_update(of=("self",))
            .select_related("tenant", "conversation", "scenario")
            .filter(pk=run_id)
            .first()
        )
        if run is None or run.status == PlanningStatus.DONE:
            return None
        run.status, run.claim = PlanningStatus.RUNNING, claim
        run.deliveries += 1
        run.started_at = timezone.now()
        run.save(update_fields=["status", "claim", "deliveries", "started_at"])
    return run


async def _run(config: AgenticV2, given: runner.Inputs, models: TenantModels) -> runner.Result:
    work = runner.run(config, given, models)
    if config.backgroundDeadlineMs is None:
        return await work
    try:
        return await asyncio.wait_for(work, config.backgroundDeadlineMs / 1000)
    except TimeoutError:
        return runner.Result(outcome=runner.FAILED, error_code="background_deadline")


def _reply_status(run: PlanningRun, config: AgenticV2) -> str:
    """The turn's status once it ended (``reply_completed`` commits only a completed
    reply), waiting for it at most one model-call timeout."""
    deadline = time.monotonic() + config.modelCallTimeoutMs / 1000
    while True:
        status = Turn.objects.filter(pk=run.turn_id).values_list("status", flat=True).first()
        if status != TurnStatus.RUNNING or time.monotonic() > deadline:
            return status or TurnStatus.FAILED
        time.sleep(REPLY_WAIT_POLL_S)


def _close(
    run: PlanningRun,
    claim: uuid.UUID,
    given: runner.Inputs,
    result: runner.Result,
    models: TenantModels,
) -> tuple[str | None, int | None]:
    """Commit the state (when there is one) and close the run, in one transaction; (the
    outcome, the revision in force after it), or (None, None) when another delivery of the
    task closed the run first."""
    with transaction.atomic():
        row = PlanningRun.objects.select_for_update().filter(pk=run.pk).first()
        if row is None or row.status == PlanningStatus.DONE or row.claim != claim:
            return None, None
        revision: int | None = given.revision
        if result.outcome == runner.UPDATED and result.candidate is not None:
            try:
                revision = agent_state.commit(
                    run.conversation,
                    run.scenario,
                    expected_head=run.snapshot["head"],
                    state=result.candidate,
                    tools_called=result.tools_run + _director_called(result),
                    source_turn=given.turn,
                    source_message_id=run.assistant_message_id,
                    ledger_entries=result.ledger_entries(given.turn, given.query),
                )
            except agent_state.StaleWrite:
                result.outcome, result.error_code = runner.STALE, agent_state.STALE
        _record(row, result, models.call_ids, models.budgets, revision)
    return result.outcome, revision


def _director_called(result: runner.Result) -> list[str]:
    return ["update_director_state"] if result.director else []


def _record(
    row: PlanningRun, result: runner.Result, call_ids: list[str], budgets: list[dict], revision
) -> None:
    timings: dict[str, Any] = dict(result.timings)
    timings["model_ms"] = round(result.model_ms, 1)
    # What the background costs beyond waiting for models: the claim, the materials, the
    # runner's own work and the commit (the close itself is a few milliseconds more).
    spent = timings.get("task_ms", timings.get("total_ms", 0.0))
    timings["overhead_ms"] = round(max(spent - result.model_ms, 0.0), 1)
    row.status = PlanningStatus.DONE
    row.outcome = result.outcome
    row.error_code = result.error_code
    row.tools_requested = result.tools_requested
    row.tools_run = result.tools_run
    row.specialists = result.specialists
    row.director = {**result.director, "forced": result.forced, "escalated": result.escalated}
    row.ignored_calls = result.ignored
    row.timings = timings
    row.model_calls = call_ids
    row.governance = budgets
    row.revision = revision if result.outcome == runner.UPDATED else None
    row.finished_at = timezone.now()
    row.save()
