"""A real Celery worker for the whole session, on the test database and our Redis."""

from __future__ import annotations

import pytest

from tests.background.processes import start_worker


@pytest.fixture(scope="session")
def celery_worker(django_db_setup, tmp_path_factory):
    """A ``--pool solo`` worker; tasks sent with ``.delay()`` go to its private queue.

    Depends on ``django_db_setup`` so it starts after the test database exists and is
    stopped before that database is dropped.
    """
    from console.celery import app

    worker = start_worker(tmp_path_factory.mktemp("celery"))
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = worker.queue
    try:
        yield worker
    finally:
        app.conf.task_default_queue = previous
        worker.stop()
