"""Declared workflows over REST (``docs/workflows.md``):

- ``GET /api/v1/conversations/{id}/workflow-runs/``: the conversation's workflow runs, newest
  first, paginated, each with its node traces (an action of the conversation viewset, so a
  player sees only their own conversations and a foreign one is a 404);
- ``GET /api/v1/workflow-capabilities/``: the registered capabilities a workflow node may
  name, each with its description and the JSON schema of its ``input``.

A scenario's ``workflow`` itself is a field of ``/api/v1/scenarios/``.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response
from rest_framework.views import APIView

from console.body_limit import BodyLimit
from console.models import Scope
from roleplay.workflows import registry
from roleplay.workflows.selectors import runs_of


class WorkflowNodeTraceSerializer(serializers.Serializer):
    node_id = serializers.CharField()
    capability = serializers.CharField()
    status = serializers.CharField(help_text="`succeeded`, `failed`, `blocked` or `not_run`.")
    started_ms = serializers.FloatField(allow_null=True)
    ended_ms = serializers.FloatField(allow_null=True)
    output_bytes = serializers.IntegerField()
    error = serializers.DictField(allow_null=True, required=False)


class WorkflowRunSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    turn_id = serializers.UUIDField(allow_null=True)
    scenario_id = serializers.UUIDField(allow_null=True)
    status = serializers.CharField(help_text="`succeeded` or `failed`.")
    nodes = WorkflowNodeTraceSerializer(many=True)
    error = serializers.DictField(
        allow_null=True, help_text="`{code, message, node}` of a failed run."
    )
    placed = serializers.DictField(
        help_text="Where `foundation_context` and `turn_context` were placed (null: empty)."
    )
    duration_ms = serializers.FloatField()
    created_at = serializers.DateTimeField()


class WorkflowCapabilitySerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    input_schema = serializers.DictField(help_text="The JSON schema of a node's `input`.")


class WorkflowCapabilityListSerializer(serializers.Serializer):
    results = WorkflowCapabilitySerializer(many=True)


class WorkflowRunActions:
    """The conversation viewset's workflow runs."""

    @extend_schema(responses=WorkflowRunSerializer(many=True))
    @action(detail=True, methods=["get"], url_path="workflow-runs")
    def workflow_runs(self, request, pk=None):
        """The conversation's workflow runs, newest first, with their node traces."""
        conversation = self.get_object()
        page = self.paginate_queryset(runs_of(request.tenant, conversation))
        return self.get_paginated_response(WorkflowRunSerializer(page, many=True).data)


class WorkflowCapabilitiesView(BodyLimit, APIView):
    """The registered capabilities, by name."""

    required_scope = Scope.CONTENT
    read_scopes = (Scope.CONTENT, Scope.ADMIN)

    @extend_schema(responses=WorkflowCapabilityListSerializer)
    def get(self, request):
        rows = [
            {"name": e.name, "description": e.description, "input_schema": dict(e.input_schema)}
            for e in registry.entries()
        ]
        return Response({"results": rows})
