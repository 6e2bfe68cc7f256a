"""``/api/v1/players/{id}/memory/learn``, ``…/forget`` and ``…/list`` (seed 003's tool
names), and the player's learn/forget jobs (``…/memory/jobs``).

``learn`` and ``forget`` answer 202 with the job once it is durably admitted
(``memory.jobs``); a bad write is refused at once (422, or 404 for an entry that is not the
player's) and no job is made. ``list`` pages through the player's entries, newest change
first, with an opaque ``cursor``.
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime

from django.db.models import Q
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.owners import character_model, conversation_model
from console.scoping import is_uuid
from console.serializers import RejectUnknownFields, StrictCharField, optional_reference, validated
from memory import jobs
from memory.api.entries import EntrySerializer
from memory.entries import selectors as entries
from memory.errors import MemoryInvalid, MemoryNotFound
from memory.models import EntryKind, EntryScope, EntryStatus, MemoryJob

JOB = r"memory/jobs/(?P<job_id>[^/.]+)"
JOB_PARAM = OpenApiParameter("job_id", OpenApiTypes.UUID, OpenApiParameter.PATH)
MAX_LIST = 100
MAX_JOBS = 50


class LearnBody(RejectUnknownFields, serializers.Serializer):
    content = StrictCharField(max_length=20_000, trim_whitespace=False)
    kind = serializers.ChoiceField(choices=EntryKind.choices, default=EntryKind.FACT)
    scope = serializers.ChoiceField(choices=EntryScope.choices, default=EntryScope.SHARED)
    tags = serializers.ListField(
        child=StrictCharField(max_length=200), required=False, default=list, max_length=32
    )
    character = optional_reference(character_model)
    conversation = optional_reference(conversation_model)


class ForgetBody(RejectUnknownFields, serializers.Serializer):
    ids = serializers.ListField(
        child=serializers.UUIDField(), allow_empty=False, max_length=jobs.MAX_FORGET_IDS
    )


class ListBody(RejectUnknownFields, serializers.Serializer):
    kind = serializers.ChoiceField(choices=EntryKind.choices, required=False)
    scope = serializers.ChoiceField(choices=EntryScope.choices, required=False)
    status = serializers.ChoiceField(choices=EntryStatus.choices, default=EntryStatus.ACTIVE)
    character = serializers.UUIDField(required=False)
    conversation = serializers.UUIDField(required=False)
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIST, default=50)
    cursor = serializers.CharField(max_length=200, required=False)


class JobAction(RejectUnknownFields, serializers.Serializer):
    """No fields: the job in the path is the subject."""


class JobSerializer(serializers.ModelSerializer):
    player = serializers.IntegerField(source="player_id")

    class Meta:
        model = MemoryJob
        fields = [
            "id", "player", "kind", "status", "attempts", "error_code", "error", "result",
            "next_attempt_at", "created_at", "updated_at", "finished_at",
        ]  # fmt: skip


class JobListSerializer(serializers.Serializer):
    results = JobSerializer(many=True)


class EntryPageSerializer(serializers.Serializer):
    items = EntrySerializer(many=True)
    next_cursor = serializers.CharField(allow_null=True)


class MemoryJobActions:
    """Actions of the player viewset: learn, forget, list, and the player's jobs."""

    @extend_schema(request=LearnBody, responses={202: JobSerializer})
    @action(detail=True, methods=["post"], url_path="memory/learn")
    def memory_learn(self, request, pk=None):
        """Admit a new entry (checked and scrubbed now, added by a background job; an equal
        active entry is not added twice). 202 with the job."""
        player = self.get_object()
        body = validated(LearnBody, request)
        conversation = body["conversation"]
        if conversation is not None and conversation.player_id != player.pk:
            raise MemoryInvalid("conversation_not_players", "the conversation is another player's")
        job = jobs.admit_learn(
            request.tenant,
            player,
            content=body["content"],
            kind=body["kind"],
            scope=body["scope"],
            tags=body["tags"],
            character_id=str(body["character"].pk) if body["character"] else "",
            session_id=conversation.session_id if conversation else "",
        )
        return Response(JobSerializer(job).data, status=202)

    @extend_schema(request=ForgetBody, responses={202: JobSerializer})
    @action(detail=True, methods=["post"], url_path="memory/forget")
    def memory_forget(self, request, pk=None):
        """Admit the forgetting of the player's entries ``ids`` (any that is not the
        player's is a 404 and nothing is admitted). 202 with the job."""
        player = self.get_object()
        body = validated(ForgetBody, request)
        job = jobs.admit_forget(request.tenant, player, body["ids"])
        return Response(JobSerializer(job).data, status=202)

    @extend_schema(request=ListBody, responses=EntryPageSerializer)
    @action(detail=True, methods=["post"], url_path="memory/list")
    def memory_list(self, request, pk=None):
        """The player's entries (``status`` active unless named), newest change first, at
        most ``limit``; ``next_cursor`` continues the list, null at its end."""
        player = self.get_object()
        body = validated(ListBody, request)
        rows = entries.owner_entries(
            request.tenant,
            player,
            kind=body.get("kind"),
            scope=body.get("scope"),
            status=body["status"],
            character_id=str(body.get("character") or ""),
            session_id=str(body.get("conversation") or ""),
        )
        if "cursor" in body:
            updated_at, last_id = _read_cursor(body["cursor"])
            rows = rows.filter(
                Q(updated_at__lt=updated_at) | Q(updated_at=updated_at, id__gt=last_id)
            )
        page = list(rows[: body["limit"] + 1])
        more = len(page) > body["limit"]
        page = page[: body["limit"]]
        next_cursor = _cursor(page[-1]) if more else None
        return Response(
            {"items": EntrySerializer(page, many=True).data, "next_cursor": next_cursor}
        )

    @extend_schema(responses=JobListSerializer, operation_id="api_v1_players_memory_jobs_list")
    @action(detail=True, methods=["get"], url_path="memory/jobs")
    def memory_jobs(self, request, pk=None):
        """The player's newest 50 learn and forget jobs."""
        player = self.get_object()
        rows = MemoryJob.objects.filter(tenant=request.tenant, player=player)
        rows = rows.order_by("-created_at")[:MAX_JOBS]
        return Response({"results": JobSerializer(rows, many=True).data})

    def _job(self, request, job_id) -> MemoryJob:
        player = self.get_object()
        job = None
        if is_uuid(job_id):
            job = MemoryJob.objects.filter(tenant=request.tenant, player=player, pk=job_id).first()
        if job is None:
            raise MemoryNotFound("job_not_found", "no such memory job")
        return job

    @extend_schema(responses=JobSerializer, parameters=[JOB_PARAM])
    @action(detail=True, methods=["get"], url_path=JOB)
    def memory_job(self, request, pk=None, job_id=None):
        """One job: its status, attempts, last error and result."""
        return Response(JobSerializer(self._job(request, job_id)).data)

    @extend_schema(request=JobAction, responses=JobSerializer, parameters=[JOB_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{JOB}/retry")
    def memory_job_retry(self, request, pk=None, job_id=None):
        """A failed or cancelled job is queued again with a fresh budget of attempts (409
        otherwise)."""
        job = self._job(request, job_id)
        validated(JobAction, request)
        job = jobs.retry(request.tenant, job)
        return Response(JobSerializer(job).data)

    @extend_schema(request=JobAction, responses=JobSerializer, parameters=[JOB_PARAM])
    @action(detail=True, methods=["post"], url_path=f"{JOB}/cancel")
    def memory_job_cancel(self, request, pk=None, job_id=None):
        """A queued or failed job is not delivered (409 once it runs or is done)."""
        job = self._job(request, job_id)
        validated(JobAction, request)
        job = jobs.cancel(request.tenant, job)
        return Response(JobSerializer(job).data)


def _cursor(entry) -> str:
    raw = f"{entry.updated_at.isoformat()}|{entry.pk}".encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _read_cursor(cursor: str) -> tuple[datetime, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)).decode()
        stamp, _, last_id = raw.partition("|")
        updated_at = datetime.fromisoformat(stamp)
    except (binascii.Error, UnicodeDecodeError, ValueError):
        updated_at, last_id = None, ""
    if updated_at is None or updated_at.tzinfo is None or not is_uuid(last_id):
        raise MemoryInvalid("invalid_cursor", "the cursor is not one this list gave")
    return updated_at, last_id
