"""Turns waiting for the recall index, kept in a Redis list beside their tasks, so that one
task indexes the turns waiting with its own: a worker with a backlog embeds and inserts many
turns' messages at once (one model call, one ``INSERT``) instead of two at a time.

Each turn still sends its own ``memory.index_messages`` task, with its job as the task's
arguments, and :func:`add` s that job to the list in the same round trip to Redis. A task
:func:`take` s up to :data:`TAKE` waiting jobs with its own. Nothing is lost if a worker
dies holding jobs it took: each job's own task is still queued (or redelivered), and
indexing is idempotent, so a job indexed in another task's batch costs its own task a lookup
and no embedding. The list is bounded (:data:`MAX_WAITING`, the oldest dropped: their tasks
still come) and named after the database, so deployments (and test databases) sharing a
Redis never mix.
"""

from __future__ import annotations

import json
import logging
import uuid

from django.db import connection

from console.redis_sync import client

TAKE = 31  # waiting jobs a task takes with its own
MAX_WAITING = 10_000
TIMEOUT_S = 2.0
JOB_FIELDS = 6  # tenant, session, player, character, conversation, message ids

logger = logging.getLogger(__name__)


def _key() -> str:
    return f"recall:pending:{connection.settings_dict['NAME']}"


def add(job: list, pipeline) -> None:
    """Keep ``job`` (the task's arguments) for the next task to take: commands added to
    the caller's Redis ``pipeline`` (the one that sends the job's own task, so both go in
    one round trip)."""
    key = _key()
    pipeline.rpush(key, json.dumps(job, separators=(",", ":")))
    pipeline.ltrim(key, -MAX_WAITING, -1)


def take(limit: int = TAKE) -> list[list]:
    """Up to ``limit`` waiting jobs, oldest first (none when Redis is away; an entry that
    is not a well-formed job is dropped, so it can never fail the task that took it)."""
    try:
        raw = client(TIMEOUT_S).lpop(_key(), limit) or []
    except Exception:
        logger.warning("could not take waiting recall jobs", exc_info=True)
        return []
    jobs = []
    for entry in raw:
        try:
            job = json.loads(entry)
        except ValueError:
            continue
        if _well_formed(job):
            jobs.append(job)
    return jobs


def _well_formed(job) -> bool:
    """A job as the turn's hook writes it: six fields, the tenant and the messages UUIDs."""
    if not (isinstance(job, list) and len(job) == JOB_FIELDS and isinstance(job[5], list)):
        return False
    try:
        for value in (job[0], *job[5]):
            uuid.UUID(str(value))
    except ValueError:
        return False
    return all(isinstance(value, str | int) for value in job[1:5])
