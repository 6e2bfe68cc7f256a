"""A private Celery queue for a benchmark's background tasks.

A turn with Agent V2 on enqueues its planning run with ``.delay()`` on the default queue,
where a worker of the running product (``make run``) would take it and run it against the
benchmark's model server, or where it would wait for the next worker long after the bench
tenant is gone. Benchmarks send those tasks to a queue of their own that no worker reads,
count them and purge it at the end: in this process with :func:`private_queue`, in a daphne
child with ``roleplay.bench.asgi`` and :data:`QUEUE_ENV`.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

QUEUE_ENV = "BENCH_CELERY_QUEUE"


def new_queue_name() -> str:
    return f"bench-{uuid.uuid4().hex[:12]}"


def use_queue(name: str) -> str:
    """Send this process's tasks to ``name`` from now on; the queue used before."""
    from console.celery import app

    previous = app.conf.task_default_queue
    app.conf.task_default_queue = name
    return previous


def purge(name: str) -> int:
    """Drop every message waiting on ``name``; how many there were."""
    from console.celery import app

    with app.connection_for_write() as connection:
        return connection.default_channel.queue_purge(name) or 0


@contextmanager
def private_queue() -> Iterator[dict]:
    """This process's tasks go to a new private queue inside the block; it is purged on the
    way out and ``found["purged"]`` says how many tasks it held."""
    name = new_queue_name()
    previous = use_queue(name)
    found = {"queue": name, "purged": 0}
    try:
        yield found
    finally:
        use_queue(previous)
        found["purged"] = purge(name)
