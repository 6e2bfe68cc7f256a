"""The console's memory jobs page: the tenant's jobs with their errors, retry and cancel
through ``memory.jobs``, refusals shown with their status, another tenant's job a 404."""

from __future__ import annotations

import pytest
from django.test import Client

from memory.models import JobStatus, MemoryJob

pytestmark = pytest.mark.django_db


def _job(tenant, player, status=JobStatus.FAILED, **fields):
    return MemoryJob.objects.create(
        tenant=tenant, player=player, kind="learn", status=status,
        payload={"kind": "fact", "scope": "shared", "content": "tea", "tags": [],
                 "character_id": "", "session_id": ""},
        **fields,
    )  # fmt: skip


@pytest.fixture
def console(operator_user):
    client = Client()
    client.force_login(operator_user)
    return client


def test_the_page_lists_jobs_with_their_errors(console, tenant, player):
    failed = _job(tenant, player, attempts=8, error_code="delivery_exhausted", error="8 failed")
    _job(tenant, player, status=JobStatus.DONE)
    page = console.get("/console/memory/jobs/")
    assert page.status_code == 200
    text = page.content.decode()
    assert f'id="job-{failed.pk}"' in text and "delivery_exhausted" in text
    only = console.get("/console/memory/jobs/?status=failed").content.decode()
    assert only.count('id="job-') == 1


def test_retry_then_cancel(console, tenant, player):
    job = _job(tenant, player)
    response = console.post(f"/console/memory/jobs/{job.pk}/", {"action": "retry"})
    assert response.status_code == 302
    job.refresh_from_db()
    assert job.status == JobStatus.QUEUED and job.attempts == 0
    assert console.post(f"/console/memory/jobs/{job.pk}/", {"action": "cancel"}).status_code == 302
    job.refresh_from_db()
    assert job.status == JobStatus.CANCELLED


def test_refusals_change_nothing(console, tenant, player, other_tenant):
    done = _job(tenant, player, status=JobStatus.DONE)
    assert console.post(f"/console/memory/jobs/{done.pk}/", {"action": "cancel"}).status_code == 409
    assert (
        console.post(f"/console/memory/jobs/{done.pk}/", {"action": "explode"}).status_code == 400
    )
    done.refresh_from_db()
    assert done.status == JobStatus.DONE
    from console.models import Player

    stranger = Player.objects.create(tenant=other_tenant, external_id="stranger")
    foreign = _job(other_tenant, stranger)
    assert (
        console.post(f"/console/memory/jobs/{foreign.pk}/", {"action": "retry"}).status_code == 404
    )
    foreign.refresh_from_db()
    assert foreign.status == JobStatus.FAILED
