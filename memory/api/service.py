"""``POST /v1/memory/prepare`` and ``POST /v1/memory/commit``: our own prepare/commit
memory service (seed 000's external memory runtime), behind an API token with the ``play``
scope (the seed's service trusted whoever reached it). The runtime's claims service does
the work (asked through ``memory.runtime``); a conversation or claim of another tenant is a
404 like a missing one.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.models import Scope
from console.owners import conversation_model
from console.scoping import is_uuid
from console.serializers import RejectUnknownFields, StrictCharField, validated
from memory.engine import claims
from memory.errors import MemoryNotFound
from memory.runtime import runtime


def _text(**kwargs) -> StrictCharField:
    return StrictCharField(
        max_length=claims.MAX_TEXT_CHARS, allow_blank=True, trim_whitespace=False, **kwargs
    )


class ChatMessage(RejectUnknownFields, serializers.Serializer):
    role = serializers.ChoiceField(choices=["system", "user", "assistant"])
    content = _text()


class PrepareBody(RejectUnknownFields, serializers.Serializer):
    conversation_id = StrictCharField(max_length=64)
    system = _text(required=False, help_text="the rendered character system message")
    messages = serializers.ListField(
        child=ChatMessage(), allow_empty=False, max_length=claims.MAX_MESSAGES
    )
    request_id = StrictCharField(max_length=200, required=False, allow_blank=True)
    scene_id = StrictCharField(max_length=200, required=False, allow_blank=True)
    model_config_id = StrictCharField(max_length=200, required=False, allow_blank=True)
    prompt_id = StrictCharField(max_length=200, required=False, allow_blank=True)


class PrepareAnswer(serializers.Serializer):
    claim_id = serializers.UUIDField()
    memory = serializers.CharField()
    turn = serializers.IntegerField()
    state_through_round = serializers.IntegerField()


class CommitBody(RejectUnknownFields, serializers.Serializer):
    claim_id = StrictCharField(max_length=100)
    user = _text()
    assistant = _text()


class CommitAnswer(serializers.Serializer):
    committed = serializers.BooleanField()


class PrepareView(BodyLimit, APIView):
    required_scope = Scope.PLAY

    @extend_schema(request=PrepareBody, responses=PrepareAnswer, operation_id="memory_prepare")
    def post(self, request):
        """Prepare a turn's memory: a claim, the memory text, the turn, the rounds held."""
        body = validated(PrepareBody, request)
        conversation = None
        if is_uuid(body["conversation_id"]):
            conversation = (
                conversation_model()
                .objects.filter(tenant=request.tenant, pk=body["conversation_id"])
                .select_related("tenant")
                .first()
            )
        if conversation is None:
            raise MemoryNotFound("conversation_not_found", "no such conversation")
        answer = runtime().prepare(
            request.tenant,
            conversation,
            messages=body["messages"],
            ids={name: body.get(name, "") for name in claims.SOURCE_IDS},
        )
        return Response(answer)


class CommitView(BodyLimit, APIView):
    required_scope = Scope.PLAY

    @extend_schema(request=CommitBody, responses=CommitAnswer, operation_id="memory_commit")
    def post(self, request):
        """Commit the round a claim was prepared for; repeating it answers the same."""
        body = validated(CommitBody, request)
        answer = runtime().commit(
            request.tenant, body["claim_id"], user=body["user"], assistant=body["assistant"]
        )
        return Response(answer)
