"""A conversation's DIO through the REST API (``docs/dio.md``):

- ``POST /api/v1/conversations/{id}/dio/`` ``{instruction, requestId?, targetPromptId?,
  language?}``: submit a lasting instruction (an operator's or an integration's); 202 with
  the seed's receipt ``{accepted, dioConversationId, requestId, taskMessageId,
  appliesFrom}``; 409 ``dio_duplicate`` for a request id used already;
- ``GET .../dio/versions/?targetPromptId=``: the versions (newest first), the current
  version number, the original prompt and the recent tasks;
- ``POST .../dio/revert/`` ``{version, expectedVersion}``: version ``version`` in force
  again; ``POST .../dio/off/`` ``{expectedVersion}``: no DIO prompt in force. Each is a new
  version by compare-and-set (409 ``version_conflict`` on a stale ``expectedVersion``).

The identity is the conversation's player (external id), the conversation and the target
prompt (default: the character's id). Submitting takes the ``play`` scope, revert and off
``content``, reads any.
"""

from __future__ import annotations

import uuid

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from console.models import Scope
from console.serializers import RejectUnknownFields, StrictCharField, validated
from console.viewsets import TenantGenericViewSet
from roleplay.dio import selectors, services
from roleplay.dio.engine.compiler import MAX_INSTRUCTION_CHARS
from roleplay.dio.engine.ports import Receipt, dio_conversation_id
from roleplay.dio.engine.protocol import MAX_ID_CHARS, MAX_LANGUAGE_CHARS, Submission
from roleplay.dio.identity import identity_for
from roleplay.models import Conversation

MAX_VERSION = 2**31 - 1


class DioSubmitBody(RejectUnknownFields, serializers.Serializer):
    instruction = StrictCharField(max_length=MAX_INSTRUCTION_CHARS)
    requestId = StrictCharField(max_length=MAX_ID_CHARS, required=False)  # noqa: N815
    targetPromptId = StrictCharField(max_length=MAX_ID_CHARS, required=False)  # noqa: N815
    language = StrictCharField(max_length=MAX_LANGUAGE_CHARS, required=False, allow_blank=True)


class DioReceiptAnswer(serializers.Serializer):
    accepted = serializers.BooleanField()
    dioConversationId = serializers.CharField()  # noqa: N815
    requestId = serializers.CharField()  # noqa: N815
    taskMessageId = serializers.CharField()  # noqa: N815
    appliesFrom = serializers.CharField()  # noqa: N815


class DioRevertBody(RejectUnknownFields, serializers.Serializer):
    version = serializers.IntegerField(min_value=1, max_value=MAX_VERSION)
    expectedVersion = serializers.IntegerField(min_value=0, max_value=MAX_VERSION)  # noqa: N815
    targetPromptId = StrictCharField(max_length=MAX_ID_CHARS, required=False)  # noqa: N815


class DioOffBody(RejectUnknownFields, serializers.Serializer):
    expectedVersion = serializers.IntegerField(min_value=0, max_value=MAX_VERSION)  # noqa: N815
    targetPromptId = StrictCharField(max_length=MAX_ID_CHARS, required=False)  # noqa: N815


class DioVersionAnswer(serializers.Serializer):
    id = serializers.UUIDField()
    version = serializers.IntegerField()
    kind = serializers.CharField()
    compiledPrompt = serializers.CharField(source="compiled_prompt")  # noqa: N815
    sha256 = serializers.CharField()
    changeset = serializers.JSONField()
    instructions = serializers.JSONField()
    sourceVersionId = serializers.UUIDField(source="source_version_id", allow_null=True)  # noqa: N815
    requestId = serializers.CharField(source="request_id")  # noqa: N815
    createdBy = serializers.CharField(source="created_by")  # noqa: N815
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815


class DioTaskAnswer(serializers.Serializer):
    requestId = serializers.CharField(source="request_id")  # noqa: N815
    status = serializers.CharField()
    promptChanged = serializers.BooleanField(source="prompt_changed")  # noqa: N815
    instruction = serializers.CharField()
    errorCode = serializers.CharField(source="error_code")  # noqa: N815
    createdAt = serializers.DateTimeField(source="created_at")  # noqa: N815


