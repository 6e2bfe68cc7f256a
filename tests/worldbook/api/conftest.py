"""Fixtures of the worldbook API tests: a second tenant's client and a real Celery worker.

``wb_celery_worker`` starts a solo Celery worker (``tests.background.processes``) as a
subprocess pointed at the *test* database and the run's Redis, so an index build requested
through the API is executed by real Celery machinery (broker, ack, Django fixups), not called
in-process. Tests using it need ``transactional_db``: the worker reads committed rows only.

The worker consumes a queue of its own, and ``worldbook.build_index`` is routed there while
the fixture is active, so no other worker of the run takes the task.
"""

from __future__ import annotations

import pytest

TASK_NAME = "worldbook.build_index"


def _route_to(queue: str | None) -> None:
    """Route ``worldbook.build_index`` to ``queue`` (``None`` restores the default routes)."""
    from console.celery import app

    routes = dict(app.conf.task_routes or {})
    if queue is None:
        routes.pop(TASK_NAME, None)
    else:
        routes[TASK_NAME] = {"queue": queue}
    app.conf.task_routes = routes
    app.amqp.flush_routes()
    app.amqp.router = app.amqp.Router()  # the router caches the route table it was built with


@pytest.fixture(scope="session")
def wb_celery_worker(django_db_setup, tmp_path_factory):
    """A running Celery worker process on the test database; yields its queue name."""
    from tests.background.processes import start_worker

    worker = start_worker(tmp_path_factory.mktemp("wb_worker"))
    try:
        _route_to(worker.queue)
        yield worker.queue
    finally:
        _route_to(None)
        worker.stop()


@pytest.fixture
def other_api(api_client_for, other_tenant):
    """A content client of a second tenant."""
    return api_client_for(other_tenant)
