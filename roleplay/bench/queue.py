"""A private Celery queue for a benchmark's background tasks.

A turn sends background tasks (recall indexing, a pre-compaction, and once a relay sends it,
its Agent V2 planning run) to the default queue, where a worker of the running product
(``make run``) would take them and run them against the benchmark's model server, or where
they would wait for the next worker long after the bench tenant is gone. Benchmarks send
those tasks to a queue of their own that no worker reads, count them and purge it at the
end: in this process with :func:`private_queue`, in a daphne child with
``roleplay.bench.asgi`` and :data:`QUEUE_ENV`.
"""

from __future__ import annotations

import json
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


PLANNING_TASK = "roleplay.run_planning"


def purge(name: str, task: str | None = PLANNING_TASK) -> int:
    """Drop every message waiting on ``name``; how many of them were ``task``'s (of any
    task with None). A turn also queues other background work (recall indexing, the memory
    pack's refresh), which a planning count leaves out."""
    from console.celery import app

    with app.connection_for_write() as connection:
        channel = connection.default_channel
        counted = 0
        for raw in channel.client.lrange(name, 0, -1):
            try:
                headers = json.loads(raw).get("headers") or {}
            except ValueError:
                continue
            counted += task is None or headers.get("task") == task
        channel.queue_purge(name)
        return counted


def take(name: str, task: str) -> list[list]:
    """Remove ``task``'s messages waiting on ``name`` (the others stay); their arguments,
    oldest first, for the benchmark to run the task's body in-process."""
    import base64

    from console.celery import app

    taken = []
    with app.connection_for_write() as connection:
        client = connection.default_channel.client
        for raw in reversed(client.lrange(name, 0, -1)):  # pushed on the left: oldest last
            try:
                message = json.loads(raw)
            except ValueError:
                continue
            if (message.get("headers") or {}).get("task") != task:
                continue
            if client.lrem(name, 1, raw):
                taken.append(json.loads(base64.b64decode(message["body"]))[0])
    return taken


@contextmanager
def private_queue(task: str | None = PLANNING_TASK) -> Iterator[dict]:
    """This process's tasks go to a new private queue inside the block; it is purged on the
    way out and ``found["purged"]`` says how many of ``task``'s tasks it held."""
    name = new_queue_name()
    previous = use_queue(name)
    found = {"queue": name, "purged": 0}
    try:
        yield found
    finally:
        use_queue(previous)
        found["purged"] = purge(name, task)
