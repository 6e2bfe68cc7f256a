"""Moderation over REST, for operators (admin scope):

- ``GET /api/v1/moderation/cases/`` (``?status=open|dismissed|actioned``, ``?source=report|
  input|reply``): the queue, newest first; ``GET .../cases/{id}/``: one case with its
  context (the message and those around it);
- ``POST .../cases/{id}/act`` ``{"action", "reason", "hours"}``: ``dismiss``,
  ``hide_message``, ``suspend`` (``hours``), ``ban``, ``lift``, ``unlist_character``;
  audited; 422 ``moderation_action_invalid`` for one the case cannot take.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console import audit
from console.models import Scope
from console.serializers import RejectUnknownFields, validated
from console.viewsets import FilteredList, QueryFilters, TenantGenericViewSet

from . import selectors, services
from .models import Case, CaseSource, CaseStatus


class CaseSerializer(serializers.ModelSerializer):
    player = serializers.IntegerField(source="player_id", allow_null=True)
    reporter = serializers.IntegerField(source="reporter_id", allow_null=True)
    conversation = serializers.UUIDField(source="conversation_id", allow_null=True)
    character = serializers.UUIDField(source="character_id", allow_null=True)

    class Meta:
        model = Case
        fields = ["id", "source", "status", "category", "categories", "action", "reason",
                  "excerpt", "content_hash", "player", "reporter", "conversation", "message_id",
                  "character", "resolution", "resolved_at", "created_at"]  # fmt: skip
        read_only_fields = fields


class ContextMessageSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    role = serializers.CharField()
    content = serializers.CharField()
    hidden = serializers.BooleanField(source="archived")


class CaseDetailSerializer(CaseSerializer):
    context = serializers.SerializerMethodField()

    class Meta(CaseSerializer.Meta):
        fields = [*CaseSerializer.Meta.fields, "context"]
        read_only_fields = fields

    @extend_schema_field(ContextMessageSerializer(many=True))
    def get_context(self, case) -> list[dict]:
        return ContextMessageSerializer(selectors.context_of(case), many=True).data


class ListQuery(QueryFilters):
    status = serializers.ChoiceField(choices=CaseStatus.choices, required=False)
    source = serializers.ChoiceField(choices=CaseSource.choices, required=False)


class ActBody(RejectUnknownFields, serializers.Serializer):
    action = serializers.ChoiceField(choices=services.ACTIONS)
    reason = serializers.CharField(max_length=services.MAX_REASON, required=False, default="",
                                   allow_blank=True)  # fmt: skip
    hours = serializers.IntegerField(min_value=1, max_value=services.MAX_HOURS, required=False,
                                     allow_null=True, default=None)  # fmt: skip


class CaseViewSet(
    FilteredList, mixins.ListModelMixin, mixins.RetrieveModelMixin, TenantGenericViewSet
):
    """The moderation queue: players' reports and the policy's flags."""

    model = Case
    list_query = ListQuery
    serializer_class = CaseSerializer
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN,)

    def get_serializer_class(self):
        return CaseDetailSerializer if self.action == "retrieve" else CaseSerializer

    @extend_schema(parameters=[ListQuery])
    def list(self, request, *args, **kwargs):
        """The cases, newest first; filter by status and source."""
        return super().list(request, *args, **kwargs)

    @extend_schema(request=ActBody, responses=CaseSerializer)
    @action(detail=True, methods=["post"], url_path="act")
    def act(self, request, pk=None):
        """Act on the case (audited); the case is closed as dismissed or actioned."""
        case = self.get_object()
        body = validated(ActBody, request)
        done = services.act(case, body["action"], by=audit.actor(request.user), request=request,
                            reason=body["reason"], hours=body["hours"])  # fmt: skip
        return Response(CaseSerializer(done).data)
