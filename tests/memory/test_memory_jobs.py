"""learn, forget and list (seed 003's names): durable admission with a 202, delivery by a
real Celery worker, deduplication, refusals that admit nothing, transient failures retried
up to the attempt budget, the operator's retry and cancel, and the paged list."""

from __future__ import annotations

import time
from datetime import timedelta

import psycopg
import pytest
from django.db import connection
from django.utils import timezone

from console.models import Player
from memory import jobs
from memory.entries import services as entry_writes
from memory.models import JobStatus, MemoryEntry, MemoryJob
from tests.api.helpers import assert_error

pytestmark = pytest.mark.django_db(transaction=True)


def _base(player) -> str:
    return f"/api/v1/players/{player.pk}/memory"


def _until_finished(job_id, timeout: float = 30.0) -> MemoryJob:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        job = MemoryJob.objects.get(pk=job_id)
        if job.status in (JobStatus.DONE, JobStatus.FAILED):
            return job
        time.sleep(0.1)
    raise AssertionError(f"job {job_id} still {job.status}")


def test_learn_is_admitted_then_delivered_once(celery_worker, api, player):
    response = api.post(f"{_base(player)}/learn", {"content": "Likes green tea."}, format="json")
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "queued" and response.json()["kind"] == "learn"
    job = _until_finished(response.json()["id"])
    assert job.status == JobStatus.DONE and job.attempts == 1
    entry = MemoryEntry.objects.get(pk=job.result["entry_id"])
    assert entry.content == "Likes green tea." and entry.status == "active"
    assert entry.origin == "tool" and entry.kind == "fact"
    again = api.post(f"{_base(player)}/learn", {"content": "Likes green tea."}, format="json")
    second = _until_finished(again.json()["id"])
    assert second.result == {"entry_id": str(entry.pk), "deduplicated": True}
    assert MemoryEntry.objects.filter(player=player).count() == 1
    shown = api.get(f"{_base(player)}/jobs/{second.pk}").json()
    assert shown["status"] == "done" and shown["result"]["deduplicated"] is True
    assert jobs.deliver(str(second.pk)) == "skipped"  # a second delivery does nothing


def test_forget_is_admitted_then_delivered(celery_worker, api, tenant, player):
    keep = entry_writes.add_entry(tenant, player, kind="fact", scope="shared", content="keep")
    drop = entry_writes.add_entry(tenant, player, kind="fact", scope="shared", content="drop")
    response = api.post(f"{_base(player)}/forget", {"ids": [str(drop.pk)]}, format="json")
    assert response.status_code == 202, response.content
    job = _until_finished(response.json()["id"])
    assert job.status == JobStatus.DONE and job.result == {"forgotten": 1}
    assert list(MemoryEntry.objects.filter(player=player).values_list("pk", flat=True)) == [keep.pk]


def test_the_outbox_holds_the_scrubbed_text(api, player):
    secret = "My key is sk-abcdefghijklmnopqrstuvwxyz0123456789ABCD, remember it."
    response = api.post(f"{_base(player)}/learn", {"content": secret}, format="json")
    assert response.status_code == 202, response.content
    stored = MemoryJob.objects.get(pk=response.json()["id"]).payload["content"]
    assert "sk-abcdefghijklmnopqrstuvwxyz" not in stored


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"content": "x", "kind": "dream"}, 400, "validation_error"),
        ({"content": "x", "colour": "red"}, 400, "validation_error"),
        ({"content": "nul\u0000byte"}, 400, "validation_error"),
        ({"content": "x" * 20_001}, 400, "validation_error"),
        ({"content": "   "}, 422, "invalid_content"),
        ({"content": "x", "scope": "session"}, 422, "scope_needs_conversation"),
        ({"content": "x", "kind": "agreement"}, 422, "agreement_not_shared"),
    ],
)
def test_a_bad_learn_admits_nothing(api, player, body, status, code):
    error = assert_error(api.post(f"{_base(player)}/learn", body, format="json"), status, code)
    assert error["message"]
    assert not MemoryJob.objects.exists()


def test_forgetting_another_players_entry_is_not_found(api, tenant, player, other_tenant):
    neighbour = Player.objects.create(tenant=tenant, external_id="neighbour")
    theirs = entry_writes.add_entry(tenant, neighbour, kind="fact", scope="shared", content="x")
    body = {"ids": [str(theirs.pk)]}
    assert_error(
        api.post(f"{_base(player)}/forget", body, format="json"), 404, "memory_entry_not_found"
    )
    assert not MemoryJob.objects.exists()
    assert MemoryEntry.objects.filter(pk=theirs.pk).exists()


def test_another_tenants_job_is_not_found(api, api_client_for, other_tenant, player):
    job = api.post(f"{_base(player)}/learn", {"content": "tea"}, format="json").json()
    other_api = api_client_for(other_tenant)
    assert_error(other_api.get(f"{_base(player)}/jobs/{job['id']}"), 404, "not_found")
    neighbour = Player.objects.create(tenant=player.tenant, external_id="neighbour")
    assert_error(api.get(f"{_base(neighbour)}/jobs/{job['id']}"), 404, "job_not_found")
    assert_error(api.get(f"{_base(player)}/jobs/not-a-uuid"), 404, "job_not_found")


