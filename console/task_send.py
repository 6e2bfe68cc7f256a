"""Sending a task on the hot path with one Redis command.

``task.delay()`` costs about 2 ms of CPU in the web process (Celery builds the message
through its routing, configuration and producer layers, and kombu makes a Redis client per
message), and its several round trips hand the GIL back and forth with the event loop. A
turn that must enqueue beside a streaming reply (the planning run) uses :func:`send`
instead: the same message Celery's ``apply_async`` would publish (task protocol 2, JSON,
kombu's Redis envelope), built here and pushed with one ``LPUSH`` onto the queue the app
would route it to. Workers see no difference. Tasks with options (countdown, eta, priority,
results) keep ``apply_async``.
"""

from __future__ import annotations

import base64
import importlib
import json
import os
import socket
import uuid
from collections.abc import Callable
from functools import cache
from typing import Any

from console.redis_sync import client

_ORIGIN = f"gen{os.getpid()}@{socket.gethostname()}"
SEND_TIMEOUT_S = 5.0


def message(task_name: str, args: list, queue: str, task_id: str | None = None) -> bytes:
    """The bytes kombu's Redis transport would push for ``task_name(*args)`` on ``queue``."""
    task_id = task_id or str(uuid.uuid4())
    body = json.dumps(
        [args, {}, {"callbacks": None, "errbacks": None, "chain": None, "chord": None}]
    )
    envelope = {
        "body": base64.b64encode(body.encode()).decode(),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": {
            "lang": "py",
            "task": task_name,
            "id": task_id,
            "shadow": None,
            "eta": None,
            "expires": None,
            "group": None,
            "group_index": None,
            "retries": 0,
            "timelimit": [None, None],
            "root_id": task_id,
            "parent_id": None,
            "argsrepr": repr(tuple(args)),
            "kwargsrepr": "{}",
            "origin": _ORIGIN,
            "ignore_result": True,
            "replaced_task_nesting": 0,
            "stamped_headers": None,
            "stamps": {},
        },
        "properties": {
            "correlation_id": task_id,
            "reply_to": "",
            "delivery_mode": 2,
            "delivery_info": {"exchange": "", "routing_key": queue},
            "priority": 0,
            "body_encoding": "base64",
            "delivery_tag": str(uuid.uuid4()),
        },
    }
    return json.dumps(envelope).encode()


@cache
def _queue(task_name: str, router, default_queue: str) -> str:
    """The queue ``router`` sends ``task_name`` to (the app's routes are static: they name
    no function of the arguments), remembered per router and default queue (a benchmark
    changes the one, a test the other)."""
    return router.route({}, task_name, (), {})["queue"].name


def named(task_name: str):
    """The Celery task called ``task_name``, an ``"<app>.<function>"`` defined in
    ``<app>/tasks.py``: the port through which a service enqueues work. Tasks call services,
    never the reverse; a service names the task it sends instead of importing the tasks
    module, so the two never import each other."""
    app_name, _, function = task_name.partition(".")
    task = getattr(importlib.import_module(f"{app_name}.tasks"), function, None)
    if task is None or getattr(task, "name", None) != task_name:
        raise LookupError(f"no task named {task_name!r} in {app_name}.tasks")
    return task


def send(task, *args, before: Callable[[Any], None] | None = None) -> str:
    """Queue ``task(*args)`` (an ``ignore_result`` task) where ``task.delay`` would (run it
    here when the app is eager); its id. ``before(pipeline)`` adds Redis commands of the
    caller's that go first, in the same round trip."""
    from console.celery import app

    if app.conf.task_always_eager:
        if before is not None:
            pipeline = client(SEND_TIMEOUT_S).pipeline(transaction=False)
            before(pipeline)
            pipeline.execute()
        return task.apply(args).id
    queue = _queue(task.name, app.amqp.router, app.conf.task_default_queue)
    task_id = str(uuid.uuid4())
    payload = message(task.name, list(args), queue, task_id)
    if before is None:
        client(SEND_TIMEOUT_S).lpush(queue, payload)
        return task_id
    pipeline = client(SEND_TIMEOUT_S).pipeline(transaction=False)
    before(pipeline)
    pipeline.lpush(queue, payload)
    pipeline.execute()
    return task_id
