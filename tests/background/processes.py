"""Child processes that share the pytest test database: Celery workers, management commands.

A child process reads its settings from the environment like production does, so it is
pointed at the *test* database (built from the live connection's settings) and at the same
Redis; rows it should see must be committed, hence ``transactional_db`` in its tests.
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings

from console.live_server import worker_env
from console.processes import spawn, stop

REPO = Path(settings.BASE_DIR)


def manage(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python manage.py ARGS`` against the test database; stdout and stderr apart."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=worker_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class Worker:
    process: subprocess.Popen
    hostname: str
    queue: str
    log: Path

    def stop(self) -> None:
        stop(self.process, timeout=30)  # warm shutdown first


def start_worker(
    log_dir: Path,
    ready_timeout: float = 90,
    *,
    queue: str | None = None,
    env: dict[str, str] | None = None,
) -> Worker:
    """A solo Celery worker consuming a queue of its own (or ``queue``), answering pings
    when it returns; ``env`` adds to its environment.

    The run's Redis is private already (``tests/settings.py``); the private queue also keeps
    workers of one run from taking each other's tasks. The worker dies with this process.
    """
    from console.celery import app

    token = uuid.uuid4().hex[:10]
    hostname, queue = f"tests-{token}@localhost", queue or f"tests-{token}"
    log = log_dir / f"celery-{token}.log"
    process = spawn(
        [sys.executable, "-m", "celery", "-A", "console.worker", "worker", "--pool", "solo",
         "--concurrency", "1", "--hostname", hostname, "--queues", queue, "--without-gossip",
         "--without-mingle", "--loglevel", "INFO"],
        cwd=REPO, stdout=log.open("w"),
        # what the worker itself sends (a retry, a diary after indexing) comes back to it
        env={**worker_env(), "CELERY_TASK_DEFAULT_QUEUE": queue, **(env or {})},
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    worker = Worker(process, hostname, queue, log)
    deadline = time.monotonic() + ready_timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"celery worker exited early:\n{log.read_text()[-3000:]}")
        if app.control.ping(destination=[hostname], timeout=1.0):
            return worker
    worker.stop()
    raise RuntimeError(f"celery worker not ready in {ready_timeout}s:\n{log.read_text()[-3000:]}")


def route_task(name: str, queue: str | None) -> None:
    """Route task ``name`` to ``queue`` in this process (``None`` restores the default)."""
    from console.celery import app

    routes = dict(app.conf.task_routes or {})
    if queue is None:
        routes.pop(name, None)
    else:
        routes[name] = {"queue": queue}
    app.conf.task_routes = routes
    app.amqp.flush_routes()
    app.amqp.router = app.amqp.Router()  # the router caches the route table it was built with