def _hold_player_row(player) -> psycopg.Connection:
    """Another connection that locks the player's row (a learn waits for it)."""
    settings = connection.settings_dict
    other = psycopg.connect(
        dbname=settings["NAME"], user=settings["USER"], host=settings["HOST"],
        port=settings["PORT"] or None, password=settings["PASSWORD"] or None,
    )  # fmt: skip
    other.execute("BEGIN")
    other.execute("SELECT 1 FROM console_player WHERE id = %s FOR UPDATE", [player.pk])
    return other


def test_a_transient_failure_is_retried_until_the_budget_is_spent(api, player, monkeypatch):
    monkeypatch.setattr(jobs, "ATTEMPT_TIMEOUT_S", 1)
    monkeypatch.setattr(jobs, "MAX_ATTEMPTS", 2)
    job_id = api.post(f"{_base(player)}/learn", {"content": "tea"}, format="json").json()["id"]
    held = _hold_player_row(player)
    try:
        assert jobs.deliver(job_id) == JobStatus.QUEUED
        job = MemoryJob.objects.get(pk=job_id)
        assert job.attempts == 1 and job.error_code == "transient"
        assert job.next_attempt_at is not None
        assert jobs.deliver(job_id) == JobStatus.FAILED
    finally:
        held.rollback()
        held.close()
    job = MemoryJob.objects.get(pk=job_id)
    assert job.status == JobStatus.FAILED and job.error_code == "delivery_exhausted"
    assert job.attempts == 2 and not MemoryEntry.objects.filter(player=player).exists()
    retried = api.post(f"{_base(player)}/jobs/{job_id}/retry", {}, format="json")
    assert retried.status_code == 200 and retried.json()["status"] == "queued"
    assert retried.json()["attempts"] == 0
    assert jobs.deliver(job_id) == JobStatus.DONE


def test_a_full_memory_fails_at_once(api, tenant, player, monkeypatch):
    monkeypatch.setattr(entry_writes, "max_entries", lambda tenant: 1)
    entry_writes.add_entry(tenant, player, kind="fact", scope="shared", content="first")
    job_id = api.post(f"{_base(player)}/learn", {"content": "second"}, format="json").json()["id"]
    assert jobs.deliver(job_id) == JobStatus.FAILED
    job = MemoryJob.objects.get(pk=job_id)
    assert job.error_code == "memory_full" and job.attempts == 1


def test_cancel_and_retry_follow_the_job_state(api, player):
    job_id = api.post(f"{_base(player)}/learn", {"content": "tea"}, format="json").json()["id"]
    cancelled = api.post(f"{_base(player)}/jobs/{job_id}/cancel", {}, format="json")
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "cancelled"
    assert jobs.deliver(job_id) == "skipped"
    assert not MemoryEntry.objects.filter(player=player).exists()
    assert api.post(f"{_base(player)}/jobs/{job_id}/retry", {}, format="json").status_code == 200
    assert jobs.deliver(job_id) == JobStatus.DONE
    again = api.post(f"{_base(player)}/jobs/{job_id}/cancel", {}, format="json")
    assert_error(again, 409, "invalid_state")
    listed = api.get(f"{_base(player)}/jobs").json()["results"]
    assert [row["id"] for row in listed] == [job_id]


def test_a_job_whose_task_was_lost_is_sent_again(api, player):
    job_id = api.post(f"{_base(player)}/learn", {"content": "tea"}, format="json").json()["id"]
    assert jobs.requeue_stalled() == 0  # just admitted: its task is on its way
    MemoryJob.objects.filter(pk=job_id).update(updated_at=timezone.now() - timedelta(minutes=5))
    assert jobs.requeue_stalled() == 1
    MemoryJob.objects.filter(pk=job_id).update(
        status=JobStatus.RUNNING, attempts=jobs.MAX_ATTEMPTS,
        updated_at=timezone.now() - timedelta(minutes=5),
    )  # fmt: skip
    jobs.requeue_stalled()  # its worker died on its last attempt
    job = MemoryJob.objects.get(pk=job_id)
    assert job.status == JobStatus.FAILED and job.error_code == "delivery_exhausted"


def test_list_pages_through_the_entries(api, tenant, player):
    for i in range(5):
        entry_writes.add_entry(tenant, player, kind="fact", scope="shared", content=f"fact {i}")
    entry_writes.add_entry(
        tenant, player, kind="fact", scope="shared", content="maybe", status="candidate"
    )
    seen, cursor = [], None
    while True:
        body = {"limit": 2, **({"cursor": cursor} if cursor else {})}
        page = api.post(f"{_base(player)}/list", body, format="json").json()
        seen += [item["content"] for item in page["items"]]
        cursor = page["next_cursor"]
        if cursor is None:
            break
    assert sorted(seen) == [f"fact {i}" for i in range(5)]
    candidates = api.post(f"{_base(player)}/list", {"status": "candidate"}, format="json")
    assert [item["content"] for item in candidates.json()["items"]] == ["maybe"]
    bad = api.post(f"{_base(player)}/list", {"cursor": "bm90LWEtY3Vyc29y"}, format="json")
    assert_error(bad, 422, "invalid_cursor")
