"""A Celery task enqueued here is executed by a real worker process on the test database."""

from __future__ import annotations

import pytest

from memory import selectors as reads
from memory import services as store
from memory.tasks import trim_session

pytestmark = pytest.mark.django_db(transaction=True)


def test_trim_session_runs_on_the_worker(celery_worker, tenant):
    rows = [store.save_message(tenant, "s", role="user", content=f"m{i}") for i in range(10)]
    result = trim_session.delay(str(tenant.id), "s", 3)
    assert result.get(timeout=60) == 7
    assert result.successful()
    assert reads.get_history(tenant, "s") == rows[-3:]
    assert len(reads.get_full_history(tenant, "s")) == 10
    log = celery_worker.log.read_text()
    assert result.id in log and "succeeded" in log  # it ran there, not in this process


def test_trim_session_is_idempotent_on_redelivery(celery_worker, tenant):
    for i in range(5):
        store.save_message(tenant, "s", role="user", content=f"m{i}")
    first = trim_session.delay(str(tenant.id), "s", 2).get(timeout=60)
    again = trim_session.delay(str(tenant.id), "s", 2).get(timeout=60)
    assert (first, again) == (3, 0)
    assert len(reads.get_history(tenant, "s")) == 2


def test_trim_session_of_an_unknown_tenant_does_nothing(celery_worker, tenant):
    store.save_message(tenant, "s", role="user", content="m")
    missing = "00000000-0000-0000-0000-000000000000"
    assert trim_session.delay(missing, "s", 0).get(timeout=60) == 0
    assert len(reads.get_history(tenant, "s")) == 1
