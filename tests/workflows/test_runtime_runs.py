"""``fast+slow`` runs are durable: a run whose task was lost, or whose worker died, is sent
again by the sweep and runs once on its frozen snapshot; a run sent too often is closed;
a superseded delivery does not close the run."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from roleplay.llm.scripted_server import Reply
from roleplay.workflows import runtime_runs
from roleplay.workflows.state_models import RuntimeRun, WorkflowState

pytestmark = pytest.mark.django_db(transaction=True)


def frozen_run(conversation, model_config, **fields) -> RuntimeRun:
    node = {
        "modelConfigId": str(model_config.pk),
        "systemPrompt": "Answer the new state as one JSON object.",
        "tools": [],
        "stateKey": "continuity",
        "commitState": True,
        "mode": "fast+slow",
    }
    scope = {
        "tenant_id": str(conversation.tenant_id),
        "conversation_id": str(conversation.pk),
        "scenario_id": None,
        "player_id": str(conversation.player_id),
        "turn_id": None,
        "history": [],
    }
    return RuntimeRun.objects.create(
        tenant_id=conversation.tenant_id,
        conversation=conversation,
        state_key="continuity",
        snapshot={"node": node, "query": "hi", "scope": scope, "state": None, "revision": 0},
        **fields,
    )


def finished(run_id, timeout: float = 30.0) -> RuntimeRun:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = RuntimeRun.objects.get(pk=run_id)
        if run.status in ("completed", "failed"):
            return run
        time.sleep(0.1)
    raise AssertionError(f"run {run_id} did not finish")


def test_a_lost_task_and_a_dead_worker_are_sent_again(
    conversation, model_config, llm, celery_worker
):
    long_ago = timezone.now() - timedelta(minutes=30)
    never_sent = frozen_run(conversation, model_config)
    lost = frozen_run(conversation, model_config, deliveries=1, sent_at=long_ago)
    dead = frozen_run(
        conversation, model_config, status="running", deliveries=1, sent_at=long_ago,
        started_at=long_ago,
    )  # fmt: skip
    recent = frozen_run(conversation, model_config, deliveries=1, sent_at=timezone.now())
    llm.default = Reply(content='{"key": "kept"}')

    assert runtime_runs.requeue_stalled() == {"requeued": 3, "abandoned": 0}
    runs = [finished(r.pk) for r in (never_sent, lost, dead)]
    assert [r.status for r in runs] == ["completed"] * 3
    # All three froze revision 0: one wrote it, the others were stale.
    outcomes = sorted(r.result["stateOutcome"] for r in runs)
    assert outcomes == ["committed", "stale_write_rejected", "stale_write_rejected"]
    assert WorkflowState.objects.get(conversation=conversation).revision == 1
    recent.refresh_from_db()
    assert recent.status == "queued"  # not stalled yet


def test_a_run_sent_too_often_is_abandoned(conversation, model_config):
    long_ago = timezone.now() - timedelta(minutes=30)
    run = frozen_run(
        conversation, model_config, deliveries=runtime_runs.MAX_DELIVERIES, sent_at=long_ago
    )
    assert runtime_runs.requeue_stalled() == {"requeued": 0, "abandoned": 1}
    run.refresh_from_db()
    assert run.status == "failed"
    assert run.result["error"]["code"] == "background_abandoned"


def test_a_second_delivery_does_nothing_and_a_superseded_one_does_not_close(
    conversation, model_config, llm
):
    llm.default = Reply(content='{"key": "kept"}')
    run = frozen_run(conversation, model_config, deliveries=1, sent_at=timezone.now())
    assert runtime_runs.execute(str(run.pk)) == "completed"
    assert runtime_runs.execute(str(run.pk)) == "skipped"

    other = frozen_run(conversation, model_config, deliveries=1, sent_at=timezone.now())
    claimed = runtime_runs._claim(str(other.pk))
    # the sweep took it over and another delivery claimed it meanwhile
    RuntimeRun.objects.filter(pk=other.pk).update(started_at=timezone.now() + timedelta(1))
    assert runtime_runs._close(claimed, {"status": "completed"}) is False
    other.refresh_from_db()
    assert other.status == "running"


def test_a_cancel_before_the_run_starts_closes_it(conversation, model_config):
    run = frozen_run(conversation, model_config, deliveries=1, sent_at=timezone.now())
    runtime_runs.request_cancel(str(run.pk))
    run.refresh_from_db()
    assert run.status == "failed" and run.result["error"]["code"] == "cancelled"
    assert runtime_runs.execute(str(run.pk)) == "skipped"  # its task, arriving later


def test_the_sweep_is_on_the_beat_schedule():
    from django.conf import settings

    from console.celery import app

    entries = {entry["task"] for entry in settings.CELERY_BEAT_SCHEDULE.values()}
    assert "roleplay.requeue_workflow_runtime_runs" in entries
    app.loader.import_default_modules()
    assert "roleplay.requeue_workflow_runtime_runs" in app.tasks
    assert runtime_runs.TASK in app.tasks
