"""``console.task_send``: the message it pushes is the one Celery's own ``delay`` publishes
(same envelope, headers, properties and body), on the queue the app routes to, and an eager
app runs the task in place. A real worker executing such messages is covered by the Agent V2
background tests (the planning run is sent this way)."""

from __future__ import annotations

import base64
import json
import uuid

from console import task_send
from console.celery import app
from roleplay.tasks import run_planning


def _queued(queue: str) -> list[dict]:
    with app.connection_for_write() as connection:
        channel = connection.default_channel
        raw = channel.client.lrange(queue, 0, -1)
        channel.queue_purge(queue)
    return [json.loads(item) for item in raw]


def test_the_message_is_the_one_celery_publishes():
    queue = f"task-send-{uuid.uuid4().hex[:8]}"
    previous = app.conf.task_default_queue
    app.conf.task_default_queue = queue
    try:
        run_planning.delay("run-1")
        task_id = task_send.send(run_planning, "run-1")
    finally:
        app.conf.task_default_queue = previous
    ours, celerys = _queued(queue)  # LPUSH: the newest first
    assert ours["headers"]["id"] == task_id
    assert set(ours) == set(celerys)
    assert set(ours["headers"]) == set(celerys["headers"])
    assert set(ours["properties"]) == set(celerys["properties"])
    for key in ("task", "lang", "retries", "timelimit", "argsrepr", "kwargsrepr", "ignore_result"):
        assert ours["headers"][key] == celerys["headers"][key], key
    for key in ("content-type", "content-encoding"):
        assert ours[key] == celerys[key]
    assert ours["properties"]["delivery_info"] == celerys["properties"]["delivery_info"]
    assert ours["properties"]["body_encoding"] == celerys["properties"]["body_encoding"] == "base64"
    decode = lambda m: json.loads(base64.b64decode(m["body"]))  # noqa: E731
    assert decode(ours) == decode(celerys)


def test_an_eager_app_runs_the_task_in_place(monkeypatch):
    ran = []
    monkeypatch.setattr(run_planning, "run", lambda run_id: ran.append(run_id) or "skipped")
    app.conf.task_always_eager = True
    try:
        task_send.send(run_planning, "run-2")
    finally:
        app.conf.task_always_eager = False
    assert ran == ["run-2"]


def test_a_service_finds_a_task_by_its_name():
    from memory.tasks import deliver_job

    assert task_send.named("roleplay.run_planning") is run_planning
    assert task_send.named("memory.deliver_job") is deliver_job


def test_a_name_that_is_no_task_is_refused():
    import pytest

    for name in ("roleplay.no_such_task", "roleplay.turns", "memory.services"):
        with pytest.raises(LookupError):
            task_send.named(name)
