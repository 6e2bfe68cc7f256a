"""A Celery worker of the product (``celery -A console.worker worker``) in a child process,
consuming one private queue, on the database and Redis this process uses.

It is how :mod:`searchable` measures a message's way from its commit to the recall index
through the real task path. The worker dies with this process (``console.processes``); its
log goes to a temporary file whose tail is in the error when it does not start.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings

from console.live_server import worker_env
from console.processes import spawn, stop

READY_TIMEOUT_S = 90.0


@contextmanager
def celery_worker(
    queue: str, *, concurrency: int = 0, ready_timeout: float = READY_TIMEOUT_S
) -> Iterator[str]:
    """A worker on ``queue`` that answers pings; its hostname. ``--pool solo`` by default;
    with ``concurrency``, the prefork pool of that many processes (``make run``'s worker
    has two: ``console.management.commands.serve``)."""
    from console.celery import app

    hostname = f"bench-memory-{uuid.uuid4().hex[:8]}@localhost"
    with tempfile.TemporaryDirectory(prefix="bench-memory-") as folder:
        log = Path(folder) / "celery.log"
        with log.open("w") as out:
            process = spawn(
                [sys.executable, "-m", "celery", "-A", "console.worker", "worker",
                 *(("--concurrency", str(concurrency)) if concurrency else
                   ("--pool", "solo", "--concurrency", "1")), "--hostname", hostname,
                 "--queues", queue, "--without-gossip", "--without-mingle",
                 "--loglevel", "WARNING"],
                cwd=settings.BASE_DIR, env=worker_env(), stdout=out, stderr=subprocess.STDOUT,
            )  # fmt: skip
        try:
            deadline = time.monotonic() + ready_timeout
            while not app.control.ping(destination=[hostname], timeout=1.0):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the Celery worker did not start: {log.read_text()[-1500:]}"
                    )
            yield hostname
        finally:
            stop(process, timeout=30)
