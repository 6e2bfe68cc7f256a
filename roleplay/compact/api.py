"""``/api/v1/conversations/{id}/checkpoints/``: the conversation's Compact checkpoints (seed
002) as an operator reads them (``roleplay.compact.selectors``), and the operator's
actions on the newest one (``roleplay.compact.services.edits``).

- ``GET .../checkpoints/`` and ``.../checkpoints/{version}/``: every version kept, newest
  first, and one of them;
- ``POST .../checkpoints/{version}/edit`` (``{summary, expected_version}``),
  ``.../regenerate`` and ``.../delete`` (``{expected_version}``): admin scope, each audited;
  409 ``checkpoint_version_conflict`` unless ``version`` is the newest active version and
  ``expected_version`` names it.

The reads are actions of the conversation viewset (the scope of conversations, like the
story); the actions are a view of their own so its admin scope is the view's.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.errors import not_found
from console.models import Scope
from console.schema import ERROR_SCHEMA
from console.serializers import RejectUnknownFields, validated
from console.viewsets import TenantGenericViewSet
from roleplay.compact import selectors as reads
from roleplay.compact.services import edits as compact_edits
from roleplay.models import Conversation

VERSION = OpenApiParameter("version", OpenApiTypes.INT, OpenApiParameter.PATH)
MAX_INT = reads.MAX_INT


class CheckpointSerializer(serializers.Serializer):
    version = serializers.IntegerField()
    chain = serializers.IntegerField(
        allow_null=True, help_text="The version this one extends (or replaces), if any."
    )
    status = serializers.CharField(help_text="`active` or `invalidated`.")
    reason = serializers.CharField(help_text="Why it was invalidated (empty while active).")
    summary = serializers.DictField(
        help_text='`{"format": "plain_text", "text"}` or `{"format": "structured_json", '
        '"canonical": [...], "interaction": [...], "open_threads": [...]}`.'
    )
    scenario = serializers.UUIDField(source="scenario_id")
    first_message_id = serializers.UUIDField()
    last_message_id = serializers.UUIDField()
    covered_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    audit = serializers.DictField(
        help_text="Who or what wrote it: the compactor and turn, or the operator "
        "(`edited_by`, `regenerated_by`)."
    )


class ExpectedVersionBody(RejectUnknownFields, serializers.Serializer):
    expected_version = serializers.IntegerField(
        min_value=1,
        max_value=MAX_INT,
        help_text="The newest version as the operator saw it (compare-and-set).",
    )


class EditBody(ExpectedVersionBody):
    summary = serializers.DictField(
        help_text="The new summary in the checkpoint's format: `{format?, text}` for "
        "`plain_text`, `{format?, canonical, interaction, open_threads}` (lists of strings) "
        "for `structured_json`; within the scenario's `compact.maxSummaryTokens` (422 "
        "`validation_error` naming the field)."
    )


UPSTREAM = OpenApiResponse(
    response={"$ref": f"#/components/schemas/{ERROR_SCHEMA}"},
    description="The compactor failed (the gateway's code, e.g. `model_timeout`) or "
    "answered no valid summary (`compact_summary_invalid`).",
)


class CheckpointActions:
    """Reads of the conversation viewset on its Compact checkpoints."""

    @extend_schema(responses=CheckpointSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="checkpoints")
    def checkpoints(self, request, pk=None):
        """Every version of the conversation's checkpoint, newest first."""
        conversation = self.get_object()
        page = self.paginate_queryset(reads.versions(conversation))
        return self.get_paginated_response(CheckpointSerializer(page, many=True).data)

    @extend_schema(parameters=[VERSION], responses=CheckpointSerializer)
    @action(detail=True, methods=["get"], url_path=r"checkpoints/(?P<version>[^/.]+)")
    def checkpoint(self, request, pk=None, version=None):
        """One version of the conversation's checkpoint."""
        row = reads.version(self.get_object(), version)
        if row is None:
            raise not_found("this conversation has no such checkpoint version")
        return Response(CheckpointSerializer(row).data)


class CheckpointEditViewSet(TenantGenericViewSet):
    """An operator's edit, regeneration or deletion of the newest checkpoint version."""

    model = Conversation
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN,)
    serializer_class = CheckpointSerializer

    def _row(self, version):
        row = reads.version(self.get_object(), version)
        if row is None:
            raise not_found("this conversation has no such checkpoint version")
        return row

    @extend_schema(parameters=[VERSION], request=EditBody, responses=CheckpointSerializer)
    def edit(self, request, pk=None, version=None):
        """A new version with the operator's summary (same covered messages; ``chain``: the
        edited version)."""
        row = self._row(version)
        body = validated(EditBody, request)
        saved = compact_edits.edit(row, body["summary"], body["expected_version"], **_who(request))
        return Response(CheckpointSerializer(saved).data)

    @extend_schema(
        parameters=[VERSION],
        request=ExpectedVersionBody,
        responses={200: CheckpointSerializer, 502: UPSTREAM},
    )
    def regenerate(self, request, pk=None, version=None):
        """A new version with the compactor's summary of the covered messages, asked again
        (409 ``checkpoint_history_changed`` when they are no longer all there; 422
        ``compact_not_configured`` without a compactor)."""
        row = self._row(version)
        body = validated(ExpectedVersionBody, request)
        saved = compact_edits.regenerate(row, body["expected_version"], **_who(request))
        return Response(CheckpointSerializer(saved).data)

    @extend_schema(
        parameters=[VERSION], request=ExpectedVersionBody, responses=CheckpointSerializer
    )
    def remove(self, request, pk=None, version=None):
        """Invalidate the version (reason ``deleted_by_operator``); the next turn reads the
        whole history and compacts it again when due."""
        row = self._row(version)
        body = validated(ExpectedVersionBody, request)
        removed = compact_edits.delete(row, body["expected_version"], **_who(request))
        return Response(CheckpointSerializer(removed).data)


def _who(request) -> dict:
    """Who acts: the console user, or the API token by name and prefix."""
    principal = request.user
    if principal.user is not None:
        by = principal.user.get_username()
    else:
        token = principal.token
        by = f"api token {token.name} ({token.prefix})" if token is not None else ""
    return {"by": by, "request": request, "user": principal.user}
