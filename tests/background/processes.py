"""Child processes that share the pytest test database: Celery workers, management commands.

A child process reads its settings from the environment like production does, so it is
pointed at the *test* database (built from the live connection's settings) and at the same
Redis; rows it should see must be committed, hence ``transactional_db`` in its tests.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from django.conf import settings

REPO = Path(settings.BASE_DIR)


def database_url(settings_dict: dict) -> str:
    """``postgres://USER@/NAME?host=SOCKETDIR`` (or host:port for a TCP server)."""
    user = quote(settings_dict.get("USER") or "", safe="")
    password = settings_dict.get("PASSWORD") or ""
    auth = f"{user}:{quote(password, safe='')}" if password else user
    name = quote(settings_dict["NAME"], safe="")
    host = settings_dict.get("HOST") or ""
    port = settings_dict.get("PORT") or ""
    if not host or host.startswith("/"):
        query = f"?host={quote(host, safe='/')}" if host else ""
        if port:
            query += ("&" if query else "?") + f"port={port}"
        return f"postgres://{auth}@/{name}{query}"
    return f"postgres://{auth}@{host}{':' + str(port) if port else ''}/{name}"


def child_env() -> dict[str, str]:
    """The environment of a child process that uses the test database and our Redis."""
    from django.db import connection

    env = dict(os.environ)
    env.update(
        DATABASE_URL=database_url(connection.settings_dict),
        REDIS_URL=settings.REDIS_URL,
        DJANGO_SETTINGS_MODULE="console.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


def manage(*args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``python manage.py ARGS`` against the test database; stdout and stderr apart."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=child_env(),
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
        if self.process.poll() is None:
            self.process.terminate()  # warm shutdown
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def start_worker(log_dir: Path, ready_timeout: float = 90) -> Worker:
    """A solo Celery worker consuming a queue of its own, answering pings when it returns.

    The private queue keeps tasks of this test run away from any other worker on the same
    Redis (a ``make run`` beside the tests), and theirs away from ours.
    """
    from console.celery import app

    token = uuid.uuid4().hex[:10]
    hostname, queue = f"tests-{token}@localhost", f"tests-{token}"
    log = log_dir / f"celery-{token}.log"
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "console.worker", "worker", "--pool", "solo",
         "--concurrency", "1", "--hostname", hostname, "--queues", queue, "--without-gossip",
         "--without-mingle", "--loglevel", "INFO"],
        cwd=REPO, env=child_env(), stdout=log.open("w"), stderr=subprocess.STDOUT,
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
