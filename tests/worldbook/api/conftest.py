"""Fixtures of the worldbook API tests: a second tenant's client and a real Celery worker.

``wb_celery_worker`` starts ``python -m celery -A console.celery worker --pool solo`` as a
subprocess pointed at the *test* database and the session's Redis, so an index build requested
through the API is executed by real Celery machinery (broker, ack, Django fixups), not called
in-process. Tests using it need ``transactional_db``: the worker reads committed rows only.

The worker consumes a queue private to this test session, and ``worldbook.build_index`` is
routed there while the fixture is active. Other engineers' test runs share the embedded Redis
(and its default ``celery`` queue) while pointing at other test databases; a shared queue would
let their worker take our task and build index ids that mean something else in their database.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

import pytest

ROOT = Path(__file__).resolve().parents[3]
WORKER_START_TIMEOUT = 90  # seconds; a hang guard, not a performance assertion
TASK_NAME = "worldbook.build_index"


def _database_url(settings_dict) -> str:
    """``postgres://USER[:PASSWORD]@[HOST][:PORT]/NAME`` of the test database; a unix socket
    directory in HOST travels as ``?host=DIR`` (how the embedded server is reached)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password, safe='')}" if password else user
    host = settings_dict.get("HOST") or ""
    port = settings_dict.get("PORT") or ""
    name = quote(settings_dict["NAME"], safe="")
    if host.startswith("/"):
        return f"postgres://{auth}@/{name}?host={quote(host, safe='/')}"
    netloc = f"{host}:{port}" if port else host
    return f"postgres://{auth}@{netloc}/{name}"


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
    from django.conf import settings
    from django.db import connection

    from console.celery import app

    queue = f"wbtest-{uuid.uuid4().hex[:12]}"
    nodename = f"{queue}@localhost"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "console.settings",
        "DATABASE_URL": _database_url(connection.settings_dict),
        "REDIS_URL": settings.REDIS_URL,
        "PYTHONUNBUFFERED": "1",
    }
    log_path = tmp_path_factory.mktemp("wb_worker") / "worker.log"
    log = log_path.open("wb")
    cmd = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "console.worker",
        "worker",
        "--pool",
        "solo",
        "--concurrency",
        "1",
        "-Q",
        queue,
        "-n",
        nodename,
        "--without-gossip",
        "--without-mingle",
        "--loglevel",
        "INFO",
    ]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + WORKER_START_TIMEOUT
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"celery worker exited: {log_path.read_text()[-3000:]}")
            if app.control.ping(destination=[nodename], timeout=1.0):
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"celery worker not ready: {log_path.read_text()[-3000:]}")
        _route_to(queue)
        yield queue
    finally:
        _route_to(None)
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
        log.close()


@pytest.fixture
def other_api(api_client_for, other_tenant):
    """A content client of a second tenant."""
    return api_client_for(other_tenant)
