"""Our DIO speaks the seed's protocol (``002`` lines 1310–1318), so an outside RP
deployment, or our own external adapter, can use it (``docs/dio.md``):

- ``POST /v1/chat``: submit a player's instruction; 202 with the accepted identity
  (``engine.protocol.receipt_answer``); 409 ``dio_duplicate`` for a request id used already;
  404 for a conversation that is not the tenant's;
- ``GET /v1/director/tasks/by-request/{requestId}``: the task's status (404 when none);
- ``GET /v1/director/active-prompt?userId=&conversationId=&targetPromptId=``: the prompt
  in force (404 ``no_active_prompt`` when none, or DIO is off).

Authenticated with API tokens and tenant-scoped like every ``/api/v1`` route: the ``play``
scope (the player-facing side an integration's token carries) or ``admin``.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.models import Scope
from console.serializers import RejectUnknownFields, StrictCharField
from roleplay.dio import selectors, services
from roleplay.dio.engine.compiler import MAX_INSTRUCTION_CHARS
from roleplay.dio.engine.protocol import (
    MAX_ID_CHARS,
    MAX_LANGUAGE_CHARS,
    SubmissionInvalid,
    active_answer,
    parse_identity_query,
    parse_submission,
    receipt_answer,
    status_answer,
)
from roleplay.dio.errors import DioBadRequest, DioNotFound


def _id(**kwargs) -> StrictCharField:
    return StrictCharField(min_length=1, max_length=MAX_ID_CHARS, **kwargs)


class DioChatBody(RejectUnknownFields, serializers.Serializer):
    """The documented shape of a ``POST /v1/chat`` body; ``engine.protocol.parse_submission``
    is what reads it (one of rpConversationId / conversationId, one of instruction /
    message)."""

    userId = _id()  # noqa: N815
    rpConversationId = _id(required=False)  # noqa: N815
    conversationId = _id(required=False)  # noqa: N815
    targetPromptId = _id()  # noqa: N815
    instruction = StrictCharField(max_length=MAX_INSTRUCTION_CHARS, required=False)
    message = StrictCharField(max_length=MAX_INSTRUCTION_CHARS, required=False)
    requestId = _id()  # noqa: N815
    taskMessageId = _id(required=False)  # noqa: N815
    language = StrictCharField(max_length=MAX_LANGUAGE_CHARS, required=False, allow_blank=True)


NONE_IN_FORCE = OpenApiResponse(OpenApiTypes.OBJECT, description="None in the caller's tenant.")


def _invalid(exc: SubmissionInvalid) -> DioBadRequest:
    return DioBadRequest({exc.field: [exc.message]})


class DioChatView(BodyLimit, APIView):
    required_scope = Scope.PLAY

    @extend_schema(request=DioChatBody, responses={202: OpenApiTypes.OBJECT},
                   operation_id="dio_chat_submit")  # fmt: skip
    def post(self, request):
        """Submit a player's lasting instruction; compiled in the background."""
        try:
            submission = parse_submission(request.data)
        except SubmissionInvalid as exc:
            raise _invalid(exc) from None
        services.schedule(request.tenant.pk, submission)
        return Response(receipt_answer(submission), status=202)


class DioTaskView(BodyLimit, APIView):
    required_scope = Scope.PLAY

    @extend_schema(responses=OpenApiTypes.OBJECT, operation_id="dio_task_by_request")
    def get(self, request, request_id: str):
        """A submission's task: status, promptChanged, source version, SHA-256, error."""
        status = selectors.task_status(request.tenant.pk, request_id)
        if status is None:
            raise DioNotFound("not_found", "no task has this request id")
        return Response(status_answer(status))


class DioActivePromptView(BodyLimit, APIView):
    required_scope = Scope.PLAY

    @extend_schema(
        parameters=[
            OpenApiParameter(name, str, required=True)
            for name in ("userId", "conversationId", "targetPromptId")
        ],
        responses={200: OpenApiTypes.OBJECT, 404: NONE_IN_FORCE},
        operation_id="dio_active_prompt",
    )
    def get(self, request):
        """The compiled prompt in force for a player + conversation + target prompt."""
        try:
            identity = parse_identity_query(request.query_params)
        except SubmissionInvalid as exc:
            raise _invalid(exc) from None
        active = selectors.active_prompt(request.tenant.pk, identity)
        if active is None:
            raise DioNotFound("no_active_prompt", "no DIO prompt is in force")
        return Response(active_answer(active))
