"""A conversation's visual world through the REST API (``frontloop.world``):

- ``GET /api/v1/conversations/{id}/visual-world/``: the revision and state in force, with
  the newest revisions (who wrote each: a turn, an operator, a restore);
- ``PUT`` the same path ``{revision, state}``: an operator's edit over ``revision`` (409
  ``revision_conflict`` when it moved; 422 naming a bad field);
- ``POST .../visual-world/restore`` ``{revision, to}``: revision ``to``'s state in force again.

Reads take the conversations' scopes; writes are an operator's (admin scope).
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response

from console.models import Scope
from console.serializers import RejectUnknownFields, validated
from console.viewsets import TenantGenericViewSet
from roleplay.frontloop import world
from roleplay.models import Conversation

MAX_REVISION = 2**31 - 1


class VisualWorldRevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    source = serializers.CharField()
    turn_id = serializers.UUIDField(allow_null=True)
    created_at = serializers.DateTimeField()
    state = serializers.JSONField()


class VisualWorldSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    state = serializers.JSONField()
    revisions = VisualWorldRevisionSerializer(many=True, required=False)


class VisualWorldEdit(RejectUnknownFields, serializers.Serializer):
    revision = serializers.IntegerField(min_value=0, max_value=MAX_REVISION)
    state = serializers.JSONField()


class VisualWorldRestore(RejectUnknownFields, serializers.Serializer):
    revision = serializers.IntegerField(min_value=0, max_value=MAX_REVISION)
    to = serializers.IntegerField(min_value=1, max_value=MAX_REVISION)


class VisualWorldViewSet(TenantGenericViewSet):
    model = Conversation
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN, Scope.CONTENT, Scope.PLAY)
    serializer_class = VisualWorldSerializer

    def _answer(self, conversation) -> Response:
        revision, state = world.world_of(conversation)
        rows = world.revisions(conversation)
        data = {"revision": revision, "state": state, "revisions": rows}
        return Response(VisualWorldSerializer(data).data)

    @extend_schema(responses=VisualWorldSerializer)
    def read(self, request, pk=None):
        """The visual world in force and its newest revisions."""
        return self._answer(self.get_object())

    @extend_schema(request=VisualWorldEdit, responses=VisualWorldSerializer)
    def edit(self, request, pk=None):
        """An operator's state over ``revision`` (compare-and-set)."""
        conversation = self.get_object()
        body = validated(VisualWorldEdit, request)
        world.commit(
            conversation, expected=body["revision"], state=body["state"], source="operator"
        )
        return self._answer(conversation)

    @extend_schema(request=VisualWorldRestore, responses=VisualWorldSerializer)
    def restore(self, request, pk=None):
        """Revision ``to``'s state in force again, over ``revision``."""
        conversation = self.get_object()
        body = validated(VisualWorldRestore, request)
        world.restore(conversation, expected=body["revision"], revision=body["to"])
        return self._answer(conversation)