class DioVersionsAnswer(serializers.Serializer):
    currentVersion = serializers.IntegerField()  # noqa: N815
    active = serializers.BooleanField()
    originalPrompt = serializers.CharField()  # noqa: N815
    versions = DioVersionAnswer(many=True)
    tasks = DioTaskAnswer(many=True)


def _target(value) -> str | None:
    return value if isinstance(value, str) and value else None


class _ConversationDio(TenantGenericViewSet):
    model = Conversation
    read_scopes = (Scope.ADMIN, Scope.CONTENT, Scope.PLAY)

    def get_queryset(self):
        return super().get_queryset().select_related("player", "character")


class DioSubmitViewSet(_ConversationDio):
    """Submitting: the ``play`` scope (an integration acting for its player)."""

    required_scope = Scope.PLAY
    serializer_class = DioReceiptAnswer

    @extend_schema(request=DioSubmitBody, responses={202: DioReceiptAnswer})
    def submit(self, request, pk=None):
        """Submit a lasting instruction for the conversation's character."""
        conversation = self.get_object()
        body = validated(DioSubmitBody, request)
        identity = identity_for(conversation, _target(body.get("targetPromptId")))
        request_id = body.get("requestId") or f"api-{uuid.uuid4()}:dio"
        submission = Submission(identity, request_id, f"{request_id}:assistant",
                                body["instruction"], body.get("language", ""))  # fmt: skip
        services.schedule(request.tenant.pk, submission)
        receipt = Receipt(dio_conversation_id(str(conversation.pk)), request_id,
                          submission.task_message_id)  # fmt: skip
        return Response(receipt.as_json(), status=202)


class DioViewSet(_ConversationDio):
    """The versions, revert and off: an operator's (``content``)."""

    required_scope = Scope.CONTENT
    serializer_class = DioVersionsAnswer

    def _answer(self, conversation, target: str | None) -> Response:
        identity = identity_for(conversation, target)
        rows = selectors.versions(conversation.tenant_id, identity)
        data = {
            "currentVersion": rows[0].version if rows else 0,
            "active": selectors.as_active(rows[0] if rows else None) is not None,
            "originalPrompt": selectors.original_prompt(conversation),
            "versions": rows,
            "tasks": selectors.recent_tasks(conversation),
        }
        return Response(DioVersionsAnswer(data).data)

    @extend_schema(responses=DioVersionsAnswer)
    def versions(self, request, pk=None):
        """The DIO prompt's versions, newest first, and the recent tasks."""
        return self._answer(self.get_object(), _target(request.query_params.get("targetPromptId")))

    @extend_schema(request=DioRevertBody, responses=DioVersionsAnswer)
    def revert(self, request, pk=None):
        """An earlier version in force again (a new version; compare-and-set)."""
        conversation = self.get_object()
        body = validated(DioRevertBody, request)
        target = _target(body.get("targetPromptId"))
        services.revert(
            conversation, identity_for(conversation, target), to=body["version"],
            expected=body["expectedVersion"], by=_who(request), request=request,
            user=getattr(request.user, "user", None),
        )  # fmt: skip
        return self._answer(conversation, target)

    @extend_schema(request=DioOffBody, responses=DioVersionsAnswer)
    def off(self, request, pk=None):
        """No DIO prompt in force (a new ``off`` version; compare-and-set)."""
        conversation = self.get_object()
        body = validated(DioOffBody, request)
        target = _target(body.get("targetPromptId"))
        services.switch_off(
            conversation, identity_for(conversation, target),
            expected=body["expectedVersion"], by=_who(request), request=request,
            user=getattr(request.user, "user", None),
        )  # fmt: skip
        return self._answer(conversation, target)


def _who(request) -> str:
    principal = request.user
    user = getattr(principal, "user", None)
    if user is not None:
        return f"user:{user.get_username()}"
    token = getattr(principal, "token", None)
    return f"token:{token.name}" if token is not None else "api"
