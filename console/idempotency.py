"""Idempotency keys for create/import calls.

Same tenant + scope + key + same body replays the first response (with ``replayed: true``);
the same key with another body is a 409 ``idempotency_conflict``. The record is written in the
same transaction as the work, so a crash leaves neither; two racing calls with one key end
with one winner and the other replaying it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

from django.db import IntegrityError, transaction
from drf_spectacular.utils import OpenApiParameter
from rest_framework.response import Response

from console.errors import ApiError, conflict
from console.models import IdempotencyRecord
from console.storable import unstorable

MAX_KEY_LENGTH = 200

# How the header is documented on every operation that honours it.
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    str,
    OpenApiParameter.HEADER,
    required=False,
    description=(
        "Up to 200 characters. The same key with the same body replays the first response; "
        "with another body it is a 409 idempotency_conflict."
    ),
)


def request_fingerprint(payload) -> str:
    """SHA-256 of the body's canonical JSON text.

    The fingerprint is taken before validation, so it must not fail on any body the parser
    accepts: a lone UTF-16 surrogate (``"a\\ud800b"`` is valid JSON text) has no UTF-8
    form, and encoding it strictly was a 500 on every create sent with a key. It is encoded
    with ``surrogatepass`` (one-to-one, so two bodies still never share a fingerprint), and
    validation then refuses it as it refuses it without a key.
    """
    if isinstance(payload, bytes):
        return hashlib.sha256(payload).hexdigest()
    canonical = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


def _replay(record: IdempotencyRecord, fingerprint: str) -> Response:
    if record.request_hash != fingerprint:
        raise conflict(
            "idempotency_conflict",
            "this Idempotency-Key was already used with a different request body",
        )
    body = dict(record.response)
    if "replayed" in body:
        body["replayed"] = True
    return Response(body, status=record.status_code)


def run_idempotent(request, scope: str, payload, work: Callable[[], tuple[dict, int]]) -> Response:
    """Run ``work`` (returning body, status) once per Idempotency-Key."""
    key = request.headers.get("Idempotency-Key", "").strip()
    if not key:
        body, status = work()
        return Response(body, status=status)
    if len(key) > MAX_KEY_LENGTH:
        raise ApiError("invalid_idempotency_key", "Idempotency-Key is longer than 200 characters")
    problem = unstorable(key)  # a header is Latin-1 text: a NUL byte can be in it
    if problem:
        raise ApiError("invalid_idempotency_key", f"Idempotency-Key {problem}")
    tenant = request.tenant
    fingerprint = request_fingerprint(payload)
    existing = IdempotencyRecord.objects.filter(tenant=tenant, scope=scope, key=key).first()
    if existing is not None:
        return _replay(existing, fingerprint)
    try:
        with transaction.atomic():
            body, status = work()
            if status < 400:
                IdempotencyRecord.objects.create(
                    tenant=tenant,
                    scope=scope,
                    key=key,
                    request_hash=fingerprint,
                    status_code=status,
                    response=body,
                )
    except IntegrityError:
        existing = IdempotencyRecord.objects.filter(tenant=tenant, scope=scope, key=key).first()
        if existing is None:
            raise
        return _replay(existing, fingerprint)
    return Response(body, status=status)
