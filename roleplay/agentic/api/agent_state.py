"""``/api/v1/conversations/{id}/agent-state``: the conversation's Agent V2 state under the
scenario it runs (``roleplay.scenarios.selectors.scenario_for``), its revisions, and restoring one
(``roleplay.agentic.services.agent_state``). A conversation without a scenario has no state."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.response import Response

from console.serializers import RejectUnknownFields, validated
from roleplay.agentic.services import agent_state
from roleplay.errors import NotFound
from roleplay.models import AgentStateRevision
from roleplay.scenarios.selectors import scenario_for

MAX_REVISIONS = 50


class LedgerEntrySerializer(serializers.Serializer):
    type = serializers.CharField()
    key = serializers.CharField()
    status = serializers.CharField()
    payload = serializers.DictField()
    sourceTool = serializers.CharField(allow_null=True)  # noqa: N815 - the seed's names
    sourceTurn = serializers.IntegerField(allow_null=True)  # noqa: N815


class AgentStateSerializer(serializers.Serializer):
    scenario = serializers.UUIDField(allow_null=True)
    found = serializers.BooleanField()
    revision = serializers.IntegerField()
    sourceTurn = serializers.IntegerField(allow_null=True)  # noqa: N815 - the seed's names
    sourceMessageId = serializers.CharField(allow_null=True)  # noqa: N815
    historyRevision = serializers.IntegerField()  # noqa: N815
    state = serializers.CharField(allow_null=True)
    toolsCalled = serializers.ListField(child=serializers.CharField())  # noqa: N815
    ledger = LedgerEntrySerializer(many=True)


class StateRevisionSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    state = serializers.CharField()
    origin = serializers.CharField()
    toolsCalled = serializers.ListField(child=serializers.CharField(), source="tools_called")  # noqa: N815
    sourceTurn = serializers.IntegerField(source="source_turn")  # noqa: N815
    sourceMessageId = serializers.UUIDField(source="source_message_id", allow_null=True)  # noqa: N815
    historyRevision = serializers.IntegerField(source="history_revision")  # noqa: N815
    created_at = serializers.DateTimeField()


class StateRevisionListSerializer(serializers.Serializer):
    results = StateRevisionSerializer(many=True)


class RestoreBody(RejectUnknownFields, serializers.Serializer):
    revision = serializers.IntegerField(min_value=1, max_value=2**31 - 1)


class RestoredSerializer(serializers.Serializer):
    revision = serializers.IntegerField()


class AgentStateActions:
    """Actions of the conversation viewset on its Agent V2 state."""

    @extend_schema(responses=AgentStateSerializer)
    @action(detail=True, methods=["get"], url_path="agent-state")
    def agent_state(self, request, pk=None):
        """The state in force: ``{found, revision, sourceTurn, sourceMessageId,
        historyRevision, state, toolsCalled, ledger[]}`` and the ``scenario`` it is of."""
        conversation = self.get_object()
        scenario = scenario_for(conversation)
        if scenario is None:
            return Response({"scenario": None, **agent_state.EMPTY.as_read()})
        read = agent_state.read_state(conversation, scenario)
        return Response({"scenario": scenario.pk, **read.as_read()})

    @extend_schema(responses=StateRevisionListSerializer)
    @action(detail=True, methods=["get"], url_path="agent-state/revisions")
    def agent_state_revisions(self, request, pk=None):
        """Every revision of the state, newest first (at most 50)."""
        conversation = self.get_object()
        scenario = scenario_for(conversation)
        rows = AgentStateRevision.objects.none()
        if scenario is not None:
            rows = AgentStateRevision.objects.filter(
                tenant_id=conversation.tenant_id, conversation=conversation, scenario=scenario
            ).order_by("-revision")[:MAX_REVISIONS]
        return Response({"results": StateRevisionSerializer(rows, many=True).data})

    @extend_schema(request=RestoreBody, responses=RestoredSerializer)
    @action(detail=True, methods=["post"], url_path="agent-state/restore")
    def agent_state_restore(self, request, pk=None):
        """A new revision with the text of ``revision``, by compare-and-set on the state as
        read now (409 ``stale_write_rejected`` if it moved meanwhile)."""
        conversation = self.get_object()
        body = validated(RestoreBody, request)
        scenario = scenario_for(conversation)
        if scenario is None:
            raise NotFound(message="this conversation runs no scenario, so it has no state")
        head = agent_state.read_state(conversation, scenario).head
        revision = agent_state.restore(conversation, scenario, body["revision"], expected_head=head)
        return Response({"revision": revision})
