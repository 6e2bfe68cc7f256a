"""Fixtures of the worldbook API tests: a second tenant's client and a real Celery worker.

``wb_celery_worker`` starts a solo Celery worker (``tests.background.processes``) as a
subprocess pointed at the *test* database and the run's Redis, so an index build requested
through the API is executed by real Celery machinery (broker, ack, Django fixups), not called
in-process. Tests using it need ``transactional_db``: the worker reads committed rows only.

The worker consumes a queue of its own, and ``worldbook.build_index`` is routed there while
the fixture is active, so no other worker of the run takes the task.
"""

from __future__ import annotations

import json

import pytest

TASK_NAME = "worldbook.build_index"


@pytest.fixture(scope="session")
def wb_celery_worker(django_db_setup, tmp_path_factory):
    """A running Celery worker process on the test database; yields its queue name."""
    from tests.background.processes import route_task, start_worker

    worker = start_worker(tmp_path_factory.mktemp("wb_worker"))
    try:
        route_task(TASK_NAME, worker.queue)
        yield worker.queue
    finally:
        route_task(TASK_NAME, None)
        worker.stop()


@pytest.fixture
def other_api(api_client_for, other_tenant):
    """A content client of a second tenant."""
    return api_client_for(other_tenant)


@pytest.fixture(scope="module")
def openapi_document(django_db_blocker) -> dict:
    """The OpenAPI document at ``/api/schema/``, as JSON."""
    from django.test import Client

    with django_db_blocker.unblock():
        res = Client().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert res.status_code == 200
    return json.loads(res.content)
