"""``learn`` and ``forget`` as durable jobs (seed 003's outbox).

- :func:`admit_learn` / :func:`admit_forget` check the write now (a bad one is refused at
  once, with its 4xx code), then record a :class:`MemoryJob` holding the scrubbed,
  validated write and its scope; the Celery task is sent when that row commits. The
  caller's acknowledgement (202) is this durable local admission, not the delivery.
- :func:`deliver` (the task) claims a queued job and runs its write, each attempt within
  :data:`ATTEMPT_TIMEOUT_S` (a statement timeout) and the run within
  :data:`RUN_BUDGET_S` (the task's time limit). A transient failure (the database, a lock
  wait, a timeout) sends the job again after a backoff, at most :data:`MAX_ATTEMPTS`
  attempts in all; a refusal of the write itself (the memory is full) fails it at once.
- A learn equal to an active entry of the same owner (the same scrubbed text) adds no row:
  the job's result names the entry it found. A forget deletes the entries still there, so
  a second delivery does nothing more.
- :func:`requeue_stalled` (every minute) sends again the jobs whose task was lost;
  :func:`retry` and :func:`cancel` are the operator's.
"""

from __future__ import annotations

import logging
import uuid
from datetime import timedelta

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone

from console import task_send
from console.failures import DomainError
from memory.engine.entries import check_fields, content_hash
from memory.entries import services as entry_writes
from memory.errors import MemoryConflict, MemoryNotFound
from memory.models import EntryOrigin, EntryStatus, JobKind, JobStatus, MemoryEntry, MemoryJob

logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 8
ATTEMPT_TIMEOUT_S = 15
RUN_BUDGET_S = 30
MAX_FORGET_IDS = 100
BACKOFF_S = (1, 2, 5, 10, 30, 60, 120)  # before attempt 2, 3, …
STALLED_QUEUED = timedelta(minutes=2)
STALLED_RUNNING = timedelta(seconds=RUN_BUDGET_S * 4)


def admit_learn(
    tenant,
    player,
    *,
    content,
    kind: str = "fact",
    scope: str = "shared",
    character_id: str = "",
    session_id: str = "",
    tags=(),
) -> MemoryJob:
    """Admit a learn: the entry it will add is checked and scrubbed now."""
    tags = check_fields(
        kind=kind,
        scope=scope,
        category_key="",
        tags=tuple(tags),
        character_id=character_id,
        session_id=session_id,
    )
    payload = {
        "kind": kind,
        "scope": scope,
        "content": entry_writes.clean_content(kind, content),
        "tags": entry_writes.clean_tags(tuple(tags)),
        "character_id": character_id,
        "session_id": session_id,
    }
    return _admit(tenant, player, JobKind.LEARN, payload)


def admit_forget(tenant, player, entry_ids) -> MemoryJob:
    """Admit a forget of the player's entries; an id that is not one of them is a 404."""
    ids = list(dict.fromkeys(str(i) for i in entry_ids))
    found = set(
        str(pk)
        for pk in MemoryEntry.objects.filter(tenant=tenant, player=player, pk__in=ids).values_list(
            "pk", flat=True
        )
    )
    missing = [i for i in ids if i not in found]
    if missing:
        raise MemoryNotFound(message="no such memory entry", details={"ids": missing})
    return _admit(tenant, player, JobKind.FORGET, {"ids": ids})


def _admit(tenant, player, kind: str, payload: dict) -> MemoryJob:
    with transaction.atomic():
        job = MemoryJob.objects.create(tenant=tenant, player=player, kind=kind, payload=payload)
        transaction.on_commit(lambda: send(job.pk))
    return job


def send(job_id, countdown: float = 0) -> None:
    """Send the job's task; with the broker away the job stays queued, admitted, and the
    minute's sweep (:func:`requeue_stalled`) sends it later."""
    try:
        task_send.named("memory.deliver_job").apply_async((str(job_id),), countdown=countdown)
    except Exception:
        logger.warning("could not send memory job %s; the sweep will", job_id, exc_info=True)


def deliver(job_id: str) -> str:
    """One delivery of a job (the task's body); the job's status afterwards, or
    ``skipped`` when it is not queued (done, cancelled, or another run holds it)."""
    claim = uuid.uuid4()
    claimed = MemoryJob.objects.filter(pk=job_id, status=JobStatus.QUEUED).update(
        status=JobStatus.RUNNING,
        claim=claim,
        attempts=F("attempts") + 1,  # counted now: a worker that dies has used it
        updated_at=timezone.now(),
        next_attempt_at=None,
    )
    if not claimed:
        return "skipped"
    job = MemoryJob.objects.select_related("tenant", "player").get(pk=job_id)
    try:
        with transaction.atomic():
            with connection.cursor() as cursor:
                cursor.execute(f"SET LOCAL statement_timeout = {ATTEMPT_TIMEOUT_S * 1000}")
            result = _run(job)
    except DomainError as exc:  # the write itself is refused: no attempt will do better
        return _close(job, claim, JobStatus.FAILED, code=exc.code, error=exc.message)
    except Exception:  # the database, a timeout, the run's time limit: try again later
        logger.warning("memory job %s: attempt %s failed", job.pk, job.attempts, exc_info=True)
        if job.attempts >= MAX_ATTEMPTS:
            return _close(
                job, claim, JobStatus.FAILED, code="delivery_exhausted",
                error=f"{MAX_ATTEMPTS} attempts failed",
            )  # fmt: skip
        return _requeue(job, claim)
    return _close(job, claim, JobStatus.DONE, result=result)


