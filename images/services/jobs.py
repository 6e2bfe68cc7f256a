"""The standalone asset tool: ``POST /api/v1/images/generations``.

Billing is not idempotent (the seed's ``replay: "never"``), so a request is written as a
*submitted* job, committed, before the backend is called, and is never sent again: a
timeout or incomplete evidence is reported as ``unknown``, and the same ``Idempotency-Key``
answers the first job's result (even while it is still running, or after it failed). The
key is recorded with the job *before* the call, unlike ``console.idempotency``'s record
written after the work, so a crash mid-call cannot let a retry pay twice.
"""

from __future__ import annotations

from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from images import files, selectors, signing
from images.engine.evidence import COMPLETED
from images.engine.request import parse_asset_request
from images.errors import BadGateway, Conflict, ImagesError
from images.models import ImageJob, JobStatus
from images.providers import Ask, BackendTimeout
from images.services.drawing import Drawn, draw


def generate_assets(tenant, body: Any, *, key: str | None = None, fingerprint: str = "") -> dict:
    """Validate, submit once, judge, store what may be shown; the response body. A replay of
    ``key`` (same ``fingerprint``) answers the first job; another body is a 409."""
    request = parse_asset_request(body)
    config = selectors.get_image_config(tenant, request.image_config)
    if key:
        earlier = ImageJob.objects.filter(tenant=tenant, idempotency_key=key).first()
        if earlier is not None:
            return replay(earlier, fingerprint)
    ask = Ask(
        prompt=request.prompt,
        count=request.count or config.default_count,
        width=request.width or config.default_width,
        height=request.height or config.default_height,
        reference_images=request.reference_images,
    )
    try:
        with transaction.atomic():
            job = ImageJob.objects.create(
                tenant=tenant, config=config, request=body, status=JobStatus.SUBMITTED,
                idempotency_key=key or None, request_hash=fingerprint,
            )  # fmt: skip
    except IntegrityError:  # a concurrent request with the same key won
        return replay(ImageJob.objects.get(tenant=tenant, idempotency_key=key), fingerprint)
    _run(job, config, ask)
    if job.status == JobStatus.FAILED:
        raise _failure(job)
    return job_body(job, replayed=False)


def _run(job: ImageJob, config, ask: Ask) -> None:
    try:
        drawn = draw(config, ask)
    except BackendTimeout as exc:
        _finish(job, JobStatus.UNKNOWN, exc.code, {"moderation_status": "unknown"})
        return
    except ImagesError as exc:
        _finish(job, JobStatus.FAILED, exc.code, {"error": exc.to_dict()})
        return
    _finish(job, *_stored(job, drawn))


def _stored(job: ImageJob, drawn: Drawn) -> tuple[str, str, dict]:
    items, kept = [], []
    for index, image in enumerate(drawn.images):
        entry: dict[str, Any] = {"index": index, "code": image.code, "file": ""}
        entry["outcome"] = image.verdict.outcome if image.verdict else "refused"
        entry["evidence"] = image.evidence_item
        if image.shown and image.info is not None and image.data is not None:
            entry["file"], _ = files.store(job.tenant_id, "assets", image.data, image.info,
                                           thumbnail=False)  # fmt: skip
            kept.append(entry["file"])
        items.append(entry)
    job.files = kept
    complete = drawn.complete
    status = drawn.status if complete else "unknown"
    result = {"moderation_status": status, "items": items}
    return (JobStatus.COMPLETED if complete else JobStatus.UNKNOWN), "", result


def _finish(job: ImageJob, status: str, code: str, result: dict) -> None:
    job.status, job.code, job.result = status, code, result
    job.finished_at = timezone.now()
    updated = ImageJob.objects.filter(pk=job.pk, status=JobStatus.SUBMITTED).update(
        status=status, code=code, result=result, files=job.files, finished_at=job.finished_at
    )
    if not updated:  # cannot happen but by a hand edit: the files would be orphans
        files.delete(job.files)


def replay(job: ImageJob, fingerprint: str) -> dict:
    if job.request_hash != fingerprint:
        raise Conflict(
            "idempotency_conflict",
            "this Idempotency-Key was already used with a different request body",
        )
    if job.status == JobStatus.FAILED:
        raise _failure(job)
    return job_body(job, replayed=True)


def _failure(job: ImageJob) -> BadGateway:
    """The 502 of a job the backend refused (the same on every replay)."""
    error = (job.result or {}).get("error") or {}
    message = error.get("message") or "the image backend failed"
    return BadGateway(job.code or "backend_error", message, {"task_id": str(job.pk)})


def job_body(job: ImageJob, *, replayed: bool) -> dict:
    """The seed's answer: ``{moderation_status, jobs: [{task_id, image_urls,
    moderation[]}]}``, with fresh signed links to the kept images (one moderation item per
    link), the images withheld and why, and whether this is a replay."""
    result = job.result or {}
    urls, moderation, withheld = [], [], []
    for item in result.get("items", []):
        if item.get("file"):
            url = signing.url_for(job.tenant_id, item["file"])
            urls.append(url)
            moderation.append(_moderation_item(url, item))
        else:
            withheld.append({"index": item["index"], "outcome": item["outcome"],
                             "code": item.get("code") or ""})  # fmt: skip
    status = result.get("moderation_status") or "unknown"
    if job.status == JobStatus.SUBMITTED:
        status = "unknown"  # still running (or its process died): never sent again
    return {
        "moderation_status": status,
        "jobs": [{"task_id": str(job.pk), "status": job.status, "image_urls": urls,
                  "moderation": moderation, "withheld": withheld, "code": job.code}],
        "replayed": replayed,
    }  # fmt: skip


def _moderation_item(url: str, item: dict) -> dict:
    evidence = item.get("evidence") or {}
    if item.get("outcome") == "unmoderated":
        return {"asset_url": url, "status": "UNMODERATED", "classification": None,
                "blocked": False}  # fmt: skip
    return {
        "asset_url": url,
        "status": COMPLETED,
        "classification": evidence.get("classification"),
        "blocked": False,
    }
