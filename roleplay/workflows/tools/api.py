"""The REST doors of the workflow tools: ``/api/v1/workflow-tools/http/`` and
``/api/v1/workflow-tools/mcp/`` (CRUD; writes need the admin scope, reads admin or content),
and ``POST .../mcp/{id}/test`` (list the server's tools). Thin: the serializers read the
fields, the services hold the rules (``roleplay.workflows.tools.services``)."""

from __future__ import annotations

import dataclasses

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.models import Scope
from console.serializers import NoBody, StrictCharField, StrictSerializer, validated
from console.viewsets import ServiceWrites
from roleplay.workflows.engine.tool_inputs import MAX_ALLOWED_TOOLS
from roleplay.workflows.tool_models import HttpToolEndpoint, McpServer
from roleplay.workflows.tools import services
from roleplay.workflows.tools.calls import key_status
from roleplay.workflows.tools.server_test import run_server_test


class _KeyStatus(StrictSerializer):
    api_key_configured = serializers.SerializerMethodField()

    def get_api_key_configured(self, obj) -> bool:
        return key_status(obj.api_key_env) == "set"


class HttpToolEndpointSerializer(_KeyStatus):
    """An HTTP endpoint a workflow node may call: ``url_prefix`` (``http(s)``, no
    credentials, query or fragment) plus the node's path, with ``method``. ``api_key_env``
    names an environment variable (never the key); the key goes in ``api_key_header``, or
    ``Authorization: Bearer`` when that is blank."""

    class Meta:
        model = HttpToolEndpoint
        fields = ["id", *services.HTTP_FIELDS, "api_key_configured", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]


class McpServerSerializer(_KeyStatus):
    """An MCP server (streamable HTTP ``url``) and the only tools of it a workflow node may
    call (``allowed_tools``)."""

    allowed_tools = serializers.ListField(
        child=StrictCharField(max_length=128), max_length=MAX_ALLOWED_TOOLS, required=False
    )

    class Meta:
        model = McpServer
        fields = ["id", *services.MCP_FIELDS, "api_key_configured", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]


class McpToolSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    allowed = serializers.BooleanField()


class McpTestSerializer(serializers.Serializer):
    """The test of an MCP server: ``ok`` with the tools it lists (``allowed``: a node may
    call it), or the failure's code (``forbidden_url``, ``mcp_unavailable``, ``timeout``,
    ``key_missing``) and message; ``warnings`` name allowed tools the server does not offer
    and a key variable that is not set."""

    ok = serializers.BooleanField()
    latency_ms = serializers.FloatField()
    tools = McpToolSerializer(many=True)
    error_code = serializers.CharField(allow_null=True)
    error_message = serializers.CharField(allow_null=True)
    warnings = serializers.ListField(child=serializers.CharField())


class HttpToolEndpointViewSet(ServiceWrites):
    model = HttpToolEndpoint
    serializer_class = HttpToolEndpointSerializer
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN, Scope.CONTENT)
    ordering = ("name",)
    create_service = services.create_http_endpoint
    update_service = services.update_http_endpoint
    delete_service = services.delete_http_endpoint


class McpServerViewSet(ServiceWrites):
    model = McpServer
    serializer_class = McpServerSerializer
    required_scope = Scope.ADMIN
    read_scopes = (Scope.ADMIN, Scope.CONTENT)
    ordering = ("name",)
    create_service = services.create_mcp_server
    update_service = services.update_mcp_server
    delete_service = services.delete_mcp_server

    @extend_schema(request=NoBody, responses=McpTestSerializer)
    @action(detail=True, methods=["post"])
    def test(self, request, pk=None):
        server = self.get_object()
        validated(NoBody, request)
        result = run_server_test(server)
        return Response(McpTestSerializer(dataclasses.asdict(result)).data)