def _run(job: MemoryJob) -> dict:
    data = job.payload
    if job.kind == JobKind.FORGET:
        return {"forgotten": entry_writes.forget_entries(job.tenant, job.player, data["ids"])}
    same = MemoryEntry.objects.filter(
        tenant=job.tenant,
        player=job.player,
        status=EntryStatus.ACTIVE,
        content_hash=content_hash(data["content"]),
        character_id=data["character_id"],
        session_id=data["session_id"],
    ).first()
    if same is not None:
        return {"entry_id": str(same.pk), "deduplicated": True}
    entry = entry_writes.add_entry(
        job.tenant,
        job.player,
        kind=data["kind"],
        scope=data["scope"],
        content=data["content"],
        tags=tuple(data["tags"]),
        character_id=data["character_id"],
        session_id=data["session_id"],
        origin=EntryOrigin.TOOL,
    )
    return {"entry_id": str(entry.pk), "deduplicated": False}


def _close(job, claim, status, *, result=None, code="", error="") -> str:
    """Finish the run that holds the claim (a run that lost it changes nothing)."""
    MemoryJob.objects.filter(pk=job.pk, claim=claim).update(
        status=status,
        result=result or {},
        error_code=code,
        error=error[:500],
        finished_at=timezone.now(),
        updated_at=timezone.now(),
    )
    return status


def _requeue(job, claim) -> str:
    delay = BACKOFF_S[min(job.attempts - 1, len(BACKOFF_S) - 1)]
    updated = MemoryJob.objects.filter(pk=job.pk, claim=claim).update(
        status=JobStatus.QUEUED,
        error_code="transient",
        error="the attempt failed; it will be tried again",
        next_attempt_at=timezone.now() + timedelta(seconds=delay),
        updated_at=timezone.now(),
    )
    if updated:
        send(job.pk, countdown=delay)
    return JobStatus.QUEUED


def retry(tenant, job: MemoryJob) -> MemoryJob:
    """A failed or cancelled job goes back to the queue with a fresh budget of attempts."""
    rows = MemoryJob.objects.filter(
        tenant=tenant, pk=job.pk, status__in=(JobStatus.FAILED, JobStatus.CANCELLED)
    )
    if not rows.update(
        status=JobStatus.QUEUED, attempts=0, error_code="", error="", finished_at=None,
        claim=None, updated_at=timezone.now(),
    ):  # fmt: skip
        raise MemoryConflict("invalid_state", "only a failed or cancelled job can be retried")
    transaction.on_commit(lambda: send(job.pk))
    return MemoryJob.objects.get(pk=job.pk)


def cancel(tenant, job: MemoryJob) -> MemoryJob:
    """A job waiting (or failed) is not delivered; one running or done cannot be undone."""
    rows = MemoryJob.objects.filter(
        tenant=tenant, pk=job.pk, status__in=(JobStatus.QUEUED, JobStatus.FAILED)
    )
    if not rows.update(
        status=JobStatus.CANCELLED, finished_at=timezone.now(), updated_at=timezone.now()
    ):
        raise MemoryConflict("invalid_state", "only a queued or failed job can be cancelled")
    return MemoryJob.objects.get(pk=job.pk)


def requeue_stalled() -> int:
    """Send again the jobs whose task was lost: queued and due for a while, or running
    long past a run's budget (its worker died; the attempt counts)."""
    now = timezone.now()
    dead = MemoryJob.objects.filter(status=JobStatus.RUNNING, updated_at__lt=now - STALLED_RUNNING)
    dead.filter(attempts__gte=MAX_ATTEMPTS).update(
        status=JobStatus.FAILED, claim=None, error_code="delivery_exhausted",
        error=f"{MAX_ATTEMPTS} attempts did not finish", finished_at=now, updated_at=now,
    )  # fmt: skip
    dead.update(status=JobStatus.QUEUED, claim=None, updated_at=now)
    due = list(
        MemoryJob.objects.filter(status=JobStatus.QUEUED, updated_at__lt=now - STALLED_QUEUED)
        .exclude(next_attempt_at__gt=now)
        .values_list("pk", flat=True)[:500]
    )
    for pk in due:
        send(pk)
    return len(due)
